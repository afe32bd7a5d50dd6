#pragma once

#include <QObject>
#include <QString>

#include <memory>

namespace AgentConsole {

class SecretStore;

// Where a model provider's API key comes from: an environment variable, else the keychain (a
// SecretStore: the OS keychain, service "agent-console", unless another store is given). Never
// from a file in the repository, and the key itself never goes into a log. The keychain is
// asked asynchronously (it may show a prompt or talk to D-Bus), so the answer always comes as
// a signal.
class ApiKeySource final : public QObject
{
    Q_OBJECT

public:
    enum class Origin { None, Environment, Keychain };
    Q_ENUM(Origin)

    static QString defaultVariable() { return QStringLiteral("AGENT_CONSOLE_API_KEY"); }
    static QString keychainService() { return QStringLiteral("agent-console"); }
    static bool hasKeychain();

    // The value of `variable`, trimmed; empty when it is unset.
    static QString fromEnvironment(const QString &variable = defaultVariable());

    // The keychain entry of the primary provider's key (within keychainService()).
    static QString primaryKeychainKey() { return QStringLiteral("default"); }

    // A null store means the OS keychain.
    explicit ApiKeySource(std::shared_ptr<SecretStore> store = {}, QObject *parent = nullptr);
    ~ApiKeySource() override;

    void setVariable(const QString &variable) { m_variable = variable; }
    QString variable() const { return m_variable; }
    // The keychain entry's key within the service, e.g. the provider preset's name.
    void setKeychainKey(const QString &key) { m_keychainKey = key; }
    QString keychainKey() const { return m_keychainKey; }

    // Looks the key up; finished is emitted exactly once per call, on a later event-loop turn.
    void lookup();

Q_SIGNALS:
    void finished(const QString &key, AgentConsole::ApiKeySource::Origin origin);

private:
    void lookupKeychain();

    std::shared_ptr<SecretStore> m_store;
    QString m_variable = defaultVariable();
    QString m_keychainKey = primaryKeychainKey();
};

} // namespace AgentConsole
