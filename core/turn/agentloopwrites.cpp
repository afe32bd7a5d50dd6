// AgentLoop, part two: writes. A write waits for the staff member's confirmation, claims its
// operationId in the idempotency ledger, runs only with a claim, and is recorded before the
// turn counts it as finished (docs/RELIABILITY.md).
#include "agentloop_p.h"
#include "failures.h"

#include "../async/await.h"
#include "../ledger/requesthash.h"
#include "../telemetry/killpoint.h"
#include "../telemetry/logging.h"

#include <algorithm>

namespace AgentConsole {

using namespace Internal;

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
        const LedgerStatus recorded = settleWriteResult(call.result, call.attempts, language);
        if (hasLedger())
            record(call.operationId, recorded, call.result);
        return call.result.code == ResultCode::ExecutionStatusUnknown;
    }
    ended.takeStopped(call);
    call.result = ToolResult::failure(ResultCode::ExecutionStatusUnknown, language);
    releaseClaim(call.operationId, call.result);
    return true;
}

void WriteGuard::forgetTurn()
{
    m_claimed.clear();
    m_answered.clear();
}

void WriteGuard::releaseClaim(const QString &operationId, const ToolResult &reported)
{
    if (!m_ledger)
        return;
    m_ledger->complete(operationId, LedgerStatus::FailedRetryable, reported.toJson());
    qCInfo(lcAgent).noquote() << "write" << operationId << "released as" << reported.code
                              << "- its turn ended";
}

// A confirmed write: claim its operationId in the ledger first. Only a claim runs it; an
// earlier success is returned as it was, and anything the ledger cannot vouch for is not run.
void AgentLoop::Private::executeWrite(int index)
{
    Turn &t = *turn;
    ToolCallRecord &record = t.result.toolCalls[index];
    if (!writes.hasLedger()) {
        qCWarning(lcAgent).noquote() << "write" << record.operationId
                                     << "not run: no idempotency ledger";
        ToolCallOutcome refused;
        refused.result = ToolResult::failure(ResultCode::ToolUnavailable, t.language);
        onToolFinished(index, refused);
        return;
    }
    record.state = ToolCallRecord::State::Running;
    Q_EMIT q->toolCallUpdated(t.result.requestId, record);
    const quint64 serial = t.serial;
    const QString operationId = record.operationId;
    const Language language = t.language;
    // A resumed turn's writes may have been claimed by the run that was interrupted: a
    // PROCESSING row this console (the ledger's owner) claimed is that run's orphan to recover;
    // another console's claim on the same key stays its own.
    const QByteArray hash = requestHash(record.arguments);
    await(writes.claim(record.operationId, record.name, hash, t.resumed), q,
          [this, index, serial, operationId, language](const LedgerClaim &claim) {
        if (!turn || turn->serial != serial || turn->finishing
            || turn->result.toolCalls[index].state == ToolCallRecord::State::Finished) {
            if (claim.outcome == LedgerClaim::Outcome::Claimed) // nothing was sent
                writes.releaseClaim(operationId,
                                    ToolResult::failure(ResultCode::Cancelled, language));
            return;
        }
        onClaim(index, claim);
    });
}

void AgentLoop::Private::onClaim(int index, const LedgerClaim &claim)
{
    Turn &t = *turn;
    ToolCallRecord &record = t.result.toolCalls[index];
    if (record.state == ToolCallRecord::State::Finished)
        return;
    ToolCallOutcome answered;
    switch (claim.outcome) {
    case LedgerClaim::Outcome::Claimed:
        writes.claimed(index);
        killPoint(KillPoints::WriteClaimed);
        execute(index, record.operationId, claim.mayHaveRun);
        return;
    case LedgerClaim::Outcome::AlreadySucceeded:
    case LedgerClaim::Outcome::FailedFinal:
        ++t.result.idempotencyHits;
        answered.result = ToolResult::fromJson(claim.storedResult);
        // Another request made it (a replay, another console): the answer must not read as a
        // new creation. A resumed turn's own earlier run did create it, so it stays as stored.
        if (!t.resumed && answered.result.data.isObject()) {
            QJsonObject data = answered.result.data.toObject();
            data.insert(QStringLiteral("replayed"), true);
            answered.result.data = data;
        }
        break;
    case LedgerClaim::Outcome::InProgress:
        answered.result = ToolResult::failure(ResultCode::OperationInProgress, t.language);
        break;
    case LedgerClaim::Outcome::Conflict:
        ++t.result.idempotencyConflicts;
        answered.result = ToolResult::failure(ResultCode::IdempotencyConflict, t.language);
        break;
    case LedgerClaim::Outcome::StoreError:
        qCWarning(lcAgent).noquote() << "write" << record.operationId
                                     << "not run: the ledger failed:" << claim.detail;
        answered.result = ToolResult::failure(ResultCode::ToolUnavailable, t.language);
        break;
    }
    qCInfo(lcAgent).noquote() << "write" << record.operationId << "answered by the ledger:"
                              << answered.result.code;
    onToolFinished(index, answered);
}

LedgerStatus Internal::settleWriteResult(ToolResult &result,
                                         const QList<AttemptRecord> &attempts,
                                         Language language)
{
    // A write whose last attempt timed out may have been committed: that is not a failure
    // to report but an unknown to check (the attempts asked the backend where they could).
    // So is one an earlier attempt of which timed out when no later attempt learned the
    // key's status: a retry refused by an open breaker, or failing before it could ask, says
    // nothing about the ticket the timed-out attempt may have made (the soak found a
    // committed ticket reported TOOL_UNAVAILABLE).
    const bool mayHaveCommitted
        = std::any_of(attempts.cbegin(), attempts.cend(), [](const AttemptRecord &attempt) {
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
    // The failure table's ledger column; a code without a row is final.
    const FailureTable::Row *row = failureTable().find(result.code);
    switch (row ? row->ledger : FailureTable::LedgerRow::FailedFinal) {
    case FailureTable::LedgerRow::Succeeded: return LedgerStatus::Succeeded;
    case FailureTable::LedgerRow::FailedRetryable: return LedgerStatus::FailedRetryable;
    case FailureTable::LedgerRow::FailedFinal: return LedgerStatus::FailedFinal;
    }
    return LedgerStatus::FailedFinal;
}

void AgentLoop::Private::onWriteFinished(int index, ToolCallOutcome outcome)
{
    Turn &t = *turn;
    const ToolCallRecord &record = t.result.toolCalls[index];
    const LedgerStatus status = settleWriteResult(outcome.result, outcome.attempts, t.language);
    if (outcome.result.code == ResultCode::ExecutionStatusUnknown)
        ++t.result.unknownExecutionStatus;
    killPoint(KillPoints::WriteAnswered);
    // The result counts as the tool's only once the ledger holds it, so that a checkpoint
    // never records a write whose row could still read PROCESSING. If recording fails the
    // row stays PROCESSING: the operation reads as in progress, never as a new one.
    writes.answered(index, outcome);
    const QString operationId = record.operationId;
    const quint64 serial = t.serial;
    await(writes.record(record.operationId, status, outcome.result), q,
          [this, operationId, serial, index, outcome](const LedgerCompletion &completion) {
        if (!completion.completed())
            qCWarning(lcAgent).noquote() << "write" << operationId
                                         << "could not be recorded in the ledger:"
                                         << completion.detail;
        killPoint(KillPoints::WriteRecorded);
        if (!turn || turn->serial != serial || turn->finishing)
            return; // stopTurn() already reported this outcome
        writes.recorded(index);
        onToolFinished(index, outcome);
    });
}

QString AgentLoop::setToolCallQuestion(const QString &operationId, const QString &server,
                                       ToolCallRecord::Question state)
{
    if (!d->turn)
        return {};
    Private::Turn &t = *d->turn;
    const std::optional<int> index = t.calls.indexOf(operationId);
    if (!index)
        return {};
    ToolCallRecord &record = t.result.toolCalls[*index];
    if (record.state == ToolCallRecord::State::Finished)
        return {};
    const QString from = server.isEmpty() ? record.questionFrom : server; // empty: unchanged
    if (record.question != state || record.questionFrom != from) {
        record.question = state;
        record.questionFrom = from;
        Q_EMIT toolCallUpdated(t.result.requestId, record);
    }
    return record.labels.title.isEmpty() ? record.name : record.labels.title;
}

void AgentLoop::confirm(const QString &operationId, bool approved)
{
    if (!d->turn)
        return;
    Private::Turn &t = *d->turn;
    const std::optional<int> found = t.calls.indexOf(operationId);
    if (!found)
        return;
    const int index = *found;
    if (t.result.toolCalls[index].state != ToolCallRecord::State::AwaitingConfirmation)
        return;
    qCInfo(lcAgent).noquote() << "tool call" << operationId
                              << (approved ? "confirmed" : "declined") << "by the staff member";
    // The time spent reading the card is given back at every answer (TurnClock).
    t.clock->staffAnswered(*t.budget);
    if (approved) {
        d->confirmed(index);
        return;
    }
    ToolCallOutcome declined;
    declined.result = ToolResult::failure(ResultCode::ConfirmationDeclined, t.language);
    d->onToolFinished(index, declined);
}

// The approval is on disk before the write is claimed: a restart does not ask again.
void AgentLoop::Private::confirmed(int index)
{
    Turn &t = *turn;
    t.result.toolCalls[index].confirmed = true;
    t.result.toolCalls[index].state = ToolCallRecord::State::Running;
    checkpoint(t.stage, [this, index] { executeWrite(index); }, true);
}

} // namespace AgentConsole
