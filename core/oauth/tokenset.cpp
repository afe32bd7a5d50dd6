#include "tokenset.h"

#include <QJsonArray>

namespace AgentConsole::OAuth {

QString methodName(ClientAuthMethod method)
{
    switch (method) {
    case ClientAuthMethod::None:
        return QStringLiteral("none");
    case ClientAuthMethod::SecretBasic:
        return QStringLiteral("client_secret_basic");
    case ClientAuthMethod::SecretPost:
        return QStringLiteral("client_secret_post");
    }
    return QStringLiteral("none");
}

namespace {

ClientAuthMethod methodOf(const QString &name)
{
    if (name == QLatin1String("client_secret_basic"))
        return ClientAuthMethod::SecretBasic;
    if (name == QLatin1String("client_secret_post"))
        return ClientAuthMethod::SecretPost;
    return ClientAuthMethod::None;
}

} // namespace

QJsonObject Grant::toJson() const
{
    return {{QStringLiteral("access_token"), accessToken},
            {QStringLiteral("refresh_token"), refreshToken},
            {QStringLiteral("expires_at"),
             expiresAt.isValid() ? QJsonValue(expiresAt.toSecsSinceEpoch()) : QJsonValue()},
            {QStringLiteral("scopes"), QJsonArray::fromStringList(scopes)},
            {QStringLiteral("token_endpoint"), tokenEndpoint.toString()},
            {QStringLiteral("issuer"), issuer.toString()},
            {QStringLiteral("resource"), resource},
            {QStringLiteral("client_id"), client.clientId},
            {QStringLiteral("client_secret"), client.clientSecret},
            {QStringLiteral("auth_method"), methodName(client.method)},
            {QStringLiteral("redirect_uri"), client.redirectUri},
            {QStringLiteral("dynamic"), client.dynamic}};
}

Grant Grant::fromJson(const QJsonObject &json)
{
    Grant grant;
    grant.accessToken = json.value(QStringLiteral("access_token")).toString();
    grant.refreshToken = json.value(QStringLiteral("refresh_token")).toString();
    if (json.value(QStringLiteral("expires_at")).isDouble())
        grant.expiresAt = QDateTime::fromSecsSinceEpoch(
            qint64(json.value(QStringLiteral("expires_at")).toDouble()), Qt::UTC);
    for (const QJsonValue &scope : json.value(QStringLiteral("scopes")).toArray())
        grant.scopes.append(scope.toString());
    grant.tokenEndpoint = QUrl(json.value(QStringLiteral("token_endpoint")).toString());
    grant.issuer = QUrl(json.value(QStringLiteral("issuer")).toString());
    grant.resource = json.value(QStringLiteral("resource")).toString();
    grant.client.clientId = json.value(QStringLiteral("client_id")).toString();
    grant.client.clientSecret = json.value(QStringLiteral("client_secret")).toString();
    grant.client.method = methodOf(json.value(QStringLiteral("auth_method")).toString());
    grant.client.redirectUri = json.value(QStringLiteral("redirect_uri")).toString();
    grant.client.dynamic = json.value(QStringLiteral("dynamic")).toBool();
    return grant;
}

} // namespace AgentConsole::OAuth
