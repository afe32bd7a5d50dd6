#include "tokenrequest.h"

#include "oauthexchange.h"

#include <QDateTime>
#include <QJsonValue>

namespace AgentConsole::OAuth {

namespace {

constexpr qsizetype kMaxTokenChars = 16 * 1024;

SignInError answerError(const HttpAnswer &answer, const char *what)
{
    using Outcome = HttpAnswer::Outcome;
    const QString where = QString::fromLatin1(what);
    switch (answer.outcome) {
    case Outcome::Answered:
        break;
    case Outcome::Redirected:
    case Outcome::Refused:
        return SignInError::of(SignInFailure::Insecure,
                               where + QStringLiteral(": ") + answer.detail);
    case Outcome::Oversized:
        return SignInError::of(SignInFailure::Malformed,
                               where + QStringLiteral(": ") + answer.detail);
    case Outcome::TimedOut:
    case Outcome::Unreachable:
        return SignInError::of(SignInFailure::Unreachable,
                               where + QStringLiteral(": ") + answer.detail);
    }
    if (answer.status >= 500 || answer.status == 429)
        return SignInError::of(SignInFailure::Unreachable,
                               where + QStringLiteral(": HTTP %1").arg(answer.status));
    const QString error = answer.json.value(QStringLiteral("error")).toString().left(64);
    return SignInError::of(SignInFailure::Refused,
                           where + QStringLiteral(": HTTP %1 %2").arg(answer.status).arg(error));
}

} // namespace

void requestToken(Exchange *exchange, const Grant &base, QUrlQuery form,
                  std::function<void(const TokenAnswer &)> done)
{
    Exchange::Headers headers;
    const ClientIdentity &client = base.client;
    switch (client.method) {
    case ClientAuthMethod::SecretBasic: {
        // RFC 6749 §2.3.1: both parts form-encoded before they are joined and encoded.
        const QByteArray pair = QUrl::toPercentEncoding(client.clientId) + ':'
            + QUrl::toPercentEncoding(client.clientSecret);
        headers.append({"Authorization", "Basic " + pair.toBase64()});
        break;
    }
    case ClientAuthMethod::SecretPost:
        form.addQueryItem(QStringLiteral("client_id"), client.clientId);
        form.addQueryItem(QStringLiteral("client_secret"), client.clientSecret);
        break;
    case ClientAuthMethod::None:
        form.addQueryItem(QStringLiteral("client_id"), client.clientId);
        break;
    }
    if (!base.resource.isEmpty())
        form.addQueryItem(QStringLiteral("resource"), base.resource);
    exchange->postForm(
        base.tokenEndpoint, form, headers,
        [base, done = std::move(done)](const HttpAnswer &answer) {
            TokenAnswer result;
            if (!answer.ok()) {
                result.error = answerError(answer, "token endpoint");
                done(result);
                return;
            }
            const QJsonObject json = answer.json;
            const QString token = json.value(QStringLiteral("access_token")).toString();
            const QString type = json.value(QStringLiteral("token_type")).toString();
            if (!answer.isJson || token.isEmpty() || token.size() > kMaxTokenChars
                || type.compare(QLatin1String("bearer"), Qt::CaseInsensitive) != 0) {
                result.error = SignInError::of(SignInFailure::Malformed,
                                               QStringLiteral(
                                                   "token endpoint: no Bearer access token"));
                done(result);
                return;
            }
            Grant grant = base;
            grant.accessToken = token;
            const QString refresh = json.value(QStringLiteral("refresh_token")).toString();
            if (!refresh.isEmpty() && refresh.size() <= kMaxTokenChars)
                grant.refreshToken = refresh; // a refresh answer without one keeps the old one
            const double lifetime = json.value(QStringLiteral("expires_in")).toDouble(-1);
            grant.expiresAt = lifetime > 0
                ? QDateTime::currentDateTimeUtc().addSecs(qint64(std::min(lifetime, 1e9)))
                : QDateTime();
            if (json.contains(QStringLiteral("scope")))
                grant.scopes = json.value(QStringLiteral("scope"))
                                   .toString()
                                   .left(4096)
                                   .split(QLatin1Char(' '), Qt::SkipEmptyParts);
            result.grant = grant;
            done(result);
        });
}

void refreshGrant(Exchange *exchange, const Grant &grant,
                  std::function<void(const TokenAnswer &)> done)
{
    QUrlQuery form;
    form.addQueryItem(QStringLiteral("grant_type"), QStringLiteral("refresh_token"));
    form.addQueryItem(QStringLiteral("refresh_token"), grant.refreshToken);
    requestToken(exchange, grant, form, std::move(done));
}

} // namespace AgentConsole::OAuth
