#pragma once

#include "../../resilience/cancellationtoken.h"
#include "../../resilience/tooloperation.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QUrl>
#include <QUrlQuery>

#include <utility>

namespace AgentConsole::Internal {

// One request to the support REST API (the read lookups and the ticket writes share it).
struct RestCall
{
    QByteArray verb = "GET";
    QUrl url;
    QByteArray jsonBody; // sent as application/json when not empty
    QList<std::pair<QByteArray, QByteArray>> headers; // beyond the staff and tenant headers
    int transferTimeoutMs = 5000;
};

// What one exchange produced, before anyone classified it.
struct RestExchange
{
    int networkError = 0; // QNetworkReply::NetworkError
    int status = 0; // 0: no HTTP response arrived
    QByteArray body;
    QByteArray retryAfter;
    bool cancelled = false; // the attempt's token was raised and the reply aborted
    bool requestSent = false; // the whole request reached the connection: from here on the
                              // server may have acted on it, answer or not
    bool tooLarge = false; // the answer passed maxResponseBytes and was aborted: no body
};

// What the console reads of one backend answer (DESIGN.md, "Bounds"): the API's answers are
// small JSON objects; anything longer is aborted as it arrives, never buffered whole.
inline constexpr qint64 maxResponseBytes = 1024 * 1024;
// How deeply a backend answer may nest: deeper than this it is unreadable, so that nothing
// the console stores or prints nests beyond what JSON readers accept by default.
inline constexpr int maxResponseDepth = 32;

// `path` (already percent-encoded) below the base URL's own path (Http::joinPath); query
// and fragment replaced.
QUrl apiUrl(const QUrl &baseUrl, const QString &path, const QUrlQuery &query = {});

// Sends the call with X-Staff-Id, X-Tenant-Id and X-Request-Id from the trusted context and
// waits for it in a local event loop on the calling pool thread, through that thread's own
// QNetworkAccessManager (created lazily, released when the thread finishes). A short timer
// in the loop watches `cancellation`, so a timed-out or cancelled attempt aborts its reply
// promptly instead of holding the thread until the transfer timeout. Never on the GUI thread.
RestExchange exchange(const RestCall &call, const TrustedContext &context,
                      const CancellationToken &cancellation);

} // namespace AgentConsole::Internal
