#pragma once

#include "../turnresult.h"

#include "../../llm/chatmodel.h"

#include <QList>
#include <QString>

namespace AgentConsole::Internal {

// What a turn does next with the model's answer to one request.
struct ModelStep
{
    enum class Next {
        Fail, // the model could not answer: `text` says so
        Decline, // it declined (content filter): `text` says so, the turn completes
        TooManyToolRounds, // it asked for tools again after the last round: `text` says so
        RunTools, // `message` joins the conversation, then `toolCalls` run
        Answer, // `message` joins the conversation; `text` is the answer
    };

    Next next = Next::Fail;
    QString text;
    ChatMessage message;
    QList<ModelToolCall> toolCalls;
};

struct ModelAnswerBounds
{
    int maxShownReasoning = 0; // characters of reasoning kept for the window
    qsizetype maxArgumentBytes = 0; // a tool call's arguments, UTF-8 bytes
    qsizetype argumentExcerpt = 0; // characters kept of arguments over that bound
};

// Reads the model's answer into the turn's result (the model that answered, its attempts,
// retries and fallback hops, whether it declined or was cut off, and the reasoning the window
// may show, bounded) and says what the turn does next. A tool call's arguments over
// `bounds.maxArgumentBytes` are cut to an excerpt everywhere from here on, in the message that
// joins the conversation too (ModelToolCall::cutFromBytes says so).
// `toolRoundsLeft`: false once the turn ran its last tool round.
ModelStep readModelAnswer(const ChatResponse &response, TurnResult &result, Language language,
                          bool toolRoundsLeft, const ModelAnswerBounds &bounds);

// How many bytes `text` takes in UTF-8, counted without making the bytes.
qint64 utf8Size(const QString &text);

} // namespace AgentConsole::Internal
