#pragma once

// Not part of the API: one HTTP exchange of HttpTransport (httptransport.cpp) with a
// Streamable HTTP server, and the request that opens it.

#include "../httptransport.h"
#include "../mcperror.h"

#include "../../http/ssestream.h"

#include <QByteArray>
#include <QJsonValue>
#include <QList>
#include <QNetworkRequest>
#include <QPointer>
#include <QString>

#include <optional>

class QNetworkReply;

namespace AgentConsole::Mcp::Internal {

// The Streamable HTTP headers (MCP 2025-06-18 and later), read and written in one place.
inline constexpr char SessionHeader[] = "Mcp-Session-Id";
inline constexpr char ProtocolVersionHeader[] = "MCP-Protocol-Version";
inline constexpr char LastEventIdHeader[] = "Last-Event-ID";

// A POST and its answer (JSON, or an SSE stream that may carry the server's own requests on
// the way), the GET stream the server opens, a resumption of either after `retry:`, or the
// DELETE that ends the session. It holds the reply while it runs and reads what arrives into
// frames, bounded; the transport decides what the frames and the reply's end mean.
struct HttpExchange
{
    enum class Kind { Post, Resume, Server, Delete };

    // What arrived, read.
    struct Reading
    {
        QList<QByteArray> frames; // JSON-RPC messages to deliver, in order
        QString oversized; // set when the answer broke its bound: what was too long
    };

    // The bytes that arrived with `status`: a refusal's body kept (bounded) for the log, a
    // JSON answer gathered up to `maxFrameBytes`, an SSE stream's message events as frames.
    Reading read(const QByteArray &bytes, int status, qsizetype maxFrameBytes);
    // The message events still in the SSE parser when the stream ended.
    QList<QByteArray> remainingFrames();
    // Why this exchange cannot be picked up again (too many reconnections without a message,
    // or a request's stream that named no event id to resume after); none when it can.
    std::optional<QString> whyNotResumable(int maxReconnects) const;
    // How long to wait before resuming: the server's `retry:`, else `defaultMs`, at most `maxMs`.
    qint64 resumeDelayMs(qint64 defaultMs, qint64 maxMs) const;

    Kind kind = Kind::Post;
    QPointer<QNetworkReply> reply;
    QJsonValue awaitedId; // undefined: nothing is awaited (a notification, the GET stream)
    bool answered = false;
    bool ended = false; // let go of because its request ended (HttpTransport::requestEnded)
    bool decided = false;
    bool isSse = false;
    SseStream sse;
    QByteArray body;
    QByteArray lastEventId;
    qint64 retryMs = -1;
    int reconnects = 0;
    QByteArray request; // a POST's message, sent again after a new token
    int authRetries = 0;
    bool carriedToken = false;
};

// The headers every exchange carries: the configured ones, the sign-in's token (unless those
// set Authorization themselves), the session and protocol version once known, the event id a
// resumption starts after; no redirect is followed, and a silent socket ends the exchange.
QNetworkRequest exchangeRequest(const HttpTransport::Options &options, HttpExchange::Kind kind,
                                const QByteArray &sessionId, const QByteArray &protocolVersion,
                                const QByteArray &lastEventId);

} // namespace AgentConsole::Mcp::Internal
