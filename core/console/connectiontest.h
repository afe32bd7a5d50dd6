#pragma once

#include "runtimeoptions.h"

#include <QObject>
#include <QString>

#include <memory>

QT_BEGIN_NAMESPACE
class QTimer;
QT_END_NAMESPACE

namespace AgentConsole {

class ApiKeySource;
class ChatReply;
class OpenAiCompatibleModel;
class SecretStore;

// What one connection test came to, in staff words.
struct ConnectionTestResult
{
    bool connected = false;
    QString code;     // a ModelError wire name (MODEL_AUTH_FAILED, ...); empty when connected
    QString sentence; // the code's row sentence, or who answered
    QString keyFrom;  // where the key came from: "variable", "typed", "keychain" or "none"
};

// The settings dialog's "Test connection": one cheap request to an OpenAI-compatible provider
// (a one-token completion, not streamed, one attempt, no retry), bounded by a timeout, on the
// thread's event loop (nothing waits). The failure is classified by the provider itself, as a
// real turn's would be, and reported with the row of its ModelError::Code. The key is the one
// a turn would use: its variable when set, else a key typed in the dialog and not stored yet,
// else the keychain's. The key never leaves this object but in the Authorization header.
class ConnectionTest final : public QObject
{
    Q_OBJECT

public:
    static constexpr int defaultTimeoutMs = 10000;

    explicit ConnectionTest(std::shared_ptr<SecretStore> secrets, QObject *parent = nullptr);
    ~ConnectionTest() override;

    void setTimeoutMs(int ms) { m_timeoutMs = ms; }
    // The result's sentence in Simplified Chinese rather than English (the window's language).
    void setSentencesInChinese(bool chinese) { m_chinese = chinese; }
    // finished() follows exactly once per start, later; a start while one runs is ignored
    // (false). The model options must be an OpenAI-compatible provider's.
    bool start(const ModelOptions &model, const QString &typedKey = {});
    bool isRunning() const { return m_running; }
    void cancel();

Q_SIGNALS:
    void finished(const AgentConsole::ConnectionTestResult &result);

private:
    void send(const QString &key, const QString &keyFrom);
    void finish(ConnectionTestResult result);

    std::shared_ptr<SecretStore> m_secrets;
    int m_timeoutMs = defaultTimeoutMs;
    bool m_chinese = false;
    bool m_running = false;
    ModelOptions m_options;
    QString m_keyFrom;
    std::unique_ptr<ApiKeySource> m_keys;
    std::unique_ptr<OpenAiCompatibleModel> m_model;
    ChatReply *m_reply = nullptr; // a child of this test
    QTimer *m_deadline = nullptr;
};

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::ConnectionTestResult)
