#pragma once

#include "turnresult.h"

#include "../llm/chatmodel.h"

#include <QList>
#include <QString>

namespace AgentConsole::Internal {

// What a turn does next with the model's answer to one request.
struct ModelStep
{
    enum class Next {
        Fail,              // the model could not answer: `text` says so
        Decline,           // it declined (content filter): `text` says so, the turn completes
        TooManyToolRounds, // it asked for tools again after the last round: `text` says so
        RunTools,          // `message` joins the conversation, then `toolCalls` run
        Answer,            // `message` joins the conversation; `text` is the answer
    };

    Next next = Next::Fail;
    QString text;
    ChatMessage message;
    QList<ModelToolCall> toolCalls;
};

// Reads the model's answer into the turn's result (the model that answered, its attempts,
// retries and fallback hops, whether it declined or was cut off, and the reasoning the window
// may show, bounded to `maxShownReasoning` characters) and says what the turn does next.
// `toolRoundsLeft`: false once the turn ran its last tool round.
ModelStep readModelAnswer(const ChatResponse &response, TurnResult &result, Language language,
                          bool toolRoundsLeft, int maxShownReasoning);

} // namespace AgentConsole::Internal
