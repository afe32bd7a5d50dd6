// What an MCP server sends, as the client reads it (core/mcp/jsonrpc.h): any bytes as one
// frame, and the same bytes as an SSE stream whose events are frames (the Streamable HTTP
// answer). Properties: a frame is taken whole or refused with a classified error, never both;
// every message taken has the shape its kind promises; the last event id and retry read from
// a stream do not depend on how the bytes were split.

#include "fuzzsupport.h"

#include "core/http/ssestream.h"
#include "core/mcp/jsonrpc.h"

using namespace AgentConsole;
using namespace AgentConsole::Mcp;

namespace {

void checkFrame(const QByteArray &frame)
{
    FrameLimits limits;
    limits.maxBytes = 64 * 1024;
    const ParsedFrame parsed = parseFrame(frame, limits);
    FUZZ_CHECK(parsed.error.isError() == parsed.messages.isEmpty());
    if (parsed.error.isError()) {
        FUZZ_CHECK(parsed.error.failure == Failure::Malformed
                   || parsed.error.failure == Failure::Oversized);
        return;
    }
    FUZZ_CHECK(parsed.messages.size() <= limits.maxBatch);
    for (const JsonRpcMessage &message : parsed.messages) {
        switch (message.kind) {
        case JsonRpcMessage::Kind::Request:
            FUZZ_CHECK(!message.method.isEmpty() && (message.id.isDouble() || message.id.isString()));
            break;
        case JsonRpcMessage::Kind::Notification:
            FUZZ_CHECK(!message.method.isEmpty() && (message.id.isNull() || message.id.isUndefined()));
            break;
        case JsonRpcMessage::Kind::Result:
            FUZZ_CHECK(message.method.isEmpty());
            break;
        case JsonRpcMessage::Kind::Error:
            FUZZ_CHECK(message.errorMessage.size() <= 1024);
            break;
        }
        // What we would send back parses as what it is.
        const ParsedFrame again = parseFrame(message.toBytes(), limits);
        FUZZ_CHECK(!again.error.isError() && again.messages.first().kind == message.kind);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Fuzz::ensureApplication();
    const QByteArray input = Fuzz::bytesOf(data, size);
    checkFrame(input);

    SseStream whole(64 * 1024);
    QList<SseEvent> events = whole.feed(input).events;
    events += whole.finish();
    for (const SseEvent &event : std::as_const(events))
        checkFrame(event.data);
    SseStream pieces(64 * 1024);
    Fuzz::PieceLengths lengths(input);
    for (qsizetype at = 0; at < input.size();) {
        const qsizetype length = lengths.next();
        pieces.feed(input.mid(at, length));
        at += length;
    }
    pieces.finish();
    FUZZ_CHECK(pieces.lastEventId() == whole.lastEventId());
    FUZZ_CHECK(pieces.retryMs() == whole.retryMs());
    return 0;
}
