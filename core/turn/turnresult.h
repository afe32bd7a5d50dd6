#pragma once

#include "../resilience/attemptrecord.h"
#include "../resilience/breakerisolation.h"
#include "../resilience/toolresult.h"
#include "../telemetry/counters.h"
#include "../tools/tooldescriptor.h"
#include "priorwrites.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QStringList>
#include <QMetaType>
#include <QObject>
#include <QString>

#include <algorithm>
#include <optional>

namespace AgentConsole {

// One tool call of a turn, as the cards beside the answer show it.
struct ToolCallRecord
{
    enum class State { Pending, AwaitingConfirmation, Running, Finished };

    int index = 0; // position in the turn, across rounds
    int round = 1; // which tool round planned it
    QString toolCallId; // the model's id: a trace field only
    QString operationId; // tenantId:conversationId:requestId:toolName:stepIndex, made by the app
    QString name;
    ToolLabels labels; // how the window words the call (from the tool; not stored)
    QJsonObject arguments; // empty when the model's arguments were not valid JSON
    QString rawArguments; // exactly what the model sent
    State state = State::Pending;
    bool confirmed = false; // a write the staff member approved (kept across a restart)
    ToolResult result;
    QList<AttemptRecord> attempts;
    qint64 totalMs = 0;
    QString incidentId;
    // >= 0 when an open circuit breaker refused the call: the cool-down it had left then.
    qint64 circuitCooldownLeftMs = -1;
    // Set when the breaker was isolated by a lead (docs/TEAM.md): who, when and why.
    BreakerIsolation isolation;
    // The policy the call ran under, for the attempt timeline (kept in the checkpoint and the
    // JSON, so that a reopened conversation or an export shows the same markers): each
    // attempt's timeout, the call's worst case (its deadline), and the turn's deadline as the
    // time it had left when the call started (-1: none). 0 until the call starts.
    qint64 attemptTimeoutMs = 0;
    qint64 worstCaseMs = 0;
    qint64 turnDeadlineLeftMs = -1;
    int maxAttempts = 0; // the policy's attempts (retries + 1), for "attempt 2 of 3"
    // While an attempt runs (or waits in its tool's queue): its number and when it started,
    // in ms since the call started; 0 and -1 otherwise (between attempts, before, after).
    int runningAttempt = 0;
    qint64 runningAttemptStartedMs = -1;
    // An MCP server's question to staff during the call (elicitation; not stored): Waiting
    // while the call waits for staff's answer, then how the last one ended. Withdrawn: the
    // call ended first (its attempt timeout, a cancel), and the server was told.
    enum class Question { None, Waiting, Accepted, Declined, Cancelled, Withdrawn };
    Question question = Question::None;
    QString questionFrom; // the server that asked (its mcp.json name)
    // A write awaiting confirmation: what its PriorWritesCheck found (not stored).
    PriorWrites priorWrites;

    // Attempts that reached the tool, leaving out entries that only say why one was not made.
    int attemptsMade() const;
};

// An isolation as a call's checkpoint and JSON keep it ({"dependency", "reason",
// "leadStaffId", "leadRole", "since", "until"}; times in ISO 8601 UTC, "until" left out when
// there is none), and read back (a null one from anything else).
QJsonObject isolationToJson(const BreakerIsolation &isolation);
BreakerIsolation isolationFromJson(const QJsonObject &json);

// What the model layer is doing while a turn waits for it, for progress in words ("the model
// is retrying: attempt 2 of 3", "answering with the fallback model"). Not stored: the
// finished turn's counters (TurnResult) say the same once it is over.
struct ModelProgress
{
    enum class Kind { Retrying, FallingBack };

    Kind kind = Kind::Retrying;
    QString model; // the model retried, or the fallback now asked
    int attempt = 0; // Retrying: the attempt about to start (2 for the first retry)
    int maxAttempts = 0; // Retrying: the provider's policy's attempts
};

// A turn's enums, printable by name (Q_ENUM: logs and failing comparisons say "Partial", not
// "1"), each with the exact name it is stored and exported by (turnStatusName() etc.).
struct TurnEnums
{
    Q_GADGET
public:
    // "completed", "failed", "cancelled": the checkpoint's and agent-cli --json's status.
    enum class Status { Completed, Failed, Cancelled };
    Q_ENUM(Status)

    // What the staff member got from a turn, told truly (DESIGN.md, "The path of one turn"):
    // only Answered is green. A call answered "not found" counts as answered; a call refused
    // by a bound, declined by the staff member or whose outcome is unknown does not. A
    // cancelled turn is Failed here and Cancelled in its status. "answered", "partial", ...
    enum class Outcome {
        Answered, // every call OK or answered "not found" (or answered without tools)
        Partial, // some calls answered, some did not; or the answer was cut off
        Unanswered, // no call could answer, or the model declined
        Failed, // the turn itself failed or was cancelled
    };
    Q_ENUM(Outcome)

    // Where a turn stands (DESIGN.md, "The path of one turn"). A later tool round goes back
    // to Planned; Completed and Failed are final. Stored in the journal as "RECEIVED",
    // "PLANNED", ... (turnStageName() in turncheckpoint.h).
    enum class Stage { Received, Planned, ToolsExecuted, AnswerGenerating, Completed, Failed };
    Q_ENUM(Stage)
};
using TurnStatus = TurnEnums::Status;
using TurnOutcome = TurnEnums::Outcome;
using TurnStage = TurnEnums::Stage;

struct TurnResult
{
    QString requestId;
    QString conversationId; // with requestId, names the turn
    // The scenario run the turn belongs to (its title); empty for a staff member's own turn.
    // Kept with the turn, listed apart by the history, marked in the window and exports.
    QString scenario;
    QString question;
    QString answer;
    TurnStatus status = TurnStatus::Completed;
    QString model; // which model wrote the answer
    QList<ToolCallRecord> toolCalls;
    int toolRounds = 0;
    qint64 totalMs = 0;
    QString incidentId; // set when the turn failed on a bug; details are in the local log
    // The answer stopped at the model's output limit (finish_reason "length"): what is there
    // is shown, marked as cut off.
    bool answerCutOff = false;
    // A thinking model's reasoning during this turn (DeepSeek's reasoning_content), in the
    // order written; never part of the answer. For a collapsed "thinking" section at most.
    QString reasoning;

    // Every attempt of every layer, counted per turn (DESIGN.md, "Retry boundaries").
    int modelCalls = 0; // model calls the loop made
    int modelAttempts = 0; // attempts those calls took, retries included
    int modelRetryCount = 0; // real retries of one model; a fallback hop is not one
    int fallbackHops = 0; // models of a fallback chain skipped (fallback_model_count)
    // Earlier turns of the conversation not sent to the model (its conversation budget,
    // AgentLoop::TurnLimits::conversationChars): the answer did not see them.
    int turnsLeftOut = 0;
    int retryBudget = 0; // retries the turn was allowed across layers
    int breakerOpens = 0; // circuit breakers that opened during the turn
    int idempotencyHits = 0; // writes answered from the ledger without running
    int idempotencyConflicts = 0; // same key, other arguments
    int unknownExecutionStatus = 0; // writes whose outcome could not be learned
    int restarts = 0; // times the turn was resumed after an interruption
    bool modelDeclined = false; // the model refused to answer (a content filter)
    // The MCP servers still not ready when the model was first asked (after the bounded wait
    // for them): their tools were not offered in this turn. Empty when every one was.
    QStringList serversNotReady;
    // The faults and retry policies in force when the turn started (AgentRuntime::
    // conditionsNow()): {"faults": {"active", "summary", "plan"}, "policies": {"default",
    // "custom": {tool: describe}}}. Empty when the loop was given none to ask.
    QJsonObject conditions;
    // The team's managed policy in force when the turn started (docs/POLICY.md):
    // {"version", "origin"}, or the string "none" when there was none; undefined for a turn
    // kept before policies were recorded, or by a loop given none to ask.
    QJsonValue teamPolicy = QJsonValue(QJsonValue::Undefined);
    // Whether `value` is such a record ("none", or an object of two non-empty strings).
    static bool isTeamPolicyRecord(const QJsonValue &value);

    TurnOutcome outcome() const;
    // Calls the console did not run because one model message asked for too many.
    int toolCallsOverLimit() const;

    int toolAttempts() const;
    int toolRetries() const; // tool_retry_count
    int modelRetries() const { return modelRetryCount; }

    bool isPartialSuccess() const;
    // DESIGN.md's counters of this turn by name (Metrics::counterName): model_retry_count,
    // ..., fallback_model_count; not duplicate_business_object_count, the backend's figure.
    QJsonObject counters() const;
    QJsonObject toJson() const; // the agent-cli --json shape
    // Reads that shape back (an export opened for viewing): strict on names and types, so a
    // damaged or foreign file is refused with a line naming the field. What the shape does
    // not carry (reasoning, the labels, the policy figures of a call) stays at its default;
    // fromJson(t.toJson())->toJson() == t.toJson().
    static std::optional<TurnResult> fromJson(const QJsonObject &json, QString *error);
};

QString turnStatusName(TurnStatus status);
std::optional<TurnStatus> turnStatusFromName(QStringView name);
QString turnOutcomeName(TurnOutcome outcome);
QString attemptOutcomeName(AttemptOutcome outcome);
std::optional<AttemptOutcome> attemptOutcomeFromName(QStringView name);

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::ToolCallRecord)
Q_DECLARE_METATYPE(AgentConsole::ModelProgress)
Q_DECLARE_METATYPE(AgentConsole::TurnResult)
