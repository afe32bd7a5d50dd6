#pragma once

#include "httpsupportbackend.h"
#include "ticketbackend.h"

namespace AgentConsole {

// Tickets on a REST support backend (support-sim or a real one; docs/SUPPORT-SIM.md):
//   POST /api/v1/tickets {orderId, category, description} with Idempotency-Key: <key>
//     -> 201 the new ticket, 200 the ticket the key already owns,
//        404 {"error":"ORDER_NOT_FOUND"}, 409 {"error":"IDEMPOTENCY_CONFLICT"}, 400
//   GET /api/v1/tickets?idempotencyKey=<key> -> 200 the ticket, 404 {"error":"TICKET_NOT_FOUND"}
// with the same X-Staff-Id, X-Tenant-Id and X-Request-Id headers, transport, per-thread
// manager and cancellation as the read-only lookups (internal/restexchange.h).
//
// A write is classified by whether the backend may have acted on it:
//   201 -> Created; 200 -> AlreadyExisted; other or unreadable 2xx -> OutcomeUnknown
//   nothing sent (connection refused, host not found, cancelled before the request went out)
//     -> Transient;  TLS or protocol failure before sending -> Rejected
//   timeout, cancellation or dropped connection after the request went out -> OutcomeUnknown,
//     never Transient: the caller asks status() before anything is retried
//   408, 429, 503 (the request was not processed) -> Transient, with Retry-After
//   500, 502, 504 and other 5xx (it may have been) -> OutcomeUnknown
//   404 ORDER_NOT_FOUND -> NotFound; 409 IDEMPOTENCY_CONFLICT -> Conflict;
//   401/403 -> AccessDenied; 400, other 4xx (a bare 404 or 409 too) and redirects -> Rejected
// A status query is Exists or DoesNotExist only on exactly those answers; anything else is
// Unknown.
class HttpTicketBackend final : public TicketBackend
{
public:
    explicit HttpTicketBackend(HttpBackendConfig config);

    const HttpBackendConfig &config() const { return m_config; }

    TicketWriteAnswer create(const TicketRequest &request, const QString &idempotencyKey,
                             const TrustedContext &context,
                             const CancellationToken &cancellation) const override;
    TicketStatusAnswer status(const QString &idempotencyKey, const TrustedContext &context,
                              const CancellationToken &cancellation) const override;
    // Asks GET /sim/stats (support-sim's report); a backend without it cannot say.
    std::optional<int> duplicateKeyCount(const TrustedContext &context,
                                         const CancellationToken &cancellation) const override;

    // Exposed for tests: what a finished exchange means. `networkError` is a
    // QNetworkReply::NetworkError; `status` is 0 when no HTTP response arrived.
    static TicketWriteAnswer classifyCreate(int networkError, int status, const QByteArray &body,
                                            const QByteArray &retryAfter, bool requestSent,
                                            bool cancelled);
    static TicketStatusAnswer classifyStatus(int networkError, int status, const QByteArray &body,
                                             const QString &idempotencyKey);

private:
    HttpBackendConfig m_config;
};

} // namespace AgentConsole
