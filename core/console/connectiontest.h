#pragma once

#include "runtimeoptions.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

QT_BEGIN_NAMESPACE
class QNetworkAccessManager;
class QNetworkReply;
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
    Q_GADGET

public:
    // What the test found, most specific first; Other: a model failure worded by its
    // ModelError row.
    enum class Finding {
        Connected,
        NothingListening, // the connection was refused: no server at that address and port
        HostNotFound, // the name does not resolve
        TlsFailed, // the https handshake failed (an untrusted certificate, plain HTTP)
        NoKey, // 401/403 and no key was sent
        KeyRefused, // 401/403 to the key sent
        WrongPath, // 404 where the OpenAI API should be: the base URL's path is wrong
        ModelNotListed, // the request was refused and /models does not list the model
        TimedOut,
        Other,
    };
    Q_ENUM(Finding)

    bool connected = false;
    QString code; // a ModelError wire name (MODEL_AUTH_FAILED, ...); empty when connected
    QString sentence; // what was found, in staff words; never a system's own error text
    QString keyFrom; // where the key came from: "variable", "typed", "keychain" or "none"
    Finding finding = Finding::Other;
};

// The settings dialog's "Test connection", two cheap requests to an OpenAI-compatible
// provider, each bounded by a timeout, on the thread's event loop (nothing waits):
// GET {base}/models first, which tells what is wrong below the API (nothing listening, a name
// that does not resolve, TLS, a refused key) and which models the server offers; then a
// one-token completion (not streamed, one attempt, no retry), classified by the provider
// itself as a real turn's would be. A refused completion is explained by the list when it
// lacks the model, and by the first 404 when the path is wrong. Staff read what was found in
// their words (ConnectionTestResult::sentence); what the system said goes to the local log.
// The key is the one a turn would use: its variable when set, else a key typed in the dialog
// and not stored yet, else the keychain's. The key never leaves this object but in the
// Authorization header.
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
    void listModels(const QString &key, const QString &keyFrom);
    void onModelsListed();
    void complete();
    void finish(ConnectionTestResult result);
    ConnectionTestResult found(ConnectionTestResult::Finding finding, const QString &code,
                               const QString &sentence) const;
    // "127.0.0.1:11434": where the base URL points, its port said even when it is the default.
    QString address() const;

    std::shared_ptr<SecretStore> m_secrets;
    int m_timeoutMs = defaultTimeoutMs;
    bool m_chinese = false;
    bool m_running = false;
    ModelOptions m_options;
    QString m_keyFrom;
    QString m_key;
    std::unique_ptr<ApiKeySource> m_keys;
    QNetworkAccessManager *m_network = nullptr; // made at the first test
    QNetworkReply *m_listing = nullptr; // GET /models, while it runs
    int m_listStatus = 0; // its HTTP status (0: none came)
    std::optional<QStringList> m_listed; // the models it named, when it could be read
    std::unique_ptr<OpenAiCompatibleModel> m_model;
    ChatReply *m_reply = nullptr; // a child of this test
    QTimer *m_deadline = nullptr;
};

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::ConnectionTestResult)
