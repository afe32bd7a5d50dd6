#pragma once

// Not part of the API. AgentLoop's state and its parts: agentloop.cpp (the path of a turn),
// agentloopwrites.cpp (confirmation, and the WriteGuard that takes writes through the
// idempotency ledger) and agentlooprecovery.cpp (resumption, and the TurnRecorder that saves
// checkpoints to the journal).

#include "agentloop.h"

#include "../ledger/idempotencyledger.h"
#include "../resilience/circuitbreaker.h"
#include "../resilience/toolexecutor.h"
#include "callsinflight.h"
#include "turncheckpoint.h"
#include "turnclock.h"

#include <QElapsedTimer>
#include <QFuture>
#include <QHash>
#include <QPointer>
#include <QSet>
#include <QTimer>

#include <functional>
#include <optional>
#include <utility>

namespace AgentConsole {

namespace Internal {
QString shortId(const QString &prefix);
QString systemPrompt();
// What a write's answer says for its ledger row; a write that timed out, or failed after an
// attempt that timed out, becomes EXECUTION_STATUS_UNKNOWN first (it may have been committed).
LedgerStatus settleWriteResult(ToolResult &result, const QList<AttemptRecord> &attempts,
                               Language language);

// The write guard: the way of every write through the idempotency ledger. It owns the ledger
// and what it holds for the running turn: the writes whose row this turn claimed
// (PROCESSING), and those whose answer is in while the ledger records it. One turn at a time;
// forgetTurn() starts the next one clean.
class WriteGuard final
{
public:
    explicit WriteGuard(IdempotencyLedger *ledger)
        : m_ledger(ledger)
    {
    }

    bool hasLedger() const { return m_ledger != nullptr; }
    // A resumed turn recovers (its own orphaned PROCESSING row is taken over); a new one
    // begins. Needs a ledger.
    QFuture<LedgerClaim> claim(const QString &operationId, const QString &toolName,
                               const QByteArray &requestHash, bool resumed);
    void claimed(int index) { m_claimed.insert(index); }
    // A claimed write's answer is in; until recorded(), it is the write's outcome.
    void answered(int index, const ToolCallOutcome &outcome) { m_answered.insert(index, outcome); }
    // The ledger records a write's answer (a row that is not PROCESSING stays as it is).
    QFuture<LedgerCompletion> record(const QString &operationId, LedgerStatus status,
                                     const ToolResult &result);
    // The ledger holds the answer: the write is no longer this turn's to settle.
    void recorded(int index);
    // A claimed write whose turn stopped: its row must not stay PROCESSING (nobody could run
    // it again), so it becomes FAILED_RETRYABLE holding `reported`, and whoever claims it next
    // asks the backend first.
    void releaseClaim(const QString &operationId, const ToolResult &reported);

    QSet<int> claimedWrites() const { return m_claimed; }
    // A claimed write whose turn stopped, finished on its record. Its answer, if it is in (the
    // ledger is recording it, or it arrived just before the stop), is its result and what the
    // ledger records. Otherwise it may still reach the backend: its row must not stay
    // PROCESSING (nobody could ever run it again), so it becomes retryable and whoever claims
    // it next asks the backend first; and staff must not read "cancelled" for a write that may
    // have happened: EXECUTION_STATUS_UNKNOWN. True when the outcome is unknown.
    bool settleStopped(ToolCallRecord &call, const CallsInFlight::Ended &ended,
                       Language language);
    // The outcome of a claimed write whose answer is in, while the ledger records it.
    std::optional<ToolCallOutcome> answerOf(int index) const;
    void forgetTurn();

private:
    IdempotencyLedger *m_ledger;
    QSet<int> m_claimed;
    QHash<int, ToolCallOutcome> m_answered;
};

// The turn recorder: where a turn's checkpoints and tool results are saved. It owns the
// journal and the kill point after each save (the crash-injection suite stops the process
// there). Without a journal it records nothing and says so.
class TurnRecorder final
{
public:
    // Results are delivered on `context`'s thread, and not at all once it is gone.
    TurnRecorder(TurnJournal *journal, QObject *context)
        : m_journal(journal)
        , m_context(context)
    {
    }

    bool isRecording() const { return m_journal != nullptr; }
    // Saves a checkpoint; once it is on disk (or failed), passes the kill point
    // "checkpoint-<STAGE>" and calls `done(saved)`. Needs a journal.
    void save(const TurnCheckpoint &checkpoint, std::function<void(bool saved)> done);
    // Appends call `index`'s result alone, without holding anything up.
    void saveToolResult(const QString &conversationId, const QString &requestId, int index,
                        const ToolCallRecord &record);

private:
    TurnJournal *m_journal;
    QObject *m_context;
};

} // namespace Internal

class AgentLoop::Private
{
public:
    struct Turn
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
        bool resumed = false;      // carried on from a checkpoint: writes are recovered
        bool answerFailed = false; // the model failed on the answer, after the tools ran
        bool finishing = false;    // the final checkpoint is being written
        quint64 serial = 0;        // tells this turn from a later one with the same requestId
        Internal::CallsInFlight calls; // the tool calls the executor runs, by operationId
    };

    Private(AgentLoop *q, Dependencies dependencies)
        : q(q)
        , model(dependencies.model)
        , tools(dependencies.tools)
        , executor(dependencies.executor)
        , toolBreakers(std::move(dependencies.toolBreakers))
        , toolPolicies(std::move(dependencies.toolPolicies))
        , toolsReady(std::move(dependencies.toolsReady))
        , breakerRegistry(dependencies.breakerRegistry)
        , writes(dependencies.ledger)
        , recorder(dependencies.journal, q)
    {
        Q_ASSERT(model && tools && executor);
    }

    void resetConversation();
    void callModel();
    // The first model request of a turn, once the tools still starting are there (or the
    // wait for them has passed): the ones not ready are named in the turn's result.
    void callModelWithTools();
    void onModelFinished(ChatReply *reply);
    void runTools(const QList<ModelToolCall> &calls);
    void startCalls(const QList<int> &indexes);
    void dispatch(int index);
    void execute(int index, const QString &idempotencyKey = {}, bool mayHaveRun = false);
    void executeWrite(int index);
    void confirmed(int index);
    void onClaim(int index, const LedgerClaim &claim);
    void onWriteFinished(int index, ToolCallOutcome outcome);
    void onToolFinished(int index, const ToolCallOutcome &outcome);
    void finishToolRound();
    void onAttemptEvent(const AttemptEvent &event);
    void onTurnDeadline();
    void stopTurn(TurnStatus status, const QString &unfinishedCode, const QString &answer);
    void finishTurn(TurnStatus status, const QString &answer);
    void emitFinished();
    TurnCheckpoint snapshot() const;
    ToolLabels labelsOf(const QString &toolName) const;
    // Saves the turn at `stage`, then (once it is on disk) runs `then` if the turn is still
    // the same one. Without a journal `then` runs at once.
    // `required`: if the save fails the turn stops there (nothing of it may run unrecorded).
    void checkpoint(TurnStage stage, std::function<void()> then, bool required = false);
    Turn &newTurn();
    // Saves a tool result as it arrives, without holding anything up (a round's last result
    // goes to disk with TOOLS_EXECUTED instead). Appends call `index` alone.
    void saveProgress(int index);

    AgentLoop *q;
    ChatModel *model;
    const ToolRegistry *tools;
    ToolExecutor *executor;
    const AgentLoop::ToolBreakers toolBreakers;
    const AgentLoop::ToolPolicies toolPolicies;
    const AgentLoop::ToolsReady toolsReady;
    const QPointer<CircuitBreakerRegistry> breakerRegistry;
    Internal::WriteGuard writes;
    Internal::TurnRecorder recorder;
    SessionContext session;
    AgentLoop::TurnLimits limits;
    QList<ChatMessage> conversation;
    // The conversation (past its system prompt) as checkpoints store it, and the messages it
    // was made from: snapshot() serializes only what was added since, and keeps only the part
    // still the same when the conversation was cut or replaced (a failed turn, a resume).
    mutable QList<ChatMessage> storedFrom;
    mutable QJsonArray storedConversation;
    quint64 turnsStarted = 0;
    // A resumed turn runs in its own session and conversation; the staff member's own come
    // back when it ends.
    std::optional<std::pair<SessionContext, QList<ChatMessage>>> beforeResume;
    std::unique_ptr<Turn> turn;
};

} // namespace AgentConsole
