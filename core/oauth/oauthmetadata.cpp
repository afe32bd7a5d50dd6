#include "oauthmetadata.h"

#include <QHostAddress>
#include <QJsonArray>

namespace AgentConsole::OAuth {

namespace {

constexpr int kMaxListEntries = 64;

QUrl withPath(const QUrl &base, const QString &path)
{
    QUrl url = base.adjusted(QUrl::RemoveQuery | QUrl::RemoveFragment | QUrl::RemoveUserInfo);
    url.setPath(path);
    return url;
}

// "/mcp/" and "/mcp" alike: the path without its trailing slash, "" for the root.
QString trimmedPath(const QUrl &url)
{
    QString path = url.path();
    while (path.endsWith(QLatin1Char('/')))
        path.chop(1);
    return path;
}

QStringList stringList(const QJsonValue &value)
{
    QStringList out;
    const QJsonArray array = value.toArray();
    for (const QJsonValue &entry : array) {
        if (entry.isString() && out.size() < kMaxListEntries)
            out.append(entry.toString().left(256));
    }
    return out;
}

QUrl urlMember(const QJsonObject &json, const char *name)
{
    const QUrl url(json.value(QLatin1String(name)).toString(), QUrl::StrictMode);
    return url.isValid() && !url.isRelative() ? url : QUrl();
}

bool sameOrigin(const QUrl &a, const QUrl &b)
{
    return a.scheme().compare(b.scheme(), Qt::CaseInsensitive) == 0
        && a.host().compare(b.host(), Qt::CaseInsensitive) == 0
        && a.port(a.scheme() == QLatin1String("https") ? 443 : 80)
        == b.port(b.scheme() == QLatin1String("https") ? 443 : 80);
}

} // namespace

QList<QUrl> protectedResourceMetadataUrls(const QUrl &serverUrl)
{
    const QString path = trimmedPath(serverUrl);
    QList<QUrl> urls;
    if (!path.isEmpty())
        urls.append(
            withPath(serverUrl, QStringLiteral("/.well-known/oauth-protected-resource") + path));
    urls.append(withPath(serverUrl, QStringLiteral("/.well-known/oauth-protected-resource")));
    return urls;
}

QList<QUrl> authorizationServerMetadataUrls(const QUrl &issuer)
{
    const QString path = trimmedPath(issuer);
    if (path.isEmpty())
        return {withPath(issuer, QStringLiteral("/.well-known/oauth-authorization-server")),
                withPath(issuer, QStringLiteral("/.well-known/openid-configuration"))};
    return {withPath(issuer, QStringLiteral("/.well-known/oauth-authorization-server") + path),
            withPath(issuer, QStringLiteral("/.well-known/openid-configuration") + path),
            withPath(issuer, path + QStringLiteral("/.well-known/openid-configuration"))};
}

AuthorizationServer fallbackEndpoints(const QUrl &serverUrl)
{
    AuthorizationServer server;
    server.issuer = withPath(serverUrl, QStringLiteral("/"));
    server.authorizationEndpoint = withPath(serverUrl, QStringLiteral("/authorize"));
    server.tokenEndpoint = withPath(serverUrl, QStringLiteral("/token"));
    server.registrationEndpoint = withPath(serverUrl, QStringLiteral("/register"));
    server.codeChallengeMethods = {QStringLiteral("S256")};
    server.fromFallback = true;
    return server;
}

QUrl canonicalResource(const QUrl &serverUrl)
{
    QUrl url = serverUrl.adjusted(QUrl::RemoveQuery | QUrl::RemoveFragment | QUrl::RemoveUserInfo
                                  | QUrl::StripTrailingSlash);
    url.setScheme(url.scheme().toLower());
    url.setHost(url.host().toLower());
    if (url.path().isEmpty())
        url.setPath(QStringLiteral("/"));
    return url;
}

bool resourceCovers(const QUrl &resource, const QUrl &serverUrl)
{
    if (!resource.isValid() || !sameOrigin(resource, serverUrl))
        return false;
    const QString resourcePath = trimmedPath(resource);
    const QString serverPath = trimmedPath(serverUrl);
    return resourcePath.isEmpty() || serverPath == resourcePath
        || serverPath.startsWith(resourcePath + QLatin1Char('/'));
}

bool acceptableEndpoint(const QUrl &url)
{
    if (!url.isValid() || url.isRelative() || url.host().isEmpty())
        return false;
    if (url.scheme() == QLatin1String("https"))
        return true;
    if (url.scheme() != QLatin1String("http"))
        return false;
    const QString host = url.host().toLower();
    return host == QLatin1String("localhost") || QHostAddress(host).isLoopback();
}

bool parseProtectedResource(const QJsonObject &json, ProtectedResource *out, QString *why)
{
    ProtectedResource result;
    result.resource = urlMember(json, "resource");
    if (result.resource.isEmpty()) {
        *why = QStringLiteral("protected resource metadata without a valid \"resource\"");
        return false;
    }
    const QJsonArray servers = json.value(QStringLiteral("authorization_servers")).toArray();
    for (const QJsonValue &entry : servers) {
        const QUrl url(entry.toString(), QUrl::StrictMode);
        if (acceptableEndpoint(url) && result.authorizationServers.size() < kMaxListEntries)
            result.authorizationServers.append(url);
    }
    if (result.authorizationServers.isEmpty()) {
        *why = QStringLiteral("protected resource metadata names no usable authorization server");
        return false;
    }
    result.scopesListed = json.contains(QStringLiteral("scopes_supported"));
    result.scopesSupported = stringList(json.value(QStringLiteral("scopes_supported")));
    *out = result;
    return true;
}

bool parseAuthorizationServer(const QJsonObject &json, AuthorizationServer *out, QString *why)
{
    AuthorizationServer result;
    result.issuer = urlMember(json, "issuer");
    result.authorizationEndpoint = urlMember(json, "authorization_endpoint");
    result.tokenEndpoint = urlMember(json, "token_endpoint");
    result.registrationEndpoint = urlMember(json, "registration_endpoint");
    if (!acceptableEndpoint(result.authorizationEndpoint)
        || !acceptableEndpoint(result.tokenEndpoint)) {
        *why = QStringLiteral("authorization server metadata without usable authorization and "
                              "token endpoints");
        return false;
    }
    if (!result.registrationEndpoint.isEmpty() && !acceptableEndpoint(result.registrationEndpoint))
        result.registrationEndpoint.clear();
    result.scopesSupported = stringList(json.value(QStringLiteral("scopes_supported")));
    result.tokenEndpointAuthMethods = stringList(
        json.value(QStringLiteral("token_endpoint_auth_methods_supported")));
    result.codeChallengeMethodsListed = json.contains(
        QStringLiteral("code_challenge_methods_supported"));
    result.codeChallengeMethods = stringList(
        json.value(QStringLiteral("code_challenge_methods_supported")));
    result.grantTypes = stringList(json.value(QStringLiteral("grant_types_supported")));
    result.clientIdMetadataDocuments
        = json.value(QStringLiteral("client_id_metadata_document_supported")).toBool();
    *out = result;
    return true;
}

} // namespace AgentConsole::OAuth
