#pragma once

#include "../llm/chatmodel.h"
#include "../resilience/retrypolicy.h"
#include "../resilience/tooloperation.h"
#include "turnresult.h"

#include <QObject>

#include <functional>

#include <chrono>
#include <memory>
#include <optional>

namespace AgentConsole {

class CircuitBreaker;
class IdempotencyLedger;
class TurnJournal;
struct TurnCheckpoint;
class CircuitBreakerRegistry;
class ToolExecutor;
class ToolRegistry;

// The staff member's session as the app knows it. Never comes from the model.
struct SessionContext
{
    QString userId;
    QString tenantId;
    QString conversationId; // generated when empty
    // A scenario run's name: its turns are marked with it (TurnResult::scenario). Empty for
    // the staff member's own questions. Initialised, so that {user, tenant, conversation}
    // leaves it empty without a -Wmissing-field-initializers warning.
    QString scenario = {};
};

// Runs one conversation's turns: model call -> the chosen tools in parallel through the
// executor -> model call with the results -> answer; at most maxToolRounds tool rounds. One
// turn at a time. Lives on the GUI thread; never blocks it.
class AgentLoop final : public QObject
{
    Q_OBJECT

public:
    static constexpr int maxToolRounds = 5;

    // One overall deadline and one retry budget per turn, shared by the model and tool layers.
    struct TurnLimits
    {
        std::chrono::milliseconds deadline{60'000};
        int maxRetries = 8;
        // Tool calls run from one model message (DESIGN.md, "Bounds"); the calls beyond it do
        // not run and are answered TOOL_CALL_LIMIT.
        int maxToolCallsPerMessage = 16;
        // Characters of the conversation sent with each model request (ConversationWindow):
        // the system prompt and the current turn always, earlier turns while they fit.
        // 0 sends the whole conversation.
        int conversationChars = 0;
    };
    // Tool arguments nested deeper than this are INVALID_ARGUMENT before anything is kept.
    static constexpr int maxArgumentDepth = 32;
    // A tool call's arguments, in UTF-8 bytes, and what is kept of longer ones (ModelToolCall).
    static constexpr qsizetype maxArgumentBytes = ModelToolCall::maxArgumentBytes;
    static constexpr qsizetype cutArgumentExcerpt = ModelToolCall::argumentExcerpt;
    // A staff member's question, in characters (DESIGN.md, "Bounds"): ask() refuses a longer
    // one, and the window and agent-cli say so before asking.
    static constexpr int maxQuestionLength = 4000;
    // How old an earlier write (a ticket for the same order and category) may be and still
    // be told to staff as a likely duplicate before they confirm a write (PriorWritesCheck).
    static constexpr std::chrono::seconds defaultDuplicateWindow{24 * 60 * 60};
    // Characters of a thinking model's reasoning kept with the turn's result for showing.
    static constexpr int maxShownReasoning = 64 * 1024;

    // Which breaker guards a tool's dependency (DESIGN.md: one per backend route, so a failing
    // route does not block the others), asked for each call; it may answer null.
    using ToolBreakers = std::function<CircuitBreaker *(const QString &toolName)>;
    // The retry policy a tool's next call runs under, whole (in the console, ToolPolicies::
    // policy: the one place it is decided). Read as each call starts, so a policy edited in the
    // window applies from the next call.
    using ToolPolicies = std::function<RetryPolicy(const QString &toolName)>;
    // Asked before a turn's first model request: calls `ready` (at once or later, on the
    // loop's thread) once the tools that are still starting (MCP servers) are there or the
    // caller's bounded wait has passed, with the names of the tool sources that are not
    // ready then (their tools are not offered). Anything delivered after `context` is
    // destroyed is dropped.
    using ToolsReady = std::function<void(QObject *context,
                                          std::function<void(const QStringList &notReady)> ready)>;

    // What the loop works with, given once at construction. None is owned by the loop; each
    // must outlive it. model, tools and executor are required; the rest may be null.
    struct Dependencies
    {
        ChatModel *model = nullptr; // may be swapped later with setModel() (settings change)
        const ToolRegistry *tools = nullptr;
        ToolExecutor *executor = nullptr;
        // Every write goes through it, keyed by its operationId. Without one, writes fail
        // closed: they are never run unguarded. Its audit trail (IdempotencyLedger::
        // auditTrail), when it keeps one, gets a row when staff confirm a write and one with
        // the write's outcome (docs/AUDIT.md).
        IdempotencyLedger *ledger = nullptr;
        // Asked as each audit row is made: what takes the secrets out of its arguments (the
        // console's redactor in force), run on the ledger's thread. None: they are stored as
        // confirmed.
        std::function<std::function<QJsonObject(const QJsonObject &)>()> auditRedaction = {};
        // Where every turn is checkpointed (RECEIVED, PLANNED, each tool result,
        // TOOLS_EXECUTED, ANSWER_GENERATING, COMPLETED or FAILED). The turn moves on only once
        // a checkpoint is on disk. Without one nothing survives a restart.
        TurnJournal *journal = nullptr;
        ToolBreakers toolBreakers = {}; // none: no tool call has a breaker
        ToolPolicies toolPolicies = {}; // none: every call runs under RetryPolicy::defaults()
        ToolsReady toolsReady = {}; // none: every tool is there from the start
        // Where breaker openings are counted (circuit_breaker_open_count per turn).
        CircuitBreakerRegistry *breakerRegistry = nullptr;
        // The faults and retry policies in force, asked as each turn starts and kept with it
        // (TurnResult::conditions): an export tells what each turn ran under. None: nothing.
        std::function<QJsonObject()> turnConditions = {};
        // The team's policy in force, asked as each turn starts and kept with it
        // (TurnResult::teamPolicy, docs/POLICY.md). None: nothing is recorded.
        std::function<QJsonValue()> turnPolicy = {};
    };

    explicit AgentLoop(Dependencies dependencies, QObject *parent = nullptr);
    ~AgentLoop() override;

    void setSession(const SessionContext &session);
    SessionContext session() const;
    // The model of the next model call: the runtime rebuilds its chain when settings change.
    void setModel(ChatModel *model);
    void setTurnLimits(const TurnLimits &limits);
    TurnLimits turnLimits() const;
    ChatModel *model() const;

    bool isBusy() const;
    // What staff see of the registered tool's calls (empty for a tool it does not have): an
    // exported or stored call carries no labels, today's tools word it.
    ToolLabels toolLabels(const QString &toolName) const;
    // Starts a turn and returns its requestId; empty if a turn is already running, the
    // question is blank or longer than maxQuestionLength, or `requestId` is not usable. A
    // caller may name the request itself (letters, digits, '-', '_', '.', at most 64): asking
    // again under the same name, in the same conversation, makes the same operationIds, so a
    // replayed request cannot write twice.
    QString ask(const QString &question, const QString &requestId = {});
    static bool isValidRequestId(const QString &requestId);
    // Carries an interrupted turn on from its checkpoint, in its own conversation and session:
    // tools whose result is stored never run again, a write that was running is recovered
    // through the ledger (the backend is asked before anything is sent), a write not yet
    // confirmed is offered for confirmation again, and the answer is written from the stored
    // results. False if a turn is running, the checkpoint is not resumable, or it belongs to
    // another staff member or tenant than the loop's session.
    bool resume(const TurnCheckpoint &checkpoint);
    // Gives an interrupted turn up instead of resuming it: a confirmed write that was under way
    // may have reached the backend, so its ledger row becomes retryable (whoever asks again
    // asks the backend first) rather than "in progress" for ever.
    void abandon(const TurnCheckpoint &checkpoint);
    // Cancels the running turn: the model call is aborted and running tools are cancelled.
    void cancel();
    // Forgets the conversation so far and starts a new one.
    void resetConversation();
    // The conversation so far, past the system prompt: what continueConversation() takes.
    QList<ChatMessage> conversationMessages() const;
    // Carries a stored conversation on (one reopened from the history): the next question
    // is asked in `conversationId`, after `messages` (without the system prompt). False
    // while a turn runs.
    bool continueConversation(const QString &conversationId, const QList<ChatMessage> &messages);
    // The staff member's answer to confirmationRequested: the exact arguments shown are run
    // (approved) or the call ends with CONFIRMATION_DECLINED. Unknown ids are ignored.
    void confirm(const QString &operationId, bool approved);
    // Declines the write for the earlier one its check found (ToolCallRecord::priorWrites,
    // an entry's id): nothing is written, and the model is told which one staff kept.
    void keepExisting(const QString &operationId, const QString &existingId);
    void setDuplicateWindow(std::chrono::seconds window);
    // Nobody can answer confirmationRequested (a front end with no one at it: agent-cli with
    // no terminal to ask on, or whose terminal closed): the call ends CONFIRMATION_DECLINED,
    // worded as not confirmed, never as declined by the staff member. Unknown ids are ignored.
    void cannotConfirm(const QString &operationId);
    // An MCP server asks staff a question during the call `operationId` (the runtime says so):
    // its card shows the wait, then how it ended (toolCallUpdated follows). Returns what the
    // card calls the tool, empty when no running call has that id. An empty `server` keeps
    // the one named before.
    QString setToolCallQuestion(const QString &operationId, const QString &server,
                                ToolCallRecord::Question state);

Q_SIGNALS:
    void turnStarted(const QString &requestId, const QString &question);
    // Follows turnStarted when the turn was resumed; `stage` is where it had stopped.
    void turnResumed(const QString &requestId, const QString &stage, int restarts);
    void toolCallStarted(const QString &requestId, const AgentConsole::ToolCallRecord &call);
    // A tool with side effects waits for the staff member to confirm its exact arguments
    // (call.arguments); answer with confirm(call.operationId, ...).
    void confirmationRequested(const QString &requestId, const AgentConsole::ToolCallRecord &call);
    // An attempt started or finished; `call.attempts` holds the finished ones.
    void toolCallUpdated(const QString &requestId, const AgentConsole::ToolCallRecord &call);
    void toolCallFinished(const QString &requestId, const AgentConsole::ToolCallRecord &call);
    void answerDelta(const QString &requestId, const QString &text);
    // The model layer retries, or a fallback model is asked, while the turn waits for it.
    void modelProgress(const QString &requestId, const AgentConsole::ModelProgress &progress);
    void turnFinished(const AgentConsole::TurnResult &result);

private:
    class Private;
    std::unique_ptr<Private> d;
};

} // namespace AgentConsole
