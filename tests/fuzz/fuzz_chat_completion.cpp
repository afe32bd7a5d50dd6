// A whole (non-streaming) chat completion body as a server sends it
// (Internal::readCompletionBody), then what the model's reply checks before it answers.

#include "fuzzsupport.h"

#include "core/llm/chatcompletionparser.h"

using namespace AgentConsole;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using Outcome = Internal::ChatCompletionRead::Outcome;
    Fuzz::ensureApplication();
    const QByteArray body = Fuzz::bytesOf(data, size);

    Internal::ChatCompletionMessage message;
    const Internal::ChatCompletionRead read = Internal::readCompletionBody(body, &message);
    FUZZ_CHECK(read.outcome == Outcome::Read || read.outcome == Outcome::Unparseable
               || read.outcome == Outcome::ErrorObject || read.outcome == Outcome::Malformed);
    if (read.outcome == Outcome::Malformed)
        FUZZ_CHECK(!read.detail.isEmpty());
    if (read.outcome != Outcome::Read)
        return 0;
    FUZZ_CHECK(!message.content.contains(QChar(0)) && !message.reasoning.contains(QChar(0)));
    const QString reason = Internal::unreadableReason(message);
    const QList<ModelToolCall> calls = message.toolCalls.calls();
    FUZZ_CHECK(calls.size() <= Internal::MaxToolCallsPerMessage);
    for (qsizetype i = 0; i < calls.size(); ++i) {
        FUZZ_CHECK(!calls.at(i).id.isEmpty());
        for (qsizetype j = 0; j < i; ++j)
            FUZZ_CHECK(calls.at(i).id != calls.at(j).id);
    }
    (void)reason;
    (void)Internal::finishReasonFrom(message.finishReason);
    return 0;
}
