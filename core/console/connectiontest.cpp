#include "connectiontest.h"
#include "connectionsettings.h"

#include "../http/networkfailure.h"
#include "../http/urljoin.h"
#include "../llm/apikeysource.h"
#include "../llm/modelerror.h"
#include "../llm/openaicompatiblemodel.h"
#include "../llm/secretstore.h"
#include "../telemetry/logging.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>
#include <QUrl>

namespace AgentConsole {

namespace {

Language languageOf(bool chinese)
{
    return chinese ? Language::Chinese : Language::English;
}

// What a model list may take: its body, and the names a sentence shows of it.
constexpr qint64 kMaxListBytes = 1024 * 1024;
constexpr int kNamesShown = 5;
constexpr int kMaxNameChars = 80;

// A model's name as a sentence shows it: printable, bounded (it came from the server).
QString shownName(const QString &name)
{
    QString shown;
    for (const QChar c : name.left(kMaxNameChars))
        shown.append(c.isPrint() ? c : QChar(u'?'));
    return name.size() > kMaxNameChars ? shown + QChar(0x2026) : shown;
}

// The ids of an OpenAI /models answer ({"data": [{"id": ...}]}); nothing when it is not one.
std::optional<QStringList> modelIdsOf(const QByteArray &body)
{
    const QJsonDocument document = QJsonDocument::fromJson(body);
    const QJsonValue data = document.object().value(QLatin1String("data"));
    if (!data.isArray())
        return std::nullopt;
    QStringList ids;
    for (const QJsonValue &entry : data.toArray()) {
        const QString id = entry.toObject().value(QLatin1String("id")).toString();
        if (!id.isEmpty())
            ids.append(id);
    }
    return ids;
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
        finish(found(ConnectionTestResult::Finding::TimedOut, ModelError::Timeout,
                     ModelError::message(ModelError::Timeout, languageOf(m_chinese))));
    });
}

ConnectionTest::~ConnectionTest()
{
    if (m_listing)
        m_listing->disconnect(this);
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
    // The list's bound, then twice the provider's (headers, then the body), plus a margin
    // for the keychain.
    m_deadline->start(3 * m_timeoutMs + 1000);
    const QString fromVariable = ApiKeySource::fromEnvironment(model.apiKeyEnv);
    if (!fromVariable.isEmpty()) {
        listModels(fromVariable, QStringLiteral("variable"));
    } else if (!typedKey.trimmed().isEmpty()) {
        listModels(typedKey.trimmed(), QStringLiteral("typed"));
    } else {
        m_keys = std::make_unique<ApiKeySource>(m_secrets);
        m_keys->setVariable(model.apiKeyEnv);
        connect(m_keys.get(), &ApiKeySource::finished, this,
                [this](const QString &key, ApiKeySource::Origin origin) {
                    m_keys.release()->deleteLater(); // its signal is still being delivered
                    listModels(key,
                               origin == ApiKeySource::Origin::None ? QStringLiteral("none")
                                                                    : QStringLiteral("keychain"));
                });
        m_keys->lookup();
    }
    return true;
}

QString ConnectionTest::address() const
{
    const QUrl url(m_options.baseUrl);
    const int port = url.port(url.scheme() == QLatin1String("https") ? 443 : 80);
    const QString host = url.host().contains(QLatin1Char(':'))
        ? QLatin1Char('[') + url.host() + QLatin1Char(']') // an IPv6 address
        : url.host();
    return host + QLatin1Char(':') + QString::number(port);
}

ConnectionTestResult ConnectionTest::found(ConnectionTestResult::Finding finding,
                                           const QString &code, const QString &sentence) const
{
    ConnectionTestResult result;
    result.connected = finding == ConnectionTestResult::Finding::Connected;
    result.code = code;
    result.sentence = sentence;
    result.keyFrom = m_keyFrom;
    result.finding = finding;
    return result;
}

void ConnectionTest::listModels(const QString &key, const QString &keyFrom)
{
    m_keyFrom = keyFrom;
    m_key = key;
    m_listStatus = 0;
    m_listed.reset();
    if (!m_network)
        m_network = new QNetworkAccessManager(this);
    QNetworkRequest request(Http::joinPath(QUrl(m_options.baseUrl), QStringLiteral("/models")));
    request.setRawHeader("Accept", "application/json");
    if (!key.isEmpty())
        request.setRawHeader("Authorization", "Bearer " + key.toUtf8());
    for (const auto &[name, value] : m_options.extraHeaders)
        request.setRawHeader(name, value);
    // A redirect is never followed: the key would go to another origin (as for a turn).
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setTransferTimeout(m_timeoutMs);
    m_listing = m_network->get(request);
    connect(m_listing, &QNetworkReply::downloadProgress, this, [this](qint64 received, qint64) {
        if (received > kMaxListBytes)
            m_listing->abort(); // a list this long is no list: the completion decides
    });
    connect(m_listing, &QNetworkReply::finished, this, &ConnectionTest::onModelsListed);
}

void ConnectionTest::onModelsListed()
{
    using Finding = ConnectionTestResult::Finding;
    QNetworkReply *reply = std::exchange(m_listing, nullptr);
    reply->deleteLater();
    const Language language = languageOf(m_chinese);
    const int error = reply->error();
    m_listStatus = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (Http::failedBelowHttp(error, m_listStatus)) {
        // What the system said is for the log; staff read what it means.
        qCWarning(lcAgent).noquote()
            << "connection test: GET /models to" << address()
            << "failed:" << Http::networkErrorName(error) << reply->errorString();
        switch (QNetworkReply::NetworkError(error)) {
        case QNetworkReply::ConnectionRefusedError: {
            const QString server = localServerName(m_options.baseUrl);
            return finish(
                found(Finding::NothingListening, ModelError::Unavailable,
                      server.isEmpty()
                          ? localized(language,
                                      "Nothing is listening at %1. Is the model server "
                                      "running?",
                                      "%1 上没有服务在监听。模型服务器是否已启动？")
                                .arg(address())
                          : localized(language, "Nothing is listening at %1. Is %2 running?",
                                      "%1 上没有服务在监听。%2 是否已启动？")
                                .arg(address(), server)));
        }
        case QNetworkReply::HostNotFoundError:
            return finish(found(
                Finding::HostNotFound, ModelError::Unavailable,
                localized(language, "No server called %1 could be found. Check the base URL.",
                          "找不到名为 %1 的服务器。请检查基础 URL。")
                    .arg(QUrl(m_options.baseUrl).host())));
        case QNetworkReply::SslHandshakeFailedError:
        case QNetworkReply::UnknownNetworkError: // TLS internals
            if (QUrl(m_options.baseUrl).scheme() == QLatin1String("https"))
                return finish(
                    found(Finding::TlsFailed, ModelError::Unavailable,
                          localized(language,
                                    "The secure connection to %1 failed: its certificate "
                                    "is not trusted, or it does not speak https (a local "
                                    "server usually wants http://).",
                                    "与 %1 的安全连接失败：其证书不受信任，或它不支持 https"
                                    "（本地服务器通常使用 http://）。")
                              .arg(address())));
            break;
        case QNetworkReply::OperationCanceledError: // the transfer timeout, or a list too long
        case QNetworkReply::TimeoutError:
            if (reply->bytesAvailable() == 0 && m_listStatus == 0)
                return finish(found(Finding::TimedOut, ModelError::Timeout,
                                    localized(language, "%1 did not answer within %2 s.",
                                              "%1 在 %2 秒内没有响应。")
                                        .arg(address())
                                        .arg(m_timeoutMs / 1000.0)));
            break;
        default:
            break;
        }
        // Anything else below HTTP: the completion is tried and worded by its row.
        complete();
        return;
    }
    if (m_listStatus == 401 || m_listStatus == 403) {
        qCWarning(lcAgent).noquote() << "connection test: GET /models to" << address()
                                     << "answered" << m_listStatus << "to a key from" << m_keyFrom;
        return finish(
            m_key.isEmpty()
                ? found(Finding::NoKey, ModelError::AuthFailed,
                        localized(language, "The server wants an API key, and none is set.",
                                  "服务器需要 API 密钥，但尚未设置。"))
                : found(
                    Finding::KeyRefused, ModelError::AuthFailed,
                    localized(language,
                              "The server refused the API key (HTTP %1). Check "
                              "the key, or type a new one.",
                              "服务器拒绝了该 API 密钥（HTTP %1）。请检查密钥，或输入新的密钥。")
                        .arg(m_listStatus)));
    }
    if (m_listStatus >= 200 && m_listStatus < 300)
        m_listed = modelIdsOf(reply->readAll());
    qCInfo(lcAgent).noquote() << "connection test: GET /models answered" << m_listStatus
                              << (m_listed
                                      ? QStringLiteral("with %1 model(s)").arg(m_listed->size())
                                      : QStringLiteral("without a model list"));
    complete();
}

void ConnectionTest::complete()
{
    OpenAiConfig config;
    config.baseUrl = QUrl(m_options.baseUrl);
    config.model = m_options.model;
    config.apiKey = m_key;
    config.extraHeaders = m_options.extraHeaders;
    config.stream = false; // one small body
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
        using Finding = ConnectionTestResult::Finding;
        const Language language = languageOf(m_chinese);
        const ChatResponse response = m_reply->response();
        if (!response.isError()) {
            finish(found(Finding::Connected, {},
                         localized(language, "%1 answered.", "%1 已响应。")
                             .arg(response.model.isEmpty() ? m_options.model
                                                           : shownName(response.model))));
            return;
        }
        if (response.errorCode == ModelError::BadRequest && m_listed
            && !m_listed->contains(m_options.model)) {
            QStringList names;
            for (const QString &name : m_listed->mid(0, kNamesShown))
                names.append(shownName(name));
            if (m_listed->size() > kNamesShown)
                names.append(QString(QChar(0x2026)));
            finish(found(Finding::ModelNotListed, response.errorCode,
                         names.isEmpty()
                             ? localized(language,
                                         "The server does not offer the model \"%1\" and "
                                         "lists none.",
                                         "服务器不提供模型“%1”，也没有列出任何模型。")
                                   .arg(shownName(m_options.model))
                             : localized(language,
                                         "The server does not offer the model \"%1\". It "
                                         "offers: %2.",
                                         "服务器不提供模型“%1”。它提供的模型：%2。")
                                   .arg(shownName(m_options.model),
                                        names.join(localized(language, ", ", "、")))));
            return;
        }
        if (response.errorCode == ModelError::BadRequest && m_listStatus == 404) {
            const QUrl url(m_options.baseUrl);
            finish(found(Finding::WrongPath, response.errorCode,
                         localized(language,
                                   "Nothing answers at the path %1 on %2 (HTTP 404). Check "
                                   "the base URL: OpenAI-compatible servers usually end it "
                                   "in /v1.",
                                   "%2 上的路径 %1 没有响应（HTTP 404）。请检查基础 URL："
                                   "兼容 OpenAI 的服务器通常以 /v1 结尾。")
                             .arg(url.path().isEmpty() ? QStringLiteral("/") : url.path(),
                                  address())));
            return;
        }
        if (response.errorCode == ModelError::AuthFailed)
            return finish(found(m_key.isEmpty() ? Finding::NoKey : Finding::KeyRefused,
                                response.errorCode,
                                ModelError::message(response.errorCode, language)));
        finish(
            found(response.errorCode == ModelError::Timeout ? Finding::TimedOut : Finding::Other,
                  response.errorCode, ModelError::message(response.errorCode, language)));
    });
}

void ConnectionTest::cancel()
{
    if (m_running)
        finish(found(ConnectionTestResult::Finding::Other, ModelError::Cancelled,
                     ModelError::message(ModelError::Cancelled, languageOf(m_chinese))));
}

void ConnectionTest::finish(ConnectionTestResult result)
{
    if (!m_running)
        return;
    m_running = false;
    m_deadline->stop();
    m_keys.reset();
    m_key.clear();
    if (m_listing) {
        QNetworkReply *listing = std::exchange(m_listing, nullptr);
        listing->disconnect(this);
        listing->abort();
        listing->deleteLater();
    }
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
