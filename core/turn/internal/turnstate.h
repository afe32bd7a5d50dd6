#pragma once

#include "callsinflight.h"
#include "turnclock.h"
#include "../turnresult.h"

#include "../../llm/chatmodel.h"
#include "../../resilience/retrybudget.h"

#include <QPointer>

#include <memory>

namespace AgentConsole::Internal {

// What the agent loop knows of the turn it runs: its result so far (the records of every
// call), its language, stage and time, the model request in flight, the calls the executor
// runs, and the flags that tell a resumed, finishing or later turn apart. One at a time; the
// loop (agentloop.cpp) and its tool round (toolround.cpp) read and change it.
struct TurnState
{
    TurnResult result;
    Language language = Language::English;
    qsizetype conversationLengthBefore = 0;
    int pendingTools = 0;
    QPointer<ChatReply> reply;
    RetryBudgetPtr budget;
    // Its time and deadline (which stands still while a write waits for the staff member).
    std::unique_ptr<Internal::TurnClock> clock;
    int breakerOpensBefore = 0;
    TurnStage stage = TurnStage::Received;
    bool resumed = false; // carried on from a checkpoint: writes are recovered
    bool answerFailed = false; // the model failed on the answer, after the tools ran
    bool finishing = false; // the final checkpoint is being written
    // A team's journal refused a checkpoint: another desk carries this request on. Nothing
    // more of this turn is saved here (its row is that desk's).
    bool heldElsewhere = false;
    quint64 serial = 0; // tells this turn from a later one with the same requestId
    Internal::CallsInFlight calls; // the tool calls the executor runs, by operationId
};

} // namespace AgentConsole::Internal
