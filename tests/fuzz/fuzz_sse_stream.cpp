// The model's event stream as a server sends it: SseStream's framing, then every event read as
// a chat completion chunk, with its tool-call deltas assembled (core/llm/chatcompletionparser.h).
// Properties: the events do not depend on how the bytes were split into reads; a stream with a
// small line bound yields a prefix of the same events and then overflows.

#include "fuzzsupport.h"

#include "core/llm/chatcompletionparser.h"
#include "core/http/ssestream.h"

using namespace AgentConsole;

namespace {

struct Fed
{
    QList<SseEvent> events;
    bool overflow = false;
};

Fed feedInPieces(SseStream &stream, const QByteArray &input, Fuzz::PieceLengths *lengths)
{
    Fed fed;
    for (qsizetype at = 0; at < input.size();) {
        const qsizetype length = lengths ? lengths->next() : input.size();
        const SseChunk chunk = stream.feed(input.mid(at, length));
        fed.events += chunk.events;
        fed.overflow = fed.overflow || chunk.overflow;
        at += length;
    }
    fed.events += stream.finish();
    return fed;
}

// As the model's reply reads them: until the stream is done or the attempt is over.
void readAsReply(const QList<SseEvent> &events)
{
    using Outcome = Internal::ChatCompletionRead::Outcome;
    Internal::ChatCompletionMessage message;
    for (const SseEvent &event : events) {
        const Internal::ChatCompletionRead read = Internal::readStreamEvent(event, &message);
        if (read.outcome == Outcome::Malformed)
            FUZZ_CHECK(!read.detail.isEmpty());
        if (read.outcome != Outcome::Read && read.outcome != Outcome::Ignored)
            break;
    }
    const QString reason = Internal::unreadableReason(message);
    const QList<ModelToolCall> calls = message.toolCalls.calls();
    FUZZ_CHECK(calls.size() <= Internal::MaxToolCallsPerMessage);
    QStringList ids;
    for (const ModelToolCall &call : calls) {
        FUZZ_CHECK(!call.id.isEmpty());
        FUZZ_CHECK(!ids.contains(call.id)); // the loop answers each call by its id
        ids.append(call.id);
    }
    FUZZ_CHECK(!message.content.contains(QChar(0)));
    if (reason.isEmpty())
        FUZZ_CHECK(!calls.isEmpty() || !message.content.trimmed().isEmpty()
                   || message.finishReason == QLatin1String("content_filter"));
    (void)Internal::finishReasonFrom(message.finishReason);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Fuzz::ensureApplication();
    const QByteArray input = Fuzz::bytesOf(data, size);

    SseStream whole;
    const Fed all = feedInPieces(whole, input, nullptr);
    SseStream pieces;
    Fuzz::PieceLengths lengths(input);
    const Fed split = feedInPieces(pieces, input, &lengths);
    FUZZ_CHECK(all.overflow == split.overflow);
    FUZZ_CHECK(all.events == split.events);

    SseStream bounded(64);
    const Fed small = feedInPieces(bounded, input, nullptr);
    FUZZ_CHECK(small.events.size() <= all.events.size());
    for (qsizetype i = 0; i < small.events.size(); ++i)
        FUZZ_CHECK(small.events.at(i) == all.events.at(i));
    if (!small.overflow)
        FUZZ_CHECK(small.events == all.events);
    FUZZ_CHECK(bounded.hasOverflowed() == small.overflow);

    readAsReply(all.events);
    return 0;
}
