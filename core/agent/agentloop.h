#pragma once

#include "../llm/chatmodel.h"
#include "../resilience/tooloperation.h"
#include "turnresult.h"

#include <QObject>

#include <chrono>
#include <memory>

namespace AgentConsole {

class CircuitBreaker;
class IdempotencyLedger;
class CircuitBreakerRegistry;
class ToolExecutor;
class ToolRegistry;

// The staff member's session as the app knows it. Never comes from the model.
struct SessionContext
{
    QString userId;
    QString tenantId;
    QString conversationId; // generated when empty
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
    };

    AgentLoop(ChatModel *model, const ToolRegistry *tools, ToolExecutor *executor,
              QObject *parent = nullptr);
    ~AgentLoop() override;

    void setSession(const SessionContext &session);
    SessionContext session() const;
    void setModel(ChatModel *model);
    // The tool backend's breaker, asked before every tool attempt; may be null.
    void setToolBreaker(CircuitBreaker *breaker);
    // Where breaker openings are counted (circuit_breaker_open_count per turn); may be null.
    void setBreakerRegistry(CircuitBreakerRegistry *registry);
    // Every write goes through it, keyed by its operationId. Without one, writes fail closed:
    // they are never run unguarded.
    void setLedger(IdempotencyLedger *ledger);
    void setTurnLimits(const TurnLimits &limits);
    TurnLimits turnLimits() const;
    ChatModel *model() const;

    bool isBusy() const;
    // Starts a turn and returns its requestId; empty if a turn is already running.
    QString ask(const QString &question);
    // Cancels the running turn: the model call is aborted and running tools are cancelled.
    void cancel();
    // Forgets the conversation so far and starts a new one.
    void resetConversation();
    // The staff member's answer to confirmationRequested: the exact arguments shown are run
    // (approved) or the call ends with CONFIRMATION_DECLINED. Unknown ids are ignored.
    void confirm(const QString &operationId, bool approved);

Q_SIGNALS:
    void turnStarted(const QString &requestId, const QString &question);
    void toolCallStarted(const QString &requestId, const AgentConsole::ToolCallRecord &call);
    // A tool with side effects waits for the staff member to confirm its exact arguments
    // (call.arguments); answer with confirm(call.operationId, ...).
    void confirmationRequested(const QString &requestId, const AgentConsole::ToolCallRecord &call);
    // An attempt started or finished; `call.attempts` holds the finished ones.
    void toolCallUpdated(const QString &requestId, const AgentConsole::ToolCallRecord &call);
    void toolCallFinished(const QString &requestId, const AgentConsole::ToolCallRecord &call);
    void answerDelta(const QString &requestId, const QString &text);
    void turnFinished(const AgentConsole::TurnResult &result);

private:
    class Private;
    std::unique_ptr<Private> d;
};

} // namespace AgentConsole
