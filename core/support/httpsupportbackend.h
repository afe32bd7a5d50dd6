#pragma once

#include "supportbackend.h"

#include <QByteArray>
#include <QUrl>

namespace AgentConsole {

struct HttpBackendConfig
{
    QUrl baseUrl; // e.g. http://127.0.0.1:8080; the API lives under /api/v1
    int transferTimeoutMs = 5000; // per request; int because Qt 6.4's setTransferTimeout is
};

// A REST support backend (support-sim or a real one; docs/SUPPORT-SIM.md describes the API):
//   GET /api/v1/orders/{orderId}, /api/v1/orders/{orderId}/logistics, /api/v1/inventory/{sku}
// with X-Staff-Id, X-Tenant-Id and X-Request-Id headers.
//
// Each lookup runs inside a tool attempt on one of the executor's pool threads (the transport,
// shared with the ticket writes, is internal/restexchange.h). The thread's
// own QNetworkAccessManager (created lazily, destroyed when the thread ends) sends the request
// and a local QEventLoop waits for it; a short timer in that loop watches the attempt's
// cancellation token, so a timed-out or cancelled attempt aborts its reply promptly instead
// of holding the thread until the transfer timeout.
//
// Classification (the HTTP transport itself retries nothing; the executor decides):
//   2xx with a JSON object -> found;       2xx with anything else -> transient (logged)
//   404 with {"error":"*_NOT_FOUND"} -> not found (a normal answer, not retried)
//   404 without such a code -> rejected (wrong base URL or API version; logged)
//   408, 429, 5xx, connection refused/reset/closed, transfer timeout -> transient,
//   Retry-After (seconds or HTTP date) kept as retryAfter
//   401/403 -> access denied; 400, other 4xx and redirects -> rejected (both logged)
class HttpSupportBackend final : public SupportBackend
{
public:
    explicit HttpSupportBackend(HttpBackendConfig config);

    const HttpBackendConfig &config() const { return m_config; }

    LookupAnswer lookup(SupportLookup what, const QString &key, const TrustedContext &context,
                        const CancellationToken &cancellation) const override;

    // Exposed for tests: what a finished exchange means. `networkError` is a
    // QNetworkReply::NetworkError; `status` is 0 when no HTTP response arrived.
    static LookupAnswer classify(int networkError, int status, const QByteArray &body,
                                 const QByteArray &retryAfter, bool cancelled);
    // Seconds ("120") or an HTTP date; nothing when absent or unreadable.
    static std::optional<std::chrono::milliseconds> parseRetryAfter(const QByteArray &value);

private:
    QUrl urlFor(SupportLookup what, const QString &key) const;

    HttpBackendConfig m_config;
};

} // namespace AgentConsole
