#pragma once

#include <QObject>
#include <QString>

namespace AgentConsole {

// Where a model provider's API key comes from: an environment variable, else the OS keychain
// (service "agent-console") when the build has QtKeychain. Never from a file in the
// repository, and the key itself never goes into a log. The keychain is asked asynchronously
// (it may show a prompt or talk to D-Bus), so the answer always comes as a signal.
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

    explicit ApiKeySource(QObject *parent = nullptr);

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

    QString m_variable = defaultVariable();
    QString m_keychainKey = QStringLiteral("default");
};

} // namespace AgentConsole
