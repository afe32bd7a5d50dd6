#include "httpexchange.h"

#include "../../oauth/authorizer.h"

namespace AgentConsole::Mcp::Internal {

namespace {

constexpr qsizetype kMaxErrorBodyBytes = 4096; // kept of a refusal, for the log

bool isMessageEvent(const SseEvent &event)
{
    return (event.event.isEmpty() || event.event == "message") && !event.data.trimmed().isEmpty();
}

} // namespace

HttpExchange::Reading HttpExchange::read(const QByteArray &bytes, int status,
                                         qsizetype maxFrameBytes)
{
    Reading reading;
    if (status / 100 != 2) {
        if (body.size() < kMaxErrorBodyBytes)
            body.append(bytes.left(kMaxErrorBodyBytes - body.size()));
        return reading;
    }
    if (!isSse) {
        if (body.size() + bytes.size() > maxFrameBytes) {
            reading.oversized = QStringLiteral("an HTTP answer longer than %1 bytes")
                                    .arg(maxFrameBytes);
            return reading;
        }
        body.append(bytes);
        return reading;
    }
    const SseChunk chunk = sse.feed(bytes);
    if (!sse.lastEventId().isEmpty())
        lastEventId = sse.lastEventId();
    if (sse.retryMs() >= 0)
        retryMs = sse.retryMs();
    for (const SseEvent &event : chunk.events) {
        if (isMessageEvent(event))
            reading.frames.append(event.data);
    }
    if (chunk.overflow)
        reading.oversized = QStringLiteral("an SSE event longer than %1 bytes").arg(maxFrameBytes);
    return reading;
}

QList<QByteArray> HttpExchange::remainingFrames()
{
    QList<QByteArray> frames;
    for (const SseEvent &event : sse.finish()) {
        if (isMessageEvent(event))
            frames.append(event.data);
    }
    return frames;
}

std::optional<QString> HttpExchange::whyNotResumable(int maxReconnects) const
{
    if (reconnects >= maxReconnects)
        return QStringLiteral("the stream broke %1 times without an answer").arg(reconnects);
    // Nothing to resume from: the server would not know which answer we wait for.
    if (kind != Kind::Server && lastEventId.isEmpty())
        return QStringLiteral("the answer stream ended without the answer and without an "
                              "event id");
    return std::nullopt;
}

qint64 HttpExchange::resumeDelayMs(qint64 defaultMs, qint64 maxMs) const
{
    return std::min<qint64>(retryMs >= 0 ? retryMs : defaultMs, maxMs);
}

QNetworkRequest exchangeRequest(const HttpTransport::Options &options, HttpExchange::Kind kind,
                                const QByteArray &sessionId, const QByteArray &protocolVersion,
                                const QByteArray &lastEventId)
{
    using Kind = HttpExchange::Kind;
    QNetworkRequest request(options.url);
    for (auto it = options.headers.cbegin(); it != options.headers.cend(); ++it)
        request.setRawHeader(it.key(), it.value());
    if (options.authorizer && !request.hasRawHeader("Authorization")) {
        const QByteArray token = options.authorizer->authorizationHeader();
        if (!token.isEmpty())
            request.setRawHeader("Authorization", token);
    }
    if (kind == Kind::Post) {
        request.setHeader(QNetworkRequest::ContentTypeHeader,
                          QByteArrayLiteral("application/json"));
        request.setRawHeader("Accept", "application/json, text/event-stream");
    } else if (kind != Kind::Delete) {
        request.setRawHeader("Accept", "text/event-stream");
    }
    if (!sessionId.isEmpty())
        request.setRawHeader(SessionHeader, sessionId);
    if (!protocolVersion.isEmpty())
        request.setRawHeader(ProtocolVersionHeader, protocolVersion);
    if (!lastEventId.isEmpty())
        request.setRawHeader(LastEventIdHeader, lastEventId);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setTransferTimeout(kind == Kind::Delete ? options.closeTimeoutMs
                                                    : options.idleTimeoutMs);
    return request;
}

} // namespace AgentConsole::Mcp::Internal
