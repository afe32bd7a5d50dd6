#pragma once

#include <QString>

#include <functional>

QT_BEGIN_NAMESPACE
class QObject;
QT_END_NAMESPACE

namespace AgentConsole::OAuth {

// Where grants are kept between runs: the OS keychain in the console (the runtime adapts
// its SecretStore), memory in tests. Asynchronous like a keychain: `done` runs once, later,
// on the caller's thread, and not at all once `context` is gone.
class GrantStore
{
public:
    struct Answer
    {
        bool ok = false; // false: the store failed (locked, no Secret Service)
        bool found = false;
        QString value; // the stored JSON; never logged
        QString problem; // the store's own words on a failure, for the log
    };
    using Done = std::function<void(const Answer &)>;

    virtual ~GrantStore() = default;
    virtual void read(const QString &key, QObject *context, Done done) = 0;
    virtual void write(const QString &key, const QString &value, QObject *context, Done done) = 0;
    virtual void remove(const QString &key, QObject *context, Done done) = 0;
};

} // namespace AgentConsole::OAuth
