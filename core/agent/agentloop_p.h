#pragma once

// Not part of the API. AgentLoop's state, shared by its three parts: agentloop.cpp (the path
// of a turn), agentloopwrites.cpp (confirmation and the idempotency ledger) and
// agentlooprecovery.cpp (checkpoints and resumption).

#include "agentloop.h"

#include "../ledger/idempotencyledger.h"
#include "../resilience/toolexecutor.h"
#include "turncheckpoint.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
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
QString localized(Language language, const char *english, const char *chinese);
// What a write's answer says for its ledger row; a timed-out write becomes
// EXECUTION_STATUS_UNKNOWN first (it may have been committed).
LedgerStatus settleWriteResult(ToolResult &result, Language language);
} // namespace Internal

class AgentLoop::Private
{
public:
    struct Turn
    {
        TurnResult result;
        Language language = Language::English;
        QElapsedTimer clock;
        qsizetype conversationLengthBefore = 0;
        int pendingTools = 0;
        QHash<QString, int> recordByOperation; // operationId -> index into result.toolCalls
        QList<QPointer<QFutureWatcher<ToolCallOutcome>>> watchers;
        QPointer<ChatReply> reply;
        RetryBudgetPtr budget;
        std::unique_ptr<QTimer> deadline;
        // While a write waits for the staff member the turn's clock stands still.
        int awaitingConfirmation = 0;
        QElapsedTimer pausedSince;
        int breakerOpensBefore = 0;
        TurnStage stage = TurnStage::Received;
        bool resumed = false;      // carried on from a checkpoint: writes are recovered
        bool answerFailed = false; // the model failed on the answer, after the tools ran
        bool finishing = false;    // the final checkpoint is being written
        qint64 priorMs = 0;        // time spent before an interruption
        quint64 serial = 0;        // tells this turn from a later one with the same requestId
        QSet<int> claimedWrites;   // writes whose ledger row this turn holds PROCESSING
        // Writes whose answer is in while the ledger records it: their outcome is known.
        QHash<int, ToolCallOutcome> answeredWrites;
        // The executor's call of each running record (from its first attempt event), so that
        // stopTurn() can end it at once with the attempt it cut short on the record.
        QHash<int, quint64> executorCalls;
        // and its future: a call that ended just before the stop has its outcome there.
        QHash<int, QFuture<ToolCallOutcome>> callFutures;
    };

    Private(AgentLoop *q, ChatModel *model, const ToolRegistry *tools, ToolExecutor *executor)
        : q(q)
        , model(model)
        , tools(tools)
        , executor(executor)
    {
    }

    void resetConversation();
    void callModel();
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
    // A claimed write whose turn stopped: its row must not stay PROCESSING (nobody could run
    // it again), so it becomes FAILED_RETRYABLE holding `reported`, and whoever claims it next
    // asks the backend first.
    void releaseClaim(const QString &operationId, const ToolResult &reported);
    Turn &newTurn();
    // Saves a tool result as it arrives, without holding anything up (a round's last result
    // goes to disk with TOOLS_EXECUTED instead). Appends call `index` alone.
    void saveProgress(int index);

    AgentLoop *q;
    ChatModel *model;
    const ToolRegistry *tools;
    ToolExecutor *executor;
    SessionContext session;
    AgentLoop::TurnLimits limits;
    AgentLoop::ToolBreakers toolBreakers;
    QPointer<CircuitBreakerRegistry> breakerRegistry;
    IdempotencyLedger *ledger = nullptr;
    TurnJournal *journal = nullptr;
    QList<ChatMessage> conversation;
    quint64 turnsStarted = 0;
    // A resumed turn runs in its own session and conversation; the staff member's own come
    // back when it ends.
    std::optional<std::pair<SessionContext, QList<ChatMessage>>> beforeResume;
    std::unique_ptr<Turn> turn;
};

} // namespace AgentConsole
