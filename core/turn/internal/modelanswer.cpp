#include "modelanswer.h"

#include "../../llm/chatcompletionparser.h"
#include "../../telemetry/logging.h"

#include <algorithm>

namespace AgentConsole::Internal {

qint64 utf8Size(const QString &text)
{
    qint64 bytes = 0;
    const QChar *data = text.constData();
    const qsizetype size = text.size();
    for (qsizetype i = 0; i < size; ++i) {
        const char16_t c = data[i].unicode();
        if (c < 0x80) {
            bytes += 1;
        } else if (c < 0x800) {
            bytes += 2;
        } else if (QChar::isHighSurrogate(c) && i + 1 < size
                   && QChar::isLowSurrogate(data[i + 1].unicode())) {
            bytes += 4;
            ++i;
        } else {
            bytes += 3;
        }
    }
    return bytes;
}

namespace {

// The model's tool calls with arguments over the bound cut to an excerpt.
QList<ModelToolCall> boundedToolCalls(QList<ModelToolCall> calls, const ModelAnswerBounds &bounds)
{
    for (ModelToolCall &call : calls) {
        // At most 3 bytes a UTF-16 unit: shorter texts need no count.
        if (call.arguments.size() * 3 <= bounds.maxArgumentBytes)
            continue;
        const qint64 bytes = utf8Size(call.arguments);
        if (bytes <= bounds.maxArgumentBytes)
            continue;
        cutArguments(call, bytes, bounds.argumentExcerpt);
    }
    return calls;
}

} // namespace

ModelStep readModelAnswer(const ChatResponse &response, TurnResult &result, Language language,
                          bool toolRoundsLeft, const ModelAnswerBounds &bounds)
{
    const int maxShownReasoning = bounds.maxShownReasoning;
    using Next = ModelStep::Next;
    result.model = response.model;
    result.modelAttempts += std::max(1, response.attempts);
    result.modelRetryCount += response.retries;
    result.fallbackHops += response.fallbackHops;
    // What the window may show of the model's thinking is bounded on its own: the full text
    // goes back to its provider with the conversation, but a model that thinks for megabytes
    // must not make every checkpoint and the transcript carry them twice.
    if (!response.isError() && !response.reasoningContent.isEmpty()
        && result.reasoning.size() < maxShownReasoning) {
        if (!result.reasoning.isEmpty())
            result.reasoning += QStringLiteral("\n\n");
        result.reasoning += response.reasoningContent;
        if (result.reasoning.size() > maxShownReasoning) {
            result.reasoning.truncate(maxShownReasoning);
            result.reasoning += localized(language, "\n… (the rest is not shown)",
                                          "\n……（其余部分未显示）");
        }
    }

    ModelStep step;
    if (response.isError()) {
        qCWarning(lcAgent).noquote()
            << "turn" << result.requestId << "model call failed:" << response.errorCode;
        step.text = response.errorMessage.isEmpty()
            ? localized(language, "The model could not answer. Please try again.",
                        "模型暂时无法回答，请稍后重试。")
            : response.errorMessage;
        return step;
    }
    if (response.finishReason == FinishReason::ContentFilter) {
        result.modelDeclined = true;
        step.next = Next::Decline;
        step.text = localized(language, "The model declined to answer this question.",
                              "模型拒绝回答该问题。");
        return step;
    }
    if (!response.toolCalls.isEmpty()) {
        if (!toolRoundsLeft) {
            step.next = Next::TooManyToolRounds;
            step.text = localized(language,
                                  "The request needed more tool rounds than allowed (5).",
                                  "该请求需要的工具调用轮次超过上限（5 轮）。");
            return step;
        }
        step.next = Next::RunTools;
        step.toolCalls = boundedToolCalls(response.toolCalls, bounds);
        step.message = ChatMessage::assistant(response.content, step.toolCalls);
        // A thinking provider wants this back in every later request (DeepSeek answers 400
        // otherwise); the provider layer sends it only to the one that wrote it.
        step.message.reasoningContent = response.reasoningContent;
        step.message.reasoningOrigin = response.reasoningOrigin;
        return step;
    }
    result.answerCutOff = response.finishReason == FinishReason::Length;
    step.next = Next::Answer;
    step.message = ChatMessage::assistant(response.content);
    step.text = response.content;
    return step;
}

} // namespace AgentConsole::Internal
