#pragma once

#include <QObject>
#include <QString>

#include <memory>

namespace AgentConsole {

class SecretStore;

// The primary provider's API key in the keychain (service "agent-console"), as the settings
// dialog edits it: whether one is stored, store a new one, forget it. The key itself is never
// handed back, logged or shown. Each call answers with its signal, later, exactly once. Why
// the keychain failed (its own words, often a D-Bus or child-process message) goes to the
// local log only: the signals say that it failed, staff's words say what that means.
class StoredApiKey final : public QObject
{
    Q_OBJECT

public:
    enum class State { Stored, NotStored, Unavailable };
    Q_ENUM(State)

    explicit StoredApiKey(std::shared_ptr<SecretStore> store, QObject *parent = nullptr);
    ~StoredApiKey() override;

    void check();
    void store(const QString &key);
    void forget();

Q_SIGNALS:
    void checked(AgentConsole::StoredApiKey::State state);
    void stored(bool done);
    void forgotten(bool done);

private:
    std::shared_ptr<SecretStore> m_store;
};

} // namespace AgentConsole
