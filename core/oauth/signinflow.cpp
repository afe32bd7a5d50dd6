#include "signinflow.h"

#include "../telemetry/logging.h"
#include "oauthexchange.h"
#include "pkce.h"
#include "tokenrequest.h"

#include <QHostAddress>
#include <QJsonArray>
#include <QOAuthHttpServerReplyHandler>
#include <QUrlQuery>

namespace AgentConsole::OAuth {

namespace {

const QString kCallbackPath = QStringLiteral("callback");
constexpr int kMaxValueChars = 4096; // of a code, a state, an error in the redirect

QString redirectText()
{
    return QStringLiteral("<p>Agent Console received the sign-in. You can close this page "
                          "and return to the console.</p>");
}

// The resource a token is asked for: the metadata's own identifier where it has one (it
// covers the server's URL, checked before), else the server's canonical URL.
QString resourceIndicator(const std::optional<ProtectedResource> &resource)
{
    if (!resource)
        return {};
    return canonicalResource(resource->resource).toString();
}

// A metadata server that is down ends the sign-in (a fault); a 404, a redirect that is not
// followed or an answer that is not JSON only means: look in the next place.
bool isOutage(const HttpAnswer &answer)
{
    return answer.outcome == HttpAnswer::Outcome::TimedOut
        || answer.outcome == HttpAnswer::Outcome::Unreachable
        || (answer.outcome == HttpAnswer::Outcome::Answered && answer.status >= 500);
}

} // namespace

SignInFlow::SignInFlow(Request request, QObject *parent)
    : QObject(parent)
    , m_request(std::move(request))
    , m_exchange(new Exchange(Exchange::Limits{m_request.exchangeTimeoutMs, 64 * 1024}, this))
{
    qRegisterMetaType<AgentConsole::OAuth::Grant>();
    qRegisterMetaType<AgentConsole::OAuth::SignInError>();
    m_timeout.setSingleShot(true);
    connect(&m_timeout, &QTimer::timeout, this, [this] {
        fail(SignInFailure::TimedOut,
             QStringLiteral("no sign-in came back in %1 ms").arg(m_request.timeoutMs));
    });
}

SignInFlow::~SignInFlow() = default;

void SignInFlow::start()
{
    m_timeout.start(m_request.timeoutMs);
    QList<QUrl> urls;
    if (m_request.challenge.resourceMetadata.isValid())
        urls.append(m_request.challenge.resourceMetadata);
    for (const QUrl &url : protectedResourceMetadataUrls(m_request.serverUrl)) {
        if (!urls.contains(url))
            urls.append(url);
    }
    fetchResourceMetadata(urls);
}

void SignInFlow::cancel()
{
    fail(SignInFailure::Cancelled, QStringLiteral("cancelled by staff"));
}

void SignInFlow::fetchResourceMetadata(QList<QUrl> urls)
{
    if (m_done)
        return;
    if (urls.isEmpty()) {
        // No Protected Resource Metadata anywhere: a server of the 2025-03-26 specification,
        // whose own origin is its authorization server.
        qCInfo(lcMcp).noquote() << "sign-in: no protected resource metadata; trying the"
                                << "2025-03-26 discovery at the server's origin";
        m_resource.reset();
        QUrl origin = m_request.serverUrl.adjusted(QUrl::RemovePath | QUrl::RemoveQuery
                                                   | QUrl::RemoveFragment | QUrl::RemoveUserInfo);
        origin.setPath(QStringLiteral("/.well-known/oauth-authorization-server"));
        fetchServerMetadata({origin});
        return;
    }
    const QUrl url = urls.takeFirst();
    m_exchange->get(url, [this, url, urls](const HttpAnswer &answer) {
        if (m_done)
            return;
        if (answer.outcome == HttpAnswer::Outcome::Answered && answer.status == 200
            && answer.isJson) {
            ProtectedResource resource;
            QString why;
            if (!parseProtectedResource(answer.json, &resource, &why)) {
                fail(SignInFailure::Malformed, why);
                return;
            }
            if (!resourceCovers(resource.resource, m_request.serverUrl)) {
                // RFC 9728 §3.3: metadata for another resource must not be used; a token
                // asked for it could be replayed against this server, or ours against it.
                fail(SignInFailure::ResourceMismatch,
                     QStringLiteral("the protected resource metadata names another resource"));
                return;
            }
            m_resource = resource;
            fetchServerMetadata(
                authorizationServerMetadataUrls(resource.authorizationServers.first()));
            return;
        }
        if (isOutage(answer)) {
            fail(SignInFailure::Unreachable,
                 QStringLiteral("protected resource metadata: ") + answer.detail);
            return;
        }
        // 404, a redirect (not followed), not JSON: the next place to look.
        qCInfo(lcMcp).noquote() << "sign-in: no protected resource metadata at" << url.path()
                                << "(" << answer.detail << ")";
        fetchResourceMetadata(urls);
    });
}

void SignInFlow::fetchServerMetadata(QList<QUrl> urls)
{
    if (m_done)
        return;
    if (urls.isEmpty()) {
        if (!m_resource) {
            useAuthorizationServer(fallbackEndpoints(m_request.serverUrl));
            return;
        }
        fail(SignInFailure::NoMetadata, QStringLiteral("no authorization server metadata found"));
        return;
    }
    const QUrl url = urls.takeFirst();
    m_exchange->get(url, [this, url, urls](const HttpAnswer &answer) {
        if (m_done)
            return;
        if (answer.outcome == HttpAnswer::Outcome::Answered && answer.status == 200
            && answer.isJson) {
            AuthorizationServer server;
            QString why;
            if (!parseAuthorizationServer(answer.json, &server, &why)) {
                fail(SignInFailure::Malformed, why);
                return;
            }
            useAuthorizationServer(server);
            return;
        }
        if (isOutage(answer)) {
            fail(SignInFailure::Unreachable,
                 QStringLiteral("authorization server metadata: ") + answer.detail);
            return;
        }
        qCInfo(lcMcp).noquote() << "sign-in: no authorization server metadata at" << url.path()
                                << "(" << answer.detail << ")";
        fetchServerMetadata(urls);
    });
}

void SignInFlow::useAuthorizationServer(const AuthorizationServer &server)
{
    m_server = server;
    // MCP requires PKCE; a server whose metadata does not offer S256 is not used (the
    // 2025-03-26 defaults have no metadata to say so and are tried with S256).
    if (!server.fromFallback && !server.codeChallengeMethods.contains(QLatin1String("S256"))) {
        fail(SignInFailure::NoPkce,
             QStringLiteral("the authorization server does not offer "
                            "PKCE with S256"));
        return;
    }
    if (!listen())
        return;
    chooseClient();
}

bool SignInFlow::listen()
{
    // RFC 8252 §7.3: a loopback IP literal, any port. An earlier registration's port is
    // tried first, so that its redirect URI still matches.
    quint16 port = 0;
    if (m_request.registered)
        port = quint16(QUrl(m_request.registered->redirectUri).port(0));
    m_redirect = new QOAuthHttpServerReplyHandler(QHostAddress::LocalHost, port, this);
    if (!m_redirect->isListening() && port != 0)
        m_redirect->listen(QHostAddress::LocalHost, 0);
    if (!m_redirect->isListening()) {
        fail(SignInFailure::BrowserFailed,
             QStringLiteral("no loopback port to receive the "
                            "sign-in on"));
        return false;
    }
    m_redirect->setCallbackPath(kCallbackPath);
    m_redirect->setCallbackText(redirectText());
    m_redirectUri = m_redirect->callback();
    connect(m_redirect, &QOAuthHttpServerReplyHandler::callbackReceived, this,
            &SignInFlow::onRedirect);
    return true;
}

ClientAuthMethod SignInFlow::methodFor(bool hasSecret) const
{
    const QStringList &listed = m_server.tokenEndpointAuthMethods;
    if (!hasSecret)
        return ClientAuthMethod::None;
    // RFC 8414 §2: a server that lists nothing takes client_secret_basic.
    if (listed.isEmpty() || listed.contains(QLatin1String("client_secret_basic")))
        return ClientAuthMethod::SecretBasic;
    if (listed.contains(QLatin1String("client_secret_post")))
        return ClientAuthMethod::SecretPost;
    return ClientAuthMethod::None;
}

void SignInFlow::chooseClient()
{
    const ClientSettings &settings = m_request.client;
    if (!settings.clientId.isEmpty()) {
        m_client.clientId = settings.clientId;
        m_client.clientSecret = settings.clientSecret;
        m_client.method = methodFor(!settings.clientSecret.isEmpty());
        authorize();
        return;
    }
    if (m_server.clientIdMetadataDocuments && !settings.clientMetadataUrl.isEmpty()) {
        m_client.clientId = settings.clientMetadataUrl;
        m_client.method = ClientAuthMethod::None;
        authorize();
        return;
    }
    if (m_request.registered && m_request.registered->redirectUri == m_redirectUri
        && m_request.registeredIssuer == m_server.issuer) {
        m_client = *m_request.registered;
        authorize();
        return;
    }
    if (m_server.registrationEndpoint.isEmpty()) {
        fail(SignInFailure::NoRegistration,
             QStringLiteral("the authorization server offers no registration and no client id "
                            "is configured"));
        return;
    }
    registerClient();
}

void SignInFlow::registerClient()
{
    // RFC 7591: a native client with its loopback redirect. It asks for the method it can
    // use best among those the server lists; the server's answer decides.
    const QStringList &listed = m_server.tokenEndpointAuthMethods;
    QString method = QStringLiteral("none");
    if (listed.isEmpty() || listed.contains(QLatin1String("client_secret_basic")))
        method = QStringLiteral("client_secret_basic");
    else if (listed.contains(QLatin1String("client_secret_post")))
        method = QStringLiteral("client_secret_post");
    const QJsonObject body{{QStringLiteral("client_name"), m_request.client.clientName},
                           {QStringLiteral("redirect_uris"), QJsonArray{m_redirectUri}},
                           {QStringLiteral("grant_types"),
                            QJsonArray{QStringLiteral("authorization_code"),
                                       QStringLiteral("refresh_token")}},
                           {QStringLiteral("response_types"), QJsonArray{QStringLiteral("code")}},
                           {QStringLiteral("token_endpoint_auth_method"), method},
                           {QStringLiteral("application_type"), QStringLiteral("native")}};
    m_exchange->postJson(m_server.registrationEndpoint, body, [this](const HttpAnswer &answer) {
        if (m_done)
            return;
        if (!answer.ok() || !answer.isJson) {
            const bool down = answer.outcome == HttpAnswer::Outcome::TimedOut
                || answer.outcome == HttpAnswer::Outcome::Unreachable || answer.status >= 500;
            fail(down ? SignInFailure::Unreachable : SignInFailure::Refused,
                 QStringLiteral("client registration: ") + answer.detail);
            return;
        }
        const QString id = answer.json.value(QStringLiteral("client_id")).toString();
        if (id.isEmpty() || id.size() > kMaxValueChars) {
            fail(SignInFailure::Malformed,
                 QStringLiteral("client registration without a client_id"));
            return;
        }
        m_client.clientId = id;
        m_client.clientSecret
            = answer.json.value(QStringLiteral("client_secret")).toString().left(kMaxValueChars);
        m_client.redirectUri = m_redirectUri;
        m_client.dynamic = true;
        const QString method = answer.json.value(QStringLiteral("token_endpoint_auth_method"))
                                   .toString();
        if (method == QLatin1String("client_secret_basic"))
            m_client.method = ClientAuthMethod::SecretBasic;
        else if (method == QLatin1String("client_secret_post"))
            m_client.method = ClientAuthMethod::SecretPost;
        else if (method == QLatin1String("none"))
            m_client.method = ClientAuthMethod::None;
        else
            m_client.method = methodFor(!m_client.clientSecret.isEmpty());
        authorize();
    });
}

QStringList SignInFlow::chosenScopes() const
{
    // MCP's scope selection: the challenge's scope, else what the resource lists, else none.
    // A step-up keeps what the current token holds, so that earlier calls still work.
    QStringList scopes;
    if (!m_request.challenge.scopes.isEmpty()) {
        scopes = m_request.heldScopes;
        for (const QString &scope : m_request.challenge.scopes) {
            if (!scopes.contains(scope))
                scopes.append(scope);
        }
    } else if (m_resource && !m_resource->scopesSupported.isEmpty()) {
        scopes = m_resource->scopesSupported;
    } else {
        scopes = m_request.client.scopes;
    }
    // A refresh token is asked for (offline_access) only where the server lists the scope.
    if (!scopes.isEmpty() && m_server.scopesSupported.contains(QLatin1String("offline_access"))
        && !scopes.contains(QLatin1String("offline_access")))
        scopes.append(QStringLiteral("offline_access"));
    return scopes;
}

void SignInFlow::authorize()
{
    const Pkce pkce = Pkce::generate();
    m_verifier = pkce.verifier;
    m_state = randomUrlSafe(24);
    QUrl url = m_server.authorizationEndpoint;
    QUrlQuery query(url);
    query.addQueryItem(QStringLiteral("response_type"), QStringLiteral("code"));
    query.addQueryItem(QStringLiteral("client_id"), m_client.clientId);
    query.addQueryItem(QStringLiteral("redirect_uri"), m_redirectUri);
    query.addQueryItem(QStringLiteral("state"), QString::fromLatin1(m_state));
    query.addQueryItem(QStringLiteral("code_challenge"), QString::fromLatin1(pkce.challenge));
    query.addQueryItem(QStringLiteral("code_challenge_method"), QStringLiteral("S256"));
    const QStringList scopes = chosenScopes();
    if (!scopes.isEmpty())
        query.addQueryItem(QStringLiteral("scope"), scopes.join(QLatin1Char(' ')));
    const QString resource = resourceIndicator(m_resource);
    if (!resource.isEmpty())
        query.addQueryItem(QStringLiteral("resource"), resource);
    // Encoded fully: a space in the scope must be %20, and '+' or '&' in a value stay data.
    QString encoded;
    for (const auto &item : query.queryItems(QUrl::FullyDecoded)) {
        if (!encoded.isEmpty())
            encoded.append(QLatin1Char('&'));
        encoded.append(QString::fromLatin1(QUrl::toPercentEncoding(item.first) + '='
                                           + QUrl::toPercentEncoding(item.second)));
    }
    url.setQuery(encoded, QUrl::StrictMode);
    m_authorizationUrl = url;
    qCInfo(lcMcp).noquote() << "sign-in: opening the browser at" << url.host() << "for client"
                            << (m_client.dynamic ? "(registered)" : "(configured)") << "scopes"
                            << (scopes.isEmpty() ? QStringLiteral("(none)")
                                                 : scopes.join(QLatin1Char(' ')));
    if (!m_request.openBrowser || !m_request.openBrowser(url)) {
        fail(SignInFailure::BrowserFailed, QStringLiteral("the browser could not be opened"));
        return;
    }
    Q_EMIT browserOpened(url);
}

void SignInFlow::onRedirect(const QVariantMap &values)
{
    if (m_done)
        return;
    const QString state = values.value(QStringLiteral("state")).toString().left(kMaxValueChars);
    if (state.toLatin1() != m_state) {
        // Not ours (another tab, a forged request): ignored, the sign-in still waits.
        qCWarning(lcMcp) << "sign-in: a redirect with another state was ignored";
        return;
    }
    const QString error = values.value(QStringLiteral("error")).toString().left(64);
    if (!error.isEmpty()) {
        fail(error == QLatin1String("access_denied") ? SignInFailure::Declined
                                                     : SignInFailure::Refused,
             QStringLiteral("the authorization server answered %1").arg(error));
        return;
    }
    const QString code = values.value(QStringLiteral("code")).toString();
    if (code.isEmpty() || code.size() > kMaxValueChars) {
        fail(SignInFailure::Malformed, QStringLiteral("a redirect without a code"));
        return;
    }
    m_redirect->close(); // one code per sign-in
    exchangeCode(code);
}

void SignInFlow::exchangeCode(const QString &code)
{
    Grant base;
    base.tokenEndpoint = m_server.tokenEndpoint;
    base.issuer = m_server.issuer;
    base.resource = resourceIndicator(m_resource);
    base.client = m_client;
    base.scopes = chosenScopes();
    QUrlQuery form;
    form.addQueryItem(QStringLiteral("grant_type"), QStringLiteral("authorization_code"));
    form.addQueryItem(QStringLiteral("code"), code);
    form.addQueryItem(QStringLiteral("redirect_uri"), m_redirectUri);
    form.addQueryItem(QStringLiteral("code_verifier"), QString::fromLatin1(m_verifier));
    requestToken(m_exchange, base, form, [this](const TokenAnswer &answer) {
        if (m_done)
            return;
        if (answer.error.isError()) {
            fail(answer.error.failure, answer.error.detail);
            return;
        }
        m_done = true;
        m_timeout.stop();
        qCInfo(lcMcp) << "sign-in: token received";
        Q_EMIT succeeded(answer.grant);
    });
}

void SignInFlow::fail(SignInFailure failure, const QString &detail)
{
    if (m_done)
        return;
    m_done = true;
    m_timeout.stop();
    m_exchange->abortAll();
    if (m_redirect)
        m_redirect->close();
    const SignInError error = SignInError::of(failure, detail);
    qCWarning(lcMcp).noquote() << "sign-in failed:" << error.describe();
    Q_EMIT failed(error);
}

} // namespace AgentConsole::OAuth
