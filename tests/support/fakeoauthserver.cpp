#include "fakeoauthserver.h"

#include <QCryptographicHash>
#include <QHttpServer>
#include <QHttpServerRequest>
#include <QHttpServerResponse>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QUrlQuery>

namespace AgentConsole::Testing {

namespace {

using Status = QHttpServerResponse::StatusCode;

const QString kScope = QStringLiteral("mcp:read");

QJsonObject rpcResult(const QJsonValue &id, const QJsonObject &result)
{
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", result}};
}

QString formValue(const QUrlQuery &form, const char *key)
{
    return form.queryItemValue(QLatin1String(key), QUrl::FullyDecoded);
}

} // namespace

FakeOAuthServer::FakeOAuthServer(QObject *parent)
    : QObject(parent)
    , m_http(std::make_unique<QHttpServer>())
{
    m_http->route("/mcp", [this](const QHttpServerRequest &r) { return mcp(r); });
    m_http->route("/.well-known/oauth-protected-resource/mcp",
                  [this](const QHttpServerRequest &r) { return resourceMetadata(r); });
    m_http->route("/.well-known/oauth-protected-resource",
                  [this](const QHttpServerRequest &r) { return resourceMetadata(r); });
    m_http->route("/.well-known/oauth-authorization-server",
                  [this](const QHttpServerRequest &r) { return serverMetadata(r); });
    m_http->route("/register", [this](const QHttpServerRequest &r) { return registration(r); });
    m_http->route("/authorize",
                  [this](const QHttpServerRequest &r) { return authorization(r); });
    m_http->route("/token", [this](const QHttpServerRequest &r) { return token(r); });
}

FakeOAuthServer::~FakeOAuthServer() = default;

bool FakeOAuthServer::listen()
{
    m_port = m_http->listen(QHostAddress::LocalHost, 0);
    return m_port != 0;
}

QUrl FakeOAuthServer::origin() const
{
    return QUrl(QStringLiteral("http://127.0.0.1:%1").arg(m_port));
}

QUrl FakeOAuthServer::mcpUrl() const
{
    return QUrl(origin().toString() + QStringLiteral("/mcp"));
}

int FakeOAuthServer::count(const QString &path) const
{
    return int(std::count_if(m_seen.cbegin(), m_seen.cend(),
                             [&path](const Seen &seen) { return seen.path == path; }));
}

int FakeOAuthServer::rpcCount(const QString &method) const
{
    return int(std::count_if(m_seen.cbegin(), m_seen.cend(),
                             [&method](const Seen &seen) { return seen.rpcMethod == method; }));
}

QString FakeOAuthServer::secret(const char *prefix)
{
    // Long and random: a match in a log cannot be a coincidence, and no two runs share one.
    const QString value = QStringLiteral("%1-%2-%3%4")
                              .arg(QLatin1String(prefix))
                              .arg(++m_serial)
                              .arg(QRandomGenerator::global()->generate64(), 16, 16,
                                   QLatin1Char('0'))
                              .arg(QRandomGenerator::global()->generate64(), 16, 16,
                                   QLatin1Char('0'));
    m_secrets.append(value);
    return value;
}

QString FakeOAuthServer::issueToken(QString *refreshToken)
{
    const QString access = secret("access");
    const QString refresh = secret("refresh");
    m_valid.insert(access);
    m_refresh.insert(refresh);
    m_lastAccess = access;
    if (refreshToken)
        *refreshToken = refresh;
    return access;
}

void FakeOAuthServer::record(const QHttpServerRequest &request, const QString &rpcMethod)
{
    const QByteArray method = request.method() == QHttpServerRequest::Method::Get ? "GET"
        : request.method() == QHttpServerRequest::Method::Post                  ? "POST"
        : request.method() == QHttpServerRequest::Method::Delete                ? "DELETE"
                                                                                : "OTHER";
    m_seen.append({method, request.url().path(), request.value("Authorization"), request.body(),
                   rpcMethod});
}

QHttpServerResponse FakeOAuthServer::refusal(int status, const QByteArray &error)
{
    QByteArray challenge = "Bearer resource_metadata=\"" + origin().toEncoded()
        + "/.well-known/oauth-protected-resource/mcp\"";
    if (!error.isEmpty())
        challenge += ", error=\"" + error + "\", scope=\"mcp:read mcp:write\"";
    else
        challenge += ", scope=\"" + kScope.toLatin1() + "\"";
    QHttpServerResponse response(QByteArray("text/plain"), QByteArray("refused"),
                                 Status(status));
    response.addHeader("WWW-Authenticate", challenge);
    return response;
}

QHttpServerResponse FakeOAuthServer::mcp(const QHttpServerRequest &request)
{
    const QJsonObject message = QJsonDocument::fromJson(request.body()).object();
    const QString method = message.value(QStringLiteral("method")).toString();
    record(request, method);
    if (request.method() == QHttpServerRequest::Method::Get)
        return QHttpServerResponse(Status::MethodNotAllowed); // no server stream
    if (request.method() == QHttpServerRequest::Method::Delete)
        return QHttpServerResponse(Status::Ok);
    const QByteArray authorization = request.value("Authorization");
    const QString token = authorization.startsWith("Bearer ")
        ? QString::fromLatin1(authorization.mid(7)) : QString();
    if (!m_valid.contains(token) && !(m_open && token.isEmpty()))
        return refusal(401);
    if (m_tokenPolicy == TokenPolicy::Unauthorized && !token.isEmpty())
        return refusal(401);
    if (m_tokenPolicy == TokenPolicy::InsufficientScope && !token.isEmpty())
        return refusal(403, "insufficient_scope");

    const QJsonValue id = message.value(QStringLiteral("id"));
    if (id.isUndefined())
        return QHttpServerResponse(Status::Accepted); // a notification
    if (method == QLatin1String("initialize")) {
        QHttpServerResponse response(rpcResult(id, {
            {"protocolVersion", "2025-11-25"},
            {"capabilities", QJsonObject{{"tools", QJsonObject{}}}},
            {"serverInfo", QJsonObject{{"name", "fake-oauth"}, {"version", "1"}}}}));
        response.addHeader("Mcp-Session-Id", "oauth-session-1");
        return response;
    }
    if (method == QLatin1String("tools/list")) {
        const QJsonObject schema{
            {"type", "object"},
            {"properties", QJsonObject{{"q", QJsonObject{{"type", "string"}}}}}};
        const QJsonObject tool{{"name", "lookup"},
                               {"description", "Looks something up"},
                               {"inputSchema", schema},
                               {"annotations", QJsonObject{{"readOnlyHint", true}}}};
        return QHttpServerResponse(rpcResult(id, {{"tools", QJsonArray{tool}}}));
    }
    if (method == QLatin1String("tools/call")) {
        const QJsonObject text{{"type", "text"}, {"text", "found it"}};
        return QHttpServerResponse(rpcResult(id, {{"content", QJsonArray{text}}}));
    }
    return QHttpServerResponse(QJsonObject{
        {"jsonrpc", "2.0"}, {"id", id},
        {"error", QJsonObject{{"code", -32601}, {"message", "no such method"}}}});
}

QHttpServerResponse FakeOAuthServer::resourceMetadata(const QHttpServerRequest &request)
{
    record(request);
    if (m_redirectTo.isValid()) {
        QHttpServerResponse response(Status::Found);
        response.addHeader("Location", m_redirectTo.toEncoded() + request.url().path().toLatin1());
        return response;
    }
    return QHttpServerResponse(QJsonObject{
        {"resource", mcpUrl().toString()},
        {"authorization_servers", QJsonArray{origin().toString()}},
        {"scopes_supported", QJsonArray{kScope}}});
}

QHttpServerResponse FakeOAuthServer::serverMetadata(const QHttpServerRequest &request)
{
    record(request);
    if (m_redirectTo.isValid()) {
        QHttpServerResponse response(Status::Found);
        response.addHeader("Location", m_redirectTo.toEncoded() + request.url().path().toLatin1());
        return response;
    }
    const QString base = origin().toString();
    return QHttpServerResponse(QJsonObject{
        {"issuer", base},
        {"authorization_endpoint", base + "/authorize"},
        {"token_endpoint", base + "/token"},
        {"registration_endpoint", base + "/register"},
        {"response_types_supported", QJsonArray{"code"}},
        {"grant_types_supported", QJsonArray{"authorization_code", "refresh_token"}},
        {"code_challenge_methods_supported", QJsonArray{"S256"}},
        {"token_endpoint_auth_methods_supported", QJsonArray{"client_secret_post"}},
        {"scopes_supported", QJsonArray{kScope, "mcp:write", "offline_access"}}});
}

QHttpServerResponse FakeOAuthServer::registration(const QHttpServerRequest &request)
{
    record(request);
    const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
    const QJsonArray redirects = body.value(QStringLiteral("redirect_uris")).toArray();
    if (redirects.size() != 1)
        return QHttpServerResponse(QJsonObject{{"error", "invalid_redirect_uri"}},
                                   Status::BadRequest);
    const QString id = QStringLiteral("client-%1").arg(m_clients.size() + 1);
    const QString clientSecret = secret("client-secret");
    m_clients.insert(id, clientSecret);
    m_clientRedirects.insert(id, redirects.first().toString());
    return QHttpServerResponse(QJsonObject{{"client_id", id},
                                           {"client_secret", clientSecret},
                                           {"token_endpoint_auth_method", "client_secret_post"},
                                           {"redirect_uris", redirects}},
                               Status::Created);
}

QHttpServerResponse FakeOAuthServer::authorization(const QHttpServerRequest &request)
{
    record(request);
    const QUrlQuery query = request.query();
    const QString clientId = formValue(query, "client_id");
    const QString redirect = formValue(query, "redirect_uri");
    if (formValue(query, "response_type") != QLatin1String("code")
        || formValue(query, "code_challenge_method") != QLatin1String("S256")
        || formValue(query, "code_challenge").isEmpty() || !m_clients.contains(clientId)
        || m_clientRedirects.value(clientId) != redirect
        || (!formValue(query, "resource").isEmpty()
            && formValue(query, "resource") != mcpUrl().toString()))
        return QHttpServerResponse(QByteArray("text/plain"), QByteArray("bad request"),
                                   Status::BadRequest);
    const QString code = secret("code");
    m_codes.insert(code, {clientId, redirect, formValue(query, "code_challenge"),
                          formValue(query, "scope")});
    QUrl back(redirect);
    QUrlQuery answer;
    answer.addQueryItem(QStringLiteral("code"), code);
    answer.addQueryItem(QStringLiteral("state"), formValue(query, "state"));
    back.setQuery(answer);
    QHttpServerResponse response(Status::Found);
    response.addHeader("Location", back.toEncoded());
    return response;
}

QHttpServerResponse FakeOAuthServer::token(const QHttpServerRequest &request)
{
    record(request);
    const QUrlQuery form(QString::fromUtf8(request.body()));
    const QString clientId = formValue(form, "client_id");
    if (!m_clients.contains(clientId)
        || m_clients.value(clientId) != formValue(form, "client_secret"))
        return QHttpServerResponse(QJsonObject{{"error", "invalid_client"}}, Status::Unauthorized);
    const QString grantType = formValue(form, "grant_type");
    if (grantType == QLatin1String("refresh_token")) {
        const QString refresh = formValue(form, "refresh_token");
        if (m_refreshRefused || !m_refresh.contains(refresh))
            return QHttpServerResponse(QJsonObject{{"error", "invalid_grant"}},
                                       Status::BadRequest);
        m_refresh.remove(refresh);
    } else if (grantType == QLatin1String("authorization_code")) {
        const Code code = m_codes.take(formValue(form, "code"));
        const QByteArray challenge = QCryptographicHash::hash(
            formValue(form, "code_verifier").toLatin1(), QCryptographicHash::Sha256)
            .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
        if (code.clientId != clientId || code.redirectUri != formValue(form, "redirect_uri")
            || code.challenge.toLatin1() != challenge)
            return QHttpServerResponse(QJsonObject{{"error", "invalid_grant"}},
                                       Status::BadRequest);
    } else {
        return QHttpServerResponse(QJsonObject{{"error", "unsupported_grant_type"}},
                                   Status::BadRequest);
    }
    QString refresh;
    const QString access = issueToken(&refresh);
    return QHttpServerResponse(QJsonObject{{"access_token", access},
                                           {"token_type", "Bearer"},
                                           {"expires_in", 3600},
                                           {"refresh_token", refresh},
                                           {"scope", kScope}});
}

ForbiddenOrigin::ForbiddenOrigin(QObject *parent)
    : QObject(parent)
{
    connect(&m_server, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_server.nextPendingConnection()) {
            ++m_connections;
            socket->setParent(this);
            connect(socket, &QTcpSocket::readyRead, this,
                    [this, socket] { m_received += socket->readAll(); });
        }
    });
}

QUrl ForbiddenOrigin::origin() const
{
    return QUrl(QStringLiteral("http://127.0.0.1:%1").arg(m_server.serverPort()));
}

FakeBrowser::FakeBrowser(QObject *parent)
    : QObject(parent)
{
}

bool FakeBrowser::open(const QUrl &url)
{
    m_opened.append(url);
    if (!m_follow)
        return true;
    QNetworkRequest request(url);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setTransferTimeout(10000);
    QNetworkReply *page = m_network.get(request);
    connect(page, &QNetworkReply::finished, this, [this, page] {
        page->deleteLater();
        const QUrl location = page->header(QNetworkRequest::LocationHeader).toUrl();
        if (!location.isValid())
            return; // the authorization server refused: the page shows why, nothing follows
        // Only a loopback redirect is followed, as the sign-in's own redirect is.
        if (location.host() != QLatin1String("127.0.0.1"))
            return;
        m_redirects.append(location);
        QNetworkRequest back(location);
        back.setTransferTimeout(10000);
        QNetworkReply *callback = m_network.get(back);
        connect(callback, &QNetworkReply::finished, callback, &QObject::deleteLater);
    });
    return true;
}

} // namespace AgentConsole::Testing
