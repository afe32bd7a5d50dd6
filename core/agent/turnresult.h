#pragma once

#include "../resilience/attemptrecord.h"
#include "../resilience/toolresult.h"
#include "../tools/tooldescriptor.h"

#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>

#include <algorithm>

namespace AgentConsole {

// One tool call of a turn, as the cards beside the answer show it.
struct ToolCallRecord
{
    enum class State { Pending, AwaitingConfirmation, Running, Finished };

    int index = 0;        // position in the turn, across rounds
    int round = 1;        // which tool round planned it
    QString toolCallId;   // the model's id: a trace field only
    QString operationId;  // tenantId:conversationId:requestId:toolName:stepIndex, made by the app
    QString name;
    ToolLabels labels;     // how the window words the call (from the tool; not stored)
    QJsonObject arguments; // empty when the model's arguments were not valid JSON
    QString rawArguments;  // exactly what the model sent
    State state = State::Pending;
    bool confirmed = false; // a write the staff member approved (kept across a restart)
    ToolResult result;
    QList<AttemptRecord> attempts;
    qint64 totalMs = 0;
    QString incidentId;
    // >= 0 when an open circuit breaker refused the call: the cool-down it had left then.
    qint64 circuitCooldownLeftMs = -1;

    // Attempts that reached the tool, leaving out entries that only say why one was not made.
    int attemptsMade() const;
};

enum class TurnStatus { Completed, Failed, Cancelled };

// What the staff member got from a turn, told truly (DESIGN.md, "The path of one turn"): only
// Answered is green. A call answered "not found" counts as answered; a call refused by a bound,
// declined by the staff member or whose outcome is unknown does not. A cancelled turn is
// Failed here and Cancelled in its status.
enum class TurnOutcome {
    Answered,   // every call OK or answered "not found" (or the model answered without tools)
    Partial,    // some calls answered, some did not; or the answer was cut off
    Unanswered, // no call could answer, or the model declined
    Failed,     // the turn itself failed or was cancelled
};

struct TurnResult
{
    QString requestId;
    QString conversationId; // with requestId, names the turn
    QString question;
    QString answer;
    TurnStatus status = TurnStatus::Completed;
    QString model;         // which model wrote the answer
    QList<ToolCallRecord> toolCalls;
    int toolRounds = 0;
    qint64 totalMs = 0;
    QString incidentId;    // set when the turn failed on a bug; details are in the local log
    // The answer stopped at the model's output limit (finish_reason "length"): what is there
    // is shown, marked as cut off.
    bool answerCutOff = false;
    // A thinking model's reasoning during this turn (DeepSeek's reasoning_content), in the
    // order written; never part of the answer. For a collapsed "thinking" section at most.
    QString reasoning;

    // Every attempt of every layer, counted per turn (DESIGN.md, "Retry boundaries").
    int modelCalls = 0;     // model calls the loop made
    int modelAttempts = 0;  // attempts those calls took, retries included
    int modelRetryCount = 0; // real retries of one model; a fallback hop is not one
    int fallbackHops = 0;   // models of a fallback chain skipped (fallback_model_count)
    int retryBudget = 0;    // retries the turn was allowed across layers
    int breakerOpens = 0;   // circuit breakers that opened during the turn
    int idempotencyHits = 0;      // writes answered from the ledger without running
    int idempotencyConflicts = 0; // same key, other arguments
    int unknownExecutionStatus = 0; // writes whose outcome could not be learned
    int restarts = 0;       // times the turn was resumed after an interruption
    bool modelDeclined = false; // the model refused to answer (a content filter)

    TurnOutcome outcome() const;
    // Calls the console did not run because one model message asked for too many.
    int toolCallsOverLimit() const;

    int toolAttempts() const;
    int toolRetries() const;  // tool_retry_count
    int modelRetries() const { return modelRetryCount; }

    bool isPartialSuccess() const;
    // DESIGN.md's counters of this turn by name: model_retry_count, ..., agent_restart_count.
    QJsonObject counters() const;
    QJsonObject toJson() const; // the agent-cli --json shape
};

QString turnStatusName(TurnStatus status);
QString turnOutcomeName(TurnOutcome outcome);
QString attemptOutcomeName(AttemptOutcome outcome);

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::ToolCallRecord)
Q_DECLARE_METATYPE(AgentConsole::TurnResult)
