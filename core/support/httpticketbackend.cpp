#include "httpticketbackend.h"

#include "supportfailures.h"

#include "../telemetry/killpoint.h"
#include "../telemetry/logging.h"

#include "../tools/argumentschema.h"
#include "internal/restexchange.h"

#include "../http/networkfailure.h"
#include "../http/retryafter.h"

#include <QJsonDocument>

namespace AgentConsole {
namespace {

using S = TicketWriteAnswer::Status;

const QString kTicketsPath = QStringLiteral("/api/v1/tickets");

// The ticket of a 2xx body, or nothing when the body is not one. A body nested deeper than
// the bound is not one either: it is measured before it is parsed, and never stored.
std::optional<QJsonObject> ticketOf(const QByteArray &body)
{
    if (jsonNestingDepth(body) > Internal::maxResponseDepth)
        return std::nullopt;
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return std::nullopt;
    const QJsonObject ticket = document.object();
    if (ticket.value(QLatin1String("ticketId")).toString().isEmpty())
        return std::nullopt;
    return ticket;
}

QString errorCodeOf(const QByteArray &body)
{
    return QJsonDocument::fromJson(body).object().value(QLatin1String("error")).toString();
}

} // namespace

HttpTicketBackend::HttpTicketBackend(HttpBackendConfig config)
    : m_config(std::move(config))
{
}

TicketWriteAnswer HttpTicketBackend::classifyCreate(int networkError, int status,
                                                    const QByteArray &body,
                                                    const QByteArray &retryAfter, bool requestSent,
                                                    bool cancelled)
{
    const Http::NetworkFailure failure = Http::networkFailureOf(networkError);
    if (cancelled || Http::failedBelowHttp(networkError, status)) {
        const QString what = cancelled ? QStringLiteral("attempt cancelled")
            : failure == Http::NetworkFailure::Aborted
            ? QStringLiteral("transfer timeout")
            : QStringLiteral("network error ") + Http::networkErrorName(networkError);
        if (failure == Http::NetworkFailure::NeverConnected || !requestSent) {
            if (!cancelled && failure == Http::NetworkFailure::Configuration)
                return TicketWriteAnswer::failed(S::Rejected, what);
            // The backend never saw the whole request: it cannot have acted on it.
            return TicketWriteAnswer::failed(S::Transient, what + QStringLiteral(", not sent"));
        }
        // The request went out; whether the backend committed it is not known. Only the
        // key's status can tell, so this must never read as "transient, try again".
        return TicketWriteAnswer::failed(S::OutcomeUnknown,
                                         what + QStringLiteral(" after the request was sent"));
    }

    const QString statusText = QStringLiteral("HTTP %1").arg(status);
    const Http::StatusClass statusClass = Http::statusClassOf(status);
    if (statusClass == Http::StatusClass::Success) {
        const std::optional<QJsonObject> ticket = ticketOf(body);
        if (ticket && status == 201)
            return TicketWriteAnswer::created(*ticket);
        if (ticket && status == 200)
            return TicketWriteAnswer::alreadyExisted(*ticket);
        // The backend took the request and said something unexpected: it may well exist.
        return TicketWriteAnswer::failed(
            S::OutcomeUnknown,
            statusText + QStringLiteral(" without a ticket (%1 bytes)").arg(body.size()));
    }
    const QString error = errorCodeOf(body);
    const ResultCode::Code code = ResultCode::read(error);
    if (status == 404 && code == SupportCode::OrderNotFound)
        return TicketWriteAnswer::failed(S::NotFound, {});
    if (status == 409 && code == ResultCode::IdempotencyConflict)
        return TicketWriteAnswer::failed(S::Conflict, statusText + QStringLiteral(" ") + error);
    if (statusClass == Http::StatusClass::AccessDenied)
        return TicketWriteAnswer::failed(S::AccessDenied, statusText);
    // 503 says the backend did not take the request; any other 5xx may have committed it.
    if (statusClass == Http::StatusClass::Throttled || status == 503)
        return TicketWriteAnswer::failed(S::Transient, statusText,
                                         Http::parseRetryAfter(retryAfter));
    if (statusClass == Http::StatusClass::ServerError)
        return TicketWriteAnswer::failed(S::OutcomeUnknown, statusText);
    if (statusClass == Http::StatusClass::Redirect)
        return TicketWriteAnswer::failed(S::Rejected,
                                         statusText + QStringLiteral(" (redirects not followed)"));
    return TicketWriteAnswer::failed(
        S::Rejected, error.isEmpty() ? statusText : statusText + QStringLiteral(" ") + error);
}

TicketStatusAnswer HttpTicketBackend::classifyStatus(int networkError, int status,
                                                     const QByteArray &body,
                                                     const QString &idempotencyKey)
{
    if (Http::failedBelowHttp(networkError, status))
        return TicketStatusAnswer::unknown(QStringLiteral("network error ")
                                           + Http::networkErrorName(networkError));
    const QString statusText = QStringLiteral("HTTP %1").arg(status);
    if (status == 200) {
        const std::optional<QJsonObject> ticket = ticketOf(body);
        if (!ticket)
            return TicketStatusAnswer::unknown(statusText + QStringLiteral(" without a ticket"));
        const QString key = ticket->value(QLatin1String("idempotencyKey")).toString();
        if (!key.isEmpty() && key != idempotencyKey)
            return TicketStatusAnswer::unknown(statusText
                                               + QStringLiteral(" with another key's ticket"));
        return TicketStatusAnswer::exists(*ticket);
    }
    if (status == 404 && errorCodeOf(body) == QLatin1String(kTicketNotFoundError))
        return TicketStatusAnswer::doesNotExist();
    // A bare 404 (wrong base URL), 401/403, 5xx, redirects: nothing was learned.
    return TicketStatusAnswer::unknown(statusText);
}

TicketWriteAnswer HttpTicketBackend::create(const TicketRequest &request,
                                            const QString &idempotencyKey,
                                            const TrustedContext &context,
                                            const CancellationToken &cancellation) const
{
    QString problem = request.problem();
    if (problem.isEmpty())
        problem = TicketRequest::keyProblem(idempotencyKey);
    if (!problem.isEmpty())
        return TicketWriteAnswer::failed(S::Rejected, problem + QStringLiteral(", not sent"));

    const QUrl url = Internal::apiUrl(m_config.baseUrl, kTicketsPath);
    Internal::RestCall call{"POST",
                            url,
                            QJsonDocument(request.toJson()).toJson(QJsonDocument::Compact),
                            {{"Idempotency-Key", idempotencyKey.toUtf8()}},
                            m_config.transferTimeoutMs};
    killPoint(KillPoints::WriteBeforeSend);
    const Internal::RestExchange exchange = Internal::exchange(call, context, cancellation);
    TicketWriteAnswer answer = classifyCreate(exchange.networkError, exchange.status,
                                              exchange.body, exchange.retryAfter,
                                              exchange.requestSent, exchange.cancelled);
    if (answer.hasTicket() || answer.status == S::NotFound)
        return answer;

    // Details (the URL included) go to the local log only; the tool result stays generic.
    answer.detail = QStringLiteral("POST %1 key %2: %3")
                        .arg(url.toDisplayString(), idempotencyKey, answer.detail);
    switch (answer.status) {
    case S::Rejected:
    case S::AccessDenied:
    case S::Conflict:
        qCWarning(lcTools).noquote()
            << "ticket backend refused the write:" << answer.detail << "- staff" << context.userId
            << "tenant" << context.tenantId;
        break;
    case S::OutcomeUnknown:
        qCWarning(lcTools).noquote() << "ticket write outcome unknown:" << answer.detail;
        break;
    default:
        break;
    }
    return answer;
}

TicketStatusAnswer HttpTicketBackend::status(const QString &idempotencyKey,
                                             const TrustedContext &context,
                                             const CancellationToken &cancellation) const
{
    if (!TicketRequest::keyProblem(idempotencyKey).isEmpty())
        return TicketStatusAnswer::unknown(TicketRequest::keyProblem(idempotencyKey));
    // Percent-encoded by hand: QUrlQuery would leave '&', '=' and '+' of a key ambiguous.
    const QUrlQuery query(QStringLiteral("idempotencyKey=")
                          + QString::fromLatin1(QUrl::toPercentEncoding(idempotencyKey)));
    const QUrl url = Internal::apiUrl(m_config.baseUrl, kTicketsPath, query);
    const Internal::RestExchange exchange = Internal::exchange(
        {"GET", url, {}, {}, m_config.transferTimeoutMs}, context, cancellation);
    TicketStatusAnswer answer = exchange.cancelled
        ? TicketStatusAnswer::unknown(QStringLiteral("attempt cancelled"))
        : classifyStatus(exchange.networkError, exchange.status, exchange.body, idempotencyKey);
    if (answer.status == TicketStatusAnswer::Status::Unknown) {
        answer.detail = QStringLiteral("GET %1: %2").arg(url.toDisplayString(), answer.detail);
        qCWarning(lcTools).noquote() << "ticket status unknown:" << answer.detail;
    }
    return answer;
}

std::optional<int> HttpTicketBackend::duplicateKeyCount(
    const TrustedContext &context, const CancellationToken &cancellation) const
{
    const Internal::RestCall call{"GET",
                                  Internal::apiUrl(m_config.baseUrl, QStringLiteral("/sim/stats")),
                                  {},
                                  {},
                                  m_config.transferTimeoutMs};
    const Internal::RestExchange exchange = Internal::exchange(call, context, cancellation);
    if (exchange.status != 200)
        return std::nullopt;
    const QJsonValue value
        = QJsonDocument::fromJson(exchange.body).object().value(QLatin1String("duplicateTickets"));
    if (!value.isDouble())
        return std::nullopt;
    return value.toInt();
}

} // namespace AgentConsole
