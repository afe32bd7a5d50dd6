#pragma once

#include "../agentloop.h"
#include "turnstate.h"
#include "writeguard.h"

#include <QList>
#include <QString>

#include <chrono>
#include <functional>

namespace AgentConsole::Internal {

class KeptCompletionsRetry;

struct ToolCallAdmission;

// A turn's tool calls, from the model's request to the last result (DESIGN.md, "The path of
// one turn", 3–5): planned with the operationIds the app makes, admitted (admitToolCall), run
// through the executor with the tool's breaker and policy, a write confirmed by staff first
// and taken through the idempotency ledger (WriteGuard, which this round owns), each result
// put on its record as it arrives and told through the loop's signals. The records are the
// turn's (TurnState); what only the loop can do (save a checkpoint, move the turn on) the
// round asks of its Host.
class ToolRound final
{
public:
    class Host
    {
    public:
        virtual ~Host() = default;
        virtual TurnState *runningTurn() const = 0; // null between turns
        virtual SessionContext turnSession() const = 0;
        // Saves the turn at `stage`; `then` runs once it is on disk, if the turn is the same.
        virtual void saveTurn(TurnStage stage, std::function<void()> then, bool required) = 0;
        // Saves call `index`'s result alone, without holding anything up.
        virtual void saveResult(int index) = 0;
        // Every call of the round has its result.
        virtual void roundFinished() = 0;
    };

    struct Parts
    {
        AgentLoop *loop = nullptr; // whose signals tell each call's progress, and the context
        const ToolRegistry *tools = nullptr;
        ToolExecutor *executor = nullptr;
        AgentLoop::ToolBreakers toolBreakers;
        AgentLoop::ToolPolicies toolPolicies;
        IdempotencyLedger *ledger = nullptr;
        // What takes the secrets out of an audit row's arguments (WriteGuard).
        std::function<AuditTrail::Redaction()> auditRedaction = {};
    };

    ToolRound(Host &host, Parts parts);

    WriteGuard &writes() { return m_writes; }
    ToolLabels labelsOf(const QString &toolName) const;

    // The model's calls become the round's records, with their operationIds; a call beyond
    // `limit` is refused and finished at once (the conversation must stay well-formed). The
    // indexes of the calls to run.
    QList<int> plan(const QList<ModelToolCall> &calls, int limit);
    // Runs `indexes` (the plan, once it is on disk, or a resumed round's unfinished calls).
    void start(const QList<int> &indexes);
    // How a write's confirmation was answered (the clock already took the time back).
    // KeptExisting: declined for an earlier write its PriorWritesCheck found (`existingId`).
    enum class Confirmation { Approved, Declined, NobodyToAsk, KeptExisting };
    void confirmation(int index, Confirmation answer, const QString &existingId = {});
    // How old an earlier write may be and still read as a likely duplicate.
    void setDuplicateWindow(std::chrono::seconds window) { m_duplicateWindow = window; }
    void onAttemptEvent(const AttemptEvent &event);

private:
    // The call's arguments parsed and checked off this thread (admitToolCall on the check
    // pool), then admit(): run, held for confirmation, or refused.
    void dispatch(int index);
    void admit(int index, ToolCallAdmission admission);
    void execute(int index, const QString &idempotencyKey = {}, bool mayHaveRun = false);
    void executeWrite(int index);
    void confirmed(int index);
    // A write held for confirmation: asks what it may repeat (PriorWritesLookup), and puts
    // the answer on its record when it comes.
    void checkPriorWrites(int index);
    void onClaim(int index, const LedgerClaim &claim);
    void onWriteFinished(int index, ToolCallOutcome outcome);
    void onToolFinished(int index, const ToolCallOutcome &outcome);
    // Who asks for call `index` and what: its audit rows' subject (the trusted session's
    // staff, tenant and conversation; the turn's request; the call's operation and arguments).
    AuditEntry auditSubject(int index) const;
    TurnState *turn() const { return m_host.runningTurn(); }

    Host &m_host;
    AgentLoop *m_loop;
    const ToolRegistry *m_tools;
    ToolExecutor *m_executor;
    const AgentLoop::ToolBreakers m_toolBreakers;
    const AgentLoop::ToolPolicies m_toolPolicies;
    WriteGuard m_writes;
    KeptCompletionsRetry *m_keptRetry = nullptr; // child of m_loop; null without a ledger
    std::chrono::seconds m_duplicateWindow{AgentLoop::defaultDuplicateWindow};
};

} // namespace AgentConsole::Internal
