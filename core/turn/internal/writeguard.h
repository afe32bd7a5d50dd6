#pragma once

#include "callsinflight.h"
#include "../turnresult.h"

#include "../../ledger/idempotencyledger.h"

#include <QFuture>
#include <QHash>
#include <QSet>

#include <optional>

namespace AgentConsole {
class ToolRegistry;
}

namespace AgentConsole::Internal {

// What a write's answer says for its ledger row; a write that timed out, or failed after an
// attempt that timed out, becomes EXECUTION_STATUS_UNKNOWN first (it may have been committed).
// An unknown outcome stays retryable (the next claim asks first) only where it can be learned
// (ToolDescriptor::outcomeCanBeLearned); otherwise it is settled OUTCOME_UNKNOWN.
LedgerStatus settleWriteResult(ToolResult &result, const QList<AttemptRecord> &attempts,
                               Language language, bool outcomeCanBeLearned);

// The write guard: the way of every write through the idempotency ledger. It owns the ledger
// and what it holds for the running turn: the writes whose row this turn claimed
// (PROCESSING), and those whose answer is in while the ledger records it. One turn at a time;
// forgetTurn() starts the next one clean.
class WriteGuard final
{
public:
    // `tools` tells which writes can learn an unknown outcome later; a tool it does not know
    // (an MCP server gone) cannot.
    WriteGuard(IdempotencyLedger *ledger, const ToolRegistry *tools)
        : m_ledger(ledger)
        , m_tools(tools)
    {
    }

    bool hasLedger() const { return m_ledger != nullptr; }
    IdempotencyLedger *ledger() const { return m_ledger; }
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
    // it again). It becomes FAILED_RETRYABLE holding `reported`, and whoever claims it next
    // asks the backend first; or, when `reported` is EXECUTION_STATUS_UNKNOWN and the tool
    // cannot learn it, OUTCOME_UNKNOWN for good.
    void releaseClaim(const QString &operationId, const QString &toolName,
                      const ToolResult &reported);
    // Whether a write of `toolName` can learn an unknown outcome later (see
    // ToolDescriptor::outcomeCanBeLearned).
    bool outcomeCanBeLearned(const QString &toolName) const;

    QSet<int> claimedWrites() const { return m_claimed; }
    // A claimed write whose turn stopped, finished on its record. Its answer, if it is in (the
    // ledger is recording it, or it arrived just before the stop), is its result and what the
    // ledger records. Otherwise it may still reach the backend: its row must not stay
    // PROCESSING (nobody could ever run it again), so it is released (releaseClaim); and staff
    // must not read "cancelled" for a write that may have happened: EXECUTION_STATUS_UNKNOWN.
    // True when the outcome is unknown.
    bool settleStopped(ToolCallRecord &call, const CallsInFlight::Ended &ended, Language language);
    // The outcome of a claimed write whose answer is in, while the ledger records it.
    std::optional<ToolCallOutcome> answerOf(int index) const;
    void forgetTurn();

private:
    IdempotencyLedger *m_ledger;
    const ToolRegistry *m_tools;
    QSet<int> m_claimed;
    QHash<int, ToolCallOutcome> m_answered;
};

} // namespace AgentConsole::Internal
