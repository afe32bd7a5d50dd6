#include "chatcompletionparser.h"

#include "../http/ssestream.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QSet>

#include <algorithm>
#include <cmath>

namespace AgentConsole::Internal {
namespace {

// Arguments are normally a JSON string; some servers (older Ollama) send the object itself.
QString argumentsText(const QJsonValue &value)
{
    if (value.isString())
        return value.toString();
    if (value.isObject())
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    return {};
}

ChatCompletionRead malformed(const QString &detail)
{
    return {ChatCompletionRead::Outcome::Malformed, detail, {}};
}

ChatCompletionRead readChunk(const QJsonObject &chunk, ChatCompletionMessage *message)
{
    // Usage-only chunks have no choices; only the first choice is asked for (n = 1).
    const QJsonValue choices = chunk.value(QLatin1String("choices"));
    if (!(choices.isArray() || choices.isUndefined() || choices.isNull()))
        return malformed(QStringLiteral("stream chunk: choices is not an array"));
    if (choices.toArray().isEmpty())
        return {};
    const QJsonValue choiceValue = choices.toArray().at(0);
    const QJsonValue deltaValue = choiceValue.toObject().value(QLatin1String("delta"));
    if (!choiceValue.isObject()
        || !(deltaValue.isObject() || deltaValue.isNull() || deltaValue.isUndefined())) {
        return malformed(QStringLiteral("stream chunk: choice or delta not an object"));
    }
    const QJsonObject choice = choiceValue.toObject();
    const QJsonObject delta = deltaValue.toObject();
    const QJsonValue content = delta.value(QLatin1String("content"));
    const QJsonValue reasoning = delta.value(QLatin1String("reasoning_content"));
    const QJsonValue reason = choice.value(QLatin1String("finish_reason"));
    if (!isTextOrNothing(content) || !isTextOrNothing(reasoning) || !isTextOrNothing(reason))
        return malformed(QStringLiteral("stream chunk: a text field of another type"));
    if (!message->toolCalls.addDeltas(delta.value(QLatin1String("tool_calls")), true))
        return malformed(QStringLiteral("stream chunk: malformed tool_calls"));
    if (!reason.toString().isEmpty())
        message->finishReason = reason.toString();
    // DeepSeek's thinking: kept apart, never shown as the answer.
    message->reasoning += withoutNul(reasoning.toString());
    ChatCompletionRead read;
    read.text = withoutNul(content.toString());
    message->content += read.text;
    return read;
}

} // namespace

QString withoutNul(QString text)
{
    return text.remove(QChar(0));
}

bool isTextOrNothing(const QJsonValue &value)
{
    return value.isString() || value.isNull() || value.isUndefined();
}

FinishReason finishReasonFrom(const QString &reason)
{
    if (reason == QLatin1String("tool_calls") || reason == QLatin1String("function_call"))
        return FinishReason::ToolCalls;
    if (reason == QLatin1String("length"))
        return FinishReason::Length;
    if (reason == QLatin1String("content_filter"))
        return FinishReason::ContentFilter;
    return FinishReason::Stop;
}

bool ToolCallAssembler::addDeltas(const QJsonValue &value, bool useIndex)
{
    if (value.isNull() || value.isUndefined())
        return true;
    if (!value.isArray())
        return false;
    const QJsonArray deltas = value.toArray();
    for (qsizetype i = 0; i < deltas.size(); ++i) {
        // A stream that leaves out `index` sends one entry per call in order.
        const bool added = useIndex ? addDelta(deltas.at(i), int(i), true)
                                    : addDelta(deltas.at(i), int(m_calls.size()), false);
        if (!added)
            return false;
    }
    return true;
}

QList<ModelToolCall> ToolCallAssembler::calls() const
{
    QList<ModelToolCall> calls;
    QSet<QString> ids;
    for (qsizetype i = 0; i < m_calls.size(); ++i) {
        ModelToolCall call = m_calls.at(i);
        // The agent loop answers each call by id: a server without ids, or one that
        // repeats an id, still gets one distinct id per call.
        if (call.id.isEmpty() || ids.contains(call.id))
            call.id = QStringLiteral("call_%1").arg(i);
        while (ids.contains(call.id))
            call.id += QLatin1Char('_');
        ids.insert(call.id);
        calls.append(call);
    }
    return calls;
}

bool ToolCallAssembler::addDelta(const QJsonValue &value, int index, bool readIndex)
{
    if (!value.isObject())
        return false;
    const QJsonObject delta = value.toObject();
    const QJsonValue indexValue = delta.value(QLatin1String("index"));
    if (readIndex && !indexValue.isUndefined() && !indexValue.isNull()) {
        const double number = indexValue.toDouble(-1);
        if (!indexValue.isDouble() || number < 0 || number > MaxToolCallIndex
            || number != std::floor(number)) {
            return false;
        }
        index = int(number);
    }
    const QJsonValue idValue = delta.value(QLatin1String("id"));
    const QJsonValue functionValue = delta.value(QLatin1String("function"));
    if (!isTextOrNothing(idValue)
        || !(functionValue.isObject() || functionValue.isNull() || functionValue.isUndefined())) {
        return false;
    }
    const QJsonObject function = functionValue.toObject();
    const QJsonValue nameValue = function.value(QLatin1String("name"));
    const QJsonValue argumentsValue = function.value(QLatin1String("arguments"));
    if (!isTextOrNothing(nameValue)
        || !(isTextOrNothing(argumentsValue) || argumentsValue.isObject())) {
        return false;
    }
    const QString id = idValue.toString();
    qsizetype position = m_positionOfIndex.value(index, -1);
    if (position < 0
        || (!id.isEmpty() && !m_calls.at(position).id.isEmpty()
            && m_calls.at(position).id != id)) {
        if (m_calls.size() >= MaxToolCallsPerMessage)
            return false;
        position = m_calls.size();
        m_calls.append(ModelToolCall());
        m_positionOfIndex.insert(index, position);
    }
    ModelToolCall &call = m_calls[position];
    if (call.id.isEmpty())
        call.id = id;
    call.name += nameValue.toString(); // a name split across chunks is joined
    // Arguments over their bound are only counted from then on: a stream of 10 MB of them
    // must not cost 10 MB (twice, as UTF-16) before the turn refuses them.
    const QString piece = argumentsText(argumentsValue);
    if (call.cutFromBytes > 0) {
        call.cutFromBytes += piece.toUtf8().size();
        return true;
    }
    call.arguments += piece;
    // A UTF-16 unit is at least one UTF-8 byte: past the bound in units is past it in bytes.
    if (call.arguments.size() > ModelToolCall::maxArgumentBytes)
        cutArguments(call, call.arguments.toUtf8().size(), ModelToolCall::argumentExcerpt);
    return true;
}

void cutArguments(ModelToolCall &call, qint64 bytesSent, qsizetype excerpt)
{
    call.cutFromBytes = bytesSent;
    qsizetype keep = std::min(excerpt, call.arguments.size());
    if (keep > 0 && call.arguments.at(keep - 1).isHighSurrogate())
        --keep; // never half a character
    call.arguments.truncate(keep);
    call.arguments.squeeze();
}

ChatCompletionRead readStreamEvent(const SseEvent &event, ChatCompletionMessage *message)
{
    using Outcome = ChatCompletionRead::Outcome;
    if (event.event == "error")
        return {Outcome::ErrorEvent, {}, {}};
    // `event: ping` and other named events carry no part of the answer.
    if (!event.event.isEmpty() && event.event != "message")
        return {Outcome::Ignored, {}, {}};
    if (event.data.trimmed() == "[DONE]")
        return {Outcome::Done, {}, {}};
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(event.data, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return {Outcome::Unparseable, {}, {}};
    const QJsonObject chunk = document.object();
    // Some servers report an overload inside a stream that already began.
    if (chunk.contains(QLatin1String("error")))
        return {Outcome::ErrorObject, {}, {}};
    return readChunk(chunk, message);
}

ChatCompletionRead readCompletionBody(const QByteArray &body, ChatCompletionMessage *message)
{
    using Outcome = ChatCompletionRead::Outcome;
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return {Outcome::Unparseable, {}, {}};
    const QJsonObject object = document.object();
    const QJsonValue choices = object.value(QLatin1String("choices"));
    if (object.value(QLatin1String("error")).isObject() && choices.toArray().isEmpty())
        return {Outcome::ErrorObject, {}, {}};
    const QJsonValue choiceValue = choices.toArray().at(0);
    const QJsonValue messageValue = choiceValue.toObject().value(QLatin1String("message"));
    if (!choices.isArray() || !choiceValue.isObject() || !messageValue.isObject())
        return malformed(QStringLiteral("response body without choices[0].message"));
    const QJsonObject json = messageValue.toObject();
    const QJsonValue content = json.value(QLatin1String("content"));
    const QJsonValue reasoning = json.value(QLatin1String("reasoning_content"));
    const QJsonValue reason = choiceValue.toObject().value(QLatin1String("finish_reason"));
    if (!isTextOrNothing(content) || !isTextOrNothing(reasoning) || !isTextOrNothing(reason))
        return malformed(QStringLiteral("response body: a text field of another type"));
    // The same assembly as for a stream: a complete message is one delta per call.
    if (!message->toolCalls.addDeltas(json.value(QLatin1String("tool_calls")), false))
        return malformed(QStringLiteral("response body: malformed tool_calls"));
    message->content = withoutNul(content.toString());
    message->reasoning = withoutNul(reasoning.toString());
    message->finishReason = reason.toString();
    return {Outcome::Read, {}, message->content};
}

QString unreadableReason(const ChatCompletionMessage &message)
{
    const QList<ModelToolCall> calls = message.toolCalls.calls();
    if (std::any_of(calls.cbegin(), calls.cend(),
                    [](const ModelToolCall &call) { return call.name.trimmed().isEmpty(); })) {
        return QStringLiteral("a tool call without a name");
    }
    if (message.finishReason == QLatin1String("tool_calls") && calls.isEmpty())
        return QStringLiteral("finish_reason tool_calls without calls");
    // A refusal may come without text: the agent loop words it.
    if (calls.isEmpty() && message.content.trimmed().isEmpty()
        && message.finishReason != QLatin1String("content_filter"))
        return QStringLiteral("a message with neither text nor tool calls");
    return {};
}

} // namespace AgentConsole::Internal
