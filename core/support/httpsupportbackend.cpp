#include "httpsupportbackend.h"

#include "supportfailures.h"

#include "../telemetry/logging.h"

#include "../tools/argumentschema.h"
#include "internal/restexchange.h"

#include "../http/networkfailure.h"
#include "../http/retryafter.h"

#include <QJsonDocument>
#include <QNetworkReply>

namespace AgentConsole {
namespace {

using Millis = std::chrono::milliseconds;

QString pathFor(SupportLookup what, const QString &key)
{
    const QString encoded = QString::fromLatin1(QUrl::toPercentEncoding(key));
    switch (what) {
    case SupportLookup::Order:
        return QStringLiteral("/api/v1/orders/") + encoded;
    case SupportLookup::Logistics:
        return QStringLiteral("/api/v1/orders/%1/logistics").arg(encoded);
    case SupportLookup::Inventory:
        return QStringLiteral("/api/v1/inventory/") + encoded;
    case SupportLookup::OrderTickets:
        return QStringLiteral("/api/v1/orders/%1/tickets").arg(encoded);
    }
    return {};
}

LookupAnswer classifyNetworkError(QNetworkReply::NetworkError error, bool cancelled)
{
    const QString name = Http::networkErrorName(error);
    switch (Http::networkFailureOf(error)) {
    case Http::NetworkFailure::Aborted:
        // Either our own abort (the attempt was given up) or the transfer timeout fired.
        return LookupAnswer::transient(cancelled ? QStringLiteral("aborted: attempt cancelled")
                                                 : QStringLiteral("transfer timeout"));
    case Http::NetworkFailure::Configuration:
        return LookupAnswer::rejected(QStringLiteral("network error ") + name);
    default:
        // Refused, reset, closed, host lookup, proxy trouble, a malformed response: the
        // backend or the path to it may recover.
        return LookupAnswer::transient(QStringLiteral("network error ") + name);
    }
}

} // namespace

HttpSupportBackend::HttpSupportBackend(HttpBackendConfig config)
    : m_config(std::move(config))
{
}

QUrl HttpSupportBackend::urlFor(SupportLookup what, const QString &key) const
{
    return Internal::apiUrl(m_config.baseUrl, pathFor(what, key));
}

std::optional<Millis> HttpSupportBackend::parseRetryAfter(const QByteArray &value)
{
    return Http::parseRetryAfter(value);
}

LookupAnswer HttpSupportBackend::classify(int networkError, int status, const QByteArray &body,
                                          const QByteArray &retryAfter, bool cancelled)
{
    const auto error = QNetworkReply::NetworkError(networkError);
    if (cancelled)
        return classifyNetworkError(QNetworkReply::OperationCanceledError, true);
    // Errors below 200 happened below HTTP (connection, proxy, timeout): even when a status
    // line arrived, the body did not, so the exchange failed as a whole.
    if (Http::failedBelowHttp(networkError, status))
        return classifyNetworkError(error, false);

    const QString statusText = QStringLiteral("HTTP %1").arg(status);
    const Http::StatusClass statusClass = Http::statusClassOf(status);
    if (statusClass == Http::StatusClass::Success) {
        // Measured before it is parsed: a hostile document is never built.
        if (jsonNestingDepth(body) > Internal::maxResponseDepth) {
            return LookupAnswer::transient(
                statusText
                + QStringLiteral(" with a body nested deeper than %1 levels")
                      .arg(Internal::maxResponseDepth));
        }
        QJsonParseError parseError;
        const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
        if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
            return LookupAnswer::transient(
                statusText
                + QStringLiteral(" with a body that is not a JSON object (%1 bytes)")
                      .arg(body.size()));
        }
        return LookupAnswer::found(document.object());
    }
    if (statusClass == Http::StatusClass::NotFound) {
        // The API's code read as a result code: one this console does not know that says
        // nothing matched (*_NOT_FOUND) is still that answer.
        const ResultCode::Code code = ResultCode::read(
            QJsonDocument::fromJson(body).object().value(QLatin1String("error")).toString());
        if (FailureTable::instance().isNothingFound(code))
            return LookupAnswer::notFound(code);
        // A 404 without the API's code is not an answer about the order: most likely the
        // base URL or the API version is wrong. Saying "no such order" would be a lie.
        return LookupAnswer::rejected(statusText + QStringLiteral(" without a *_NOT_FOUND code"));
    }
    if (statusClass == Http::StatusClass::AccessDenied)
        return LookupAnswer::accessDenied(statusText);
    if (statusClass == Http::StatusClass::Throttled
        || statusClass == Http::StatusClass::ServerError)
        return LookupAnswer::transient(statusText, parseRetryAfter(retryAfter));
    if (statusClass == Http::StatusClass::Redirect)
        return LookupAnswer::rejected(statusText + QStringLiteral(" (redirects not followed)"));
    return LookupAnswer::rejected(statusText);
}

LookupAnswer HttpSupportBackend::lookup(SupportLookup what, const QString &key,
                                        const TrustedContext &context,
                                        const CancellationToken &cancellation) const
{
    const QUrl url = urlFor(what, key);
    const Internal::RestExchange exchange = Internal::exchange(
        {"GET", url, {}, {}, m_config.transferTimeoutMs}, context, cancellation);
    const int status = exchange.status;
    if (exchange.tooLarge) {
        // A broken or hostile backend: the lookup is unavailable, the console stays bounded.
        LookupAnswer answer = LookupAnswer::transient(
            QStringLiteral("GET %1: answer larger than %2 bytes, aborted")
                .arg(url.toDisplayString())
                .arg(Internal::maxResponseBytes));
        qCWarning(lcTools).noquote() << "support backend answered unreadably:" << answer.detail;
        return answer;
    }
    LookupAnswer answer = classify(exchange.networkError, status, exchange.body,
                                   exchange.retryAfter, exchange.cancelled);
    if (answer.status == LookupAnswer::Status::Found
        || answer.status == LookupAnswer::Status::NotFound)
        return answer;

    // Details (the URL included) go to the local log only; the tool result stays generic.
    answer.detail = QStringLiteral("GET %1: %2").arg(url.toDisplayString(), answer.detail);
    if (answer.status == LookupAnswer::Status::Rejected
        || answer.status == LookupAnswer::Status::AccessDenied) {
        qCWarning(lcTools).noquote()
            << "support backend refused the request:" << answer.detail << "- staff"
            << context.userId << "tenant" << context.tenantId;
    } else if (status >= 200 && status < 300) {
        qCWarning(lcTools).noquote() << "support backend answered unreadably:" << answer.detail;
    }
    return answer;
}

} // namespace AgentConsole
