#include "writeguard.h"

#include "../failures.h"

#include "../../telemetry/logging.h"
#include "../../tools/toolregistry.h"

#include <algorithm>

namespace AgentConsole::Internal {

QFuture<LedgerClaim> WriteGuard::claim(const QString &operationId, const QString &toolName,
                                       const QByteArray &requestHash, bool resumed)
{
    Q_ASSERT(m_ledger);
    return resumed ? m_ledger->recover(operationId, toolName, requestHash)
                   : m_ledger->begin(operationId, toolName, requestHash);
}

QFuture<LedgerCompletion> WriteGuard::record(const QString &operationId, LedgerStatus status,
                                             const ToolResult &result)
{
    Q_ASSERT(m_ledger);
    return m_ledger->complete(operationId, status, result.toJson());
}

void WriteGuard::recorded(int index)
{
    m_claimed.remove(index);
    m_answered.remove(index);
}

std::optional<ToolCallOutcome> WriteGuard::answerOf(int index) const
{
    const auto found = m_answered.constFind(index);
    if (found == m_answered.cend())
        return std::nullopt;
    return *found;
}

bool WriteGuard::settleStopped(ToolCallRecord &call, const CallsInFlight::Ended &ended,
                               Language language)
{
    if (const std::optional<ToolCallOutcome> answered = answerOf(call.index)) {
        // The answer is in and the ledger is recording it: that is the result.
        call.result = answered->result;
        call.attempts = answered->attempts;
        call.totalMs = answered->totalMs;
        return false;
    }
    if (ended.takeArrived(call)) {
        // Its answer came just before the stop: the ledger records that, not "unknown".
        const LedgerStatus recorded = settleWriteResult(call.result, call.attempts, language,
                                                        outcomeCanBeLearned(call.name));
        if (hasLedger())
            record(call.operationId, recorded, call.result);
        return call.result.code == ResultCode::ExecutionStatusUnknown;
    }
    ended.takeStopped(call);
    call.result = ToolResult::failure(ResultCode::ExecutionStatusUnknown, language);
    releaseClaim(call.operationId, call.name, call.result);
    return true;
}

void WriteGuard::forgetTurn()
{
    m_claimed.clear();
    m_answered.clear();
    m_followed.clear();
    m_settling.clear();
}

void WriteGuard::follow(int index, const AuditEntry &subject)
{
    if (m_audit && !m_followed.contains(index))
        m_followed.insert(index, subject);
}

void WriteGuard::auditStart(int index, AuditEntry::Event event)
{
    const auto followed = m_followed.constFind(index);
    if (followed == m_followed.cend())
        return;
    AuditEntry entry = *followed;
    entry.event = event;
    appendAudit(std::move(entry));
}

void WriteGuard::auditOutcome(int index, const ToolResult &result, AuditEntry::Via via)
{
    const auto followed = m_followed.constFind(index);
    if (followed == m_followed.cend())
        return;
    AuditEntry entry = *followed;
    m_followed.erase(followed);
    // A settlement stopped half-way is told as stopped: it learned nothing.
    const auto settling = m_settling.constFind(index);
    const bool settles = settling != m_settling.cend() && via != AuditEntry::Via::Stopped;
    const AuditEntry::Via by = settles ? *settling : via;
    m_settling.remove(index);
    auditOutside(std::move(entry), result, by);
}

void WriteGuard::auditUnfinished(const QList<ToolCallRecord> &calls, AuditEntry::Via via)
{
    QList<int> indexes = m_followed.keys();
    std::sort(indexes.begin(), indexes.end()); // in the plan's order
    for (int index : indexes) {
        if (index >= 0 && index < calls.size())
            auditOutcome(index, calls.at(index).result, via);
    }
}

void WriteGuard::auditOutside(AuditEntry subject, const ToolResult &result, AuditEntry::Via via)
{
    if (!m_audit)
        return;
    // A settlement is the later run's: the same write's outcome, learned by asking again.
    subject.event = via == AuditEntry::Via::Resume || via == AuditEntry::Via::Replay
        ? AuditEntry::Event::Settlement
        : AuditEntry::Event::Outcome;
    subject.via = via;
    if (result.success) {
        subject.outcome = AuditEntry::Outcome::Succeeded;
        subject.objectId = createdId(subject.toolName, result);
    } else {
        subject.outcome = result.code == ResultCode::ExecutionStatusUnknown
            ? AuditEntry::Outcome::Unknown
            : AuditEntry::Outcome::Failed;
        subject.resultCode = result.codeName();
    }
    appendAudit(std::move(subject));
}

void WriteGuard::appendAudit(AuditEntry entry)
{
    if (!m_audit)
        return;
    qCInfo(lcAgent).noquote() << "audit" << entry.operationId << AuditEntry::eventName(entry.event)
                              << AuditEntry::outcomeName(entry.outcome) << entry.resultCode
                              << entry.objectId << AuditEntry::viaName(entry.via) << "by"
                              << entry.staffId;
    // Watched by nobody: a row the store cannot take is kept by the ledger and logged there.
    m_audit->append(std::move(entry), m_redaction ? m_redaction() : AuditTrail::Redaction());
}

QString WriteGuard::createdId(const QString &toolName, const ToolResult &result) const
{
    const std::shared_ptr<const AgentTool> tool = m_tools ? m_tools->find(toolName) : nullptr;
    const QString key = tool ? tool->descriptor().labels.created.key : QString();
    if (key.isEmpty() || !result.data.isObject())
        return {};
    const QJsonValue value = result.data.toObject().value(key);
    if (value.isString())
        return value.toString();
    if (value.isDouble())
        return QString::number(value.toInteger());
    return {};
}

bool WriteGuard::outcomeCanBeLearned(const QString &toolName) const
{
    const std::shared_ptr<const AgentTool> tool = m_tools ? m_tools->find(toolName) : nullptr;
    return tool && tool->descriptor().outcomeCanBeLearned;
}

void WriteGuard::releaseClaim(const QString &operationId, const QString &toolName,
                              const ToolResult &reported)
{
    if (!m_ledger)
        return;
    const LedgerStatus status = reported.code == ResultCode::ExecutionStatusUnknown
            && !outcomeCanBeLearned(toolName)
        ? LedgerStatus::OutcomeUnknown
        : LedgerStatus::FailedRetryable;
    m_ledger->complete(operationId, status, reported.toJson());
    qCInfo(lcAgent).noquote() << "write" << operationId << "released as" << reported.codeName()
                              << LedgerState::name(status) << "- its turn ended";
}

LedgerStatus settleWriteResult(ToolResult &result, const QList<AttemptRecord> &attempts,
                               Language language, bool outcomeCanBeLearned)
{
    // A write whose last attempt timed out may have been committed: that is not a failure
    // to report but an unknown to check (the attempts asked the backend where they could).
    // So is one an earlier attempt of which timed out when no later attempt learned the
    // key's status: a retry refused by an open breaker, or failing before it could ask, says
    // nothing about the ticket the timed-out attempt may have made (the soak found a
    // committed ticket reported TOOL_UNAVAILABLE).
    const bool mayHaveCommitted = std::any_of(
        attempts.cbegin(), attempts.cend(), [](const AttemptRecord &attempt) {
            return attempt.made && attempt.outcome == AttemptOutcome::TimedOut;
        });
    if (result.code == ResultCode::ToolTimeout
        || (mayHaveCommitted
            && (result.code == ResultCode::ToolUnavailable
                || result.code == ResultCode::ToolRejected
                || result.code == ResultCode::ToolAccessDenied)))
        result = ToolResult::failure(ResultCode::ExecutionStatusUnknown, language);
    if (result.success)
        return LedgerStatus::Succeeded;
    if (result.code == ResultCode::ExecutionStatusUnknown && !outcomeCanBeLearned)
        return LedgerStatus::OutcomeUnknown;
    // The failure table's ledger column; a code without a row is final.
    const FailureTable::Row *row = failureTable().find(result.code);
    switch (row ? row->ledger : FailureTable::LedgerRow::FailedFinal) {
    case FailureTable::LedgerRow::Succeeded:
        return LedgerStatus::Succeeded;
    case FailureTable::LedgerRow::FailedRetryable:
        return LedgerStatus::FailedRetryable;
    case FailureTable::LedgerRow::FailedFinal:
        return LedgerStatus::FailedFinal;
    }
    return LedgerStatus::FailedFinal;
}

} // namespace AgentConsole::Internal
