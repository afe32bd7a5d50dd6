#pragma once

#include "callsinflight.h"
#include "../turnresult.h"

#include "../../ledger/audittrail.h"
#include "../../ledger/idempotencyledger.h"

#include <QFuture>
#include <QHash>
#include <QSet>

#include <functional>
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
//
// It also keeps the audit trail of the writes (docs/AUDIT.md), the ledger's own
// (IdempotencyLedger::auditTrail): a row when staff confirm a write (or when one that needs no
// confirmation starts), and one with its outcome, once, whichever way the write ends. Every
// row is made from the write's subject (follow()): the trusted session and the call, never
// the model's words about who asks.
class WriteGuard final
{
public:
    // `tools` tells which writes can learn an unknown outcome later, and which field of a
    // write's result names what it made (ToolLabels::created); a tool it does not know (an
    // MCP server gone) cannot and has none. `redaction` is asked for each audit row: what
    // takes the secrets out of its arguments (run on the ledger's thread); none: they are
    // stored as confirmed.
    WriteGuard(IdempotencyLedger *ledger, const ToolRegistry *tools,
               std::function<AuditTrail::Redaction()> redaction = {})
        : m_ledger(ledger)
        , m_tools(tools)
        , m_audit(ledger ? ledger->auditTrail() : nullptr)
        , m_redaction(std::move(redaction))
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

    // The audit trail. Call `index`'s rows are made from `subject` (its identity fields:
    // staff, tenant, conversation, request, operation, tool, key, arguments); following a
    // call again keeps the first subject.
    void follow(int index, const AuditEntry &subject);
    // A Confirmed row (staff approved it) or a Started row (it needs no confirmation).
    void auditStart(int index, AuditEntry::Event event);
    // Call `index`'s claim may take over what an earlier run left unknown: its outcome is a
    // settlement, learned by `via` (Resume or Replay).
    void settling(int index, AuditEntry::Via via) { m_settling.insert(index, via); }
    // The outcome row of a followed call, once: its result's outcome, the result code, and
    // what it made (the field ToolLabels::created names). Later calls for it do nothing.
    void auditOutcome(int index, const ToolResult &result, AuditEntry::Via via);
    // The outcome rows of the followed calls that have none yet, from their records (a
    // stopped turn: Via::Stopped).
    void auditUnfinished(const QList<ToolCallRecord> &calls, AuditEntry::Via via);
    // An outcome row for a write of no running turn (an interrupted turn dismissed).
    void auditOutside(AuditEntry subject, const ToolResult &result, AuditEntry::Via via);

private:
    void appendAudit(AuditEntry entry);
    // The id of what a successful write made, from its result's data; empty when the tool
    // names no such field.
    QString createdId(const QString &toolName, const ToolResult &result) const;

    IdempotencyLedger *m_ledger;
    const ToolRegistry *m_tools;
    AuditTrail *m_audit;
    std::function<AuditTrail::Redaction()> m_redaction;
    QSet<int> m_claimed;
    QHash<int, ToolCallOutcome> m_answered;
    QHash<int, AuditEntry> m_followed; // calls with no outcome row yet
    QHash<int, AuditEntry::Via> m_settling;
};

} // namespace AgentConsole::Internal
