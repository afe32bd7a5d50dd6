#pragma once

#include "chatmodel.h"

#include <QByteArray>
#include <QHash>
#include <QJsonValue>
#include <QList>
#include <QString>

namespace AgentConsole {
struct SseEvent;
}

namespace AgentConsole::Internal {

// A tool call's `index` beyond this is not a position in a message but garbage.
inline constexpr int MaxToolCallIndex = 4095;
// Tool calls in one message. The agent loop runs 16 of them (a setting) and answers the rest
// TOOL_CALL_LIMIT, one answer a call; past this many the message is not a plan but a flood
// (150,000 calls fit in 16 MiB) and is unreadable as a whole, so nothing of it is kept.
inline constexpr qsizetype MaxToolCallsPerMessage = 4096;

// NUL characters (raw or escaped) cut C strings short in logs and widgets: text drops them.
QString withoutNul(QString text);
// What an optional text field of a message may be: a string, null or absent.
bool isTextOrNothing(const QJsonValue &value);
FinishReason finishReasonFrom(const QString &reason);
// Keeps `excerpt` characters of `call`'s arguments (never half a character) and records that
// the model sent `bytesSent` UTF-8 bytes of them (ModelToolCall::cutFromBytes).
void cutArguments(ModelToolCall &call, qint64 bytesSent, qsizetype excerpt);

// Tool calls as they arrive in stream deltas: the first delta of a call carries its id and
// name, later ones pieces of its arguments (and, from some servers, pieces of its name), all
// tagged with the call's `index`; the deltas of parallel calls may interleave. A delta with
// a new id at an index already in use starts another call (two calls that share an index
// stay two). Arguments are kept as raw text, malformed or not; the shape of each delta is
// checked, and a delta of the wrong shape makes the whole message unreadable.
class ToolCallAssembler final
{
public:
    // `useIndex` is false for a complete message: there every entry is one call.
    bool addDeltas(const QJsonValue &value, bool useIndex);
    // Every call with an id of its own (made up where the server gave none or repeated one).
    QList<ModelToolCall> calls() const;
    bool isEmpty() const { return m_calls.isEmpty(); }

private:
    bool addDelta(const QJsonValue &value, int index, bool readIndex);

    QList<ModelToolCall> m_calls; // in the order they began
    QHash<int, qsizetype> m_positionOfIndex; // a stream's `index` -> the call it continues
};

// The assistant message of one chat completion as read so far: from one JSON body, or from
// the chunks of a stream. The model's transport (openaicompatiblemodel.cpp) owns the wire and
// the retries; this is the part that reads the server's text, kept apart so that it can be
// read without a network (tests/fuzz).
struct ChatCompletionMessage
{
    ToolCallAssembler toolCalls;
    QString content;
    QString reasoning;
    QString finishReason;
};

// What reading one piece of outside text came to.
struct ChatCompletionRead
{
    enum class Outcome {
        Read, // taken into the message (`text`: content it added, maybe empty)
        Ignored, // an event that carries no part of the answer (a ping)
        Done, // the stream's "[DONE]"
        ErrorEvent, // an `event: error`
        Unparseable, // not a JSON object
        ErrorObject, // {"error": ...} where an answer was due
        Malformed, // JSON of the wrong shape; `detail` says which (the local log only)
    };
    Outcome outcome = Outcome::Read;
    QString detail;
    QString text;
};

// One event of a chat completion stream into `message`. A Malformed chunk may leave part of
// itself in `message`: the attempt that read it is over anyway.
ChatCompletionRead readStreamEvent(const SseEvent &event, ChatCompletionMessage *message);
// A whole (non-streaming) chat completion body into `message`.
ChatCompletionRead readCompletionBody(const QByteArray &body, ChatCompletionMessage *message);
// Why `message` cannot be acted on (a tool call without a name, tool_calls without calls, no
// text and no calls), or empty when it can: text, or tool calls that each name a tool, and a
// finish reason that agrees.
QString unreadableReason(const ChatCompletionMessage &message);

} // namespace AgentConsole::Internal
