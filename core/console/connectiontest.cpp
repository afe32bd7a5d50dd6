#include "connectiontest.h"

#include "../llm/apikeysource.h"
#include "../llm/modelerror.h"
#include "../llm/openaicompatiblemodel.h"
#include "../llm/secretstore.h"
#include "../telemetry/logging.h"

#include <QTimer>
#include <QUrl>

namespace AgentConsole {

namespace {

Language languageOf(bool chinese)
{
    return chinese ? Language::Chinese : Language::English;
}

} // namespace

ConnectionTest::ConnectionTest(std::shared_ptr<SecretStore> secrets, QObject *parent)
    : QObject(parent)
    , m_secrets(std::move(secrets))
    , m_deadline(new QTimer(this))
{
    m_deadline->setSingleShot(true);
    m_deadline->setTimerType(Qt::PreciseTimer);
    connect(m_deadline, &QTimer::timeout, this, [this] {
        // The provider's own timeouts come first; this only bounds the whole test (a slow
        // keychain included).
        qCWarning(lcAgent) << "connection test: no answer within the test's deadline";
        finish({false, ModelError::Timeout,
                ModelError::message(ModelError::Timeout, languageOf(m_chinese)), m_keyFrom});
    });
}

ConnectionTest::~ConnectionTest()
{
    if (m_reply)
        m_reply->disconnect(this);
}

bool ConnectionTest::start(const ModelOptions &model, const QString &typedKey)
{
    if (m_running)
        return false;
    m_running = true;
    m_options = model;
    m_keyFrom.clear();
    // Twice the provider's bound (headers, then the body), plus a margin for the keychain.
    m_deadline->start(2 * m_timeoutMs + 1000);
    const QString fromVariable = ApiKeySource::fromEnvironment(model.apiKeyEnv);
    if (!fromVariable.isEmpty()) {
        send(fromVariable, QStringLiteral("variable"));
    } else if (!typedKey.trimmed().isEmpty()) {
        send(typedKey.trimmed(), QStringLiteral("typed"));
    } else {
        m_keys = std::make_unique<ApiKeySource>(m_secrets);
        m_keys->setVariable(model.apiKeyEnv);
        connect(m_keys.get(), &ApiKeySource::finished, this,
                [this](const QString &key, ApiKeySource::Origin origin) {
            m_keys.release()->deleteLater(); // its signal is still being delivered
            send(key, origin == ApiKeySource::Origin::None ? QStringLiteral("none")
                                                           : QStringLiteral("keychain"));
        });
        m_keys->lookup();
    }
    return true;
}

void ConnectionTest::send(const QString &key, const QString &keyFrom)
{
    m_keyFrom = keyFrom;
    OpenAiConfig config;
    config.baseUrl = QUrl(m_options.baseUrl);
    config.model = m_options.model;
    config.apiKey = key;
    config.extraHeaders = m_options.extraHeaders;
    config.stream = false;  // one small body
    config.maxAttempts = 1; // a test reports what happened, it does not retry
    config.connectTimeoutMs = m_timeoutMs;
    config.idleTimeoutMs = m_timeoutMs;
    m_model = std::make_unique<OpenAiCompatibleModel>(config);
    ChatRequest request;
    request.messages.append(ChatMessage::user(QStringLiteral("ping")));
    request.maxTokens = 1;
    m_reply = m_model->complete(request);
    m_reply->setParent(this);
    connect(m_reply, &ChatReply::finished, this, [this] {
        const ChatResponse response = m_reply->response();
        if (!response.isError()) {
            finish({true, {},
                    localized(languageOf(m_chinese), "%1 answered.", "%1 已响应。")
                        .arg(response.model.isEmpty() ? m_options.model : response.model),
                    m_keyFrom});
            return;
        }
        finish({false, response.errorCode,
                ModelError::message(response.errorCode, languageOf(m_chinese)), m_keyFrom});
    });
}

void ConnectionTest::cancel()
{
    if (m_running)
        finish({false, ModelError::Cancelled,
                ModelError::message(ModelError::Cancelled, languageOf(m_chinese)), m_keyFrom});
}

void ConnectionTest::finish(ConnectionTestResult result)
{
    if (!m_running)
        return;
    m_running = false;
    m_deadline->stop();
    m_keys.reset();
    if (m_reply) {
        ChatReply *reply = std::exchange(m_reply, nullptr);
        reply->disconnect(this);
        if (!reply->isFinished())
            reply->abort();
        reply->deleteLater();
    }
    // The model goes after its reply (deleted on a later turn, like the reply).
    if (m_model)
        m_model.release()->deleteLater();
    qCInfo(lcAgent).noquote() << "connection test:"
                              << (result.connected ? QStringLiteral("connected") : result.code)
                              << "key from" << result.keyFrom; // never the key
    Q_EMIT finished(result);
}

} // namespace AgentConsole
