#pragma once

#include <QObject>
#include <QString>

#include <memory>

namespace AgentConsole {

class SecretStore;

// The primary provider's API key in the keychain (service "agent-console"), as the settings
// dialog edits it: whether one is stored, store a new one, forget it. The key itself is never
// handed back, logged or shown. Each call answers with its signal, later, exactly once.
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
    // `problem`: the keychain's own words when it could not be asked (Unavailable).
    void checked(AgentConsole::StoredApiKey::State state, const QString &problem);
    // An empty problem: done.
    void stored(const QString &problem);
    void forgotten(const QString &problem);

private:
    std::shared_ptr<SecretStore> m_store;
};

} // namespace AgentConsole
