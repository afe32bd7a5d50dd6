#include "toolround.h"

#include "keptcompletionsretry.h"
#include "priorwritescheck.h"

#include "toolcalladmission.h"

#include "../../async/await.h"
#include "../../async/checkworkpool.h"
#include "../../ledger/requesthash.h"
#include "../../telemetry/killpoint.h"
#include "../../telemetry/logging.h"
#include "../../tools/toolregistry.h"

#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace AgentConsole::Internal {

ToolRound::ToolRound(Host &host, Parts parts)
    : m_host(host)
    , m_loop(parts.loop)
    , m_tools(parts.tools)
    , m_executor(parts.executor)
    , m_toolBreakers(std::move(parts.toolBreakers))
    , m_toolPolicies(std::move(parts.toolPolicies))
    , m_writes(parts.ledger, parts.tools, std::move(parts.auditRedaction))
{
    if (parts.ledger) {
        m_keptRetry = new KeptCompletionsRetry(parts.ledger, parts.loop);
        m_keptRetry->start(); // what a run before could not record
    }
}

ToolLabels ToolRound::labelsOf(const QString &toolName) const
{
    const std::shared_ptr<const AgentTool> tool = m_tools ? m_tools->find(toolName) : nullptr;
    if (!tool)
        return {};
    const ToolDescriptor descriptor = tool->descriptor();
    ToolLabels labels = descriptor.labels;
    labels.write = descriptor.hasSideEffects;
    return labels;
}

void ToolRound::confirmation(int index, Confirmation answer, const QString &existingId)
{
    if (answer == Confirmation::Approved) {
        confirmed(index);
        return;
    }
    ToolCallOutcome declined;
    switch (answer) {
    case Confirmation::NobodyToAsk:
        declined.result = ToolResult::nobodyToConfirm(turn()->language);
        break;
    case Confirmation::KeptExisting: {
        const PriorWrites &prior = turn()->result.toolCalls[index].priorWrites;
        const auto entry = std::find_if(prior.entries.cbegin(), prior.entries.cend(),
                                        [&](const PriorWrites::Entry &e) {
                                            return e.id == existingId;
                                        });
        declined.result = ToolResult::keptExisting(turn()->language, existingId,
                                                   entry == prior.entries.cend() ? QJsonObject()
                                                                                 : entry->fields);
        break;
    }
    case Confirmation::Approved:
    case Confirmation::Declined:
        declined.result = ToolResult::failure(ResultCode::ConfirmationDeclined, turn()->language);
        break;
    }
    onToolFinished(index, declined);
}

void ToolRound::checkPriorWrites(int index)
{
    TurnState &t = *turn();
    ToolCallRecord &record = t.result.toolCalls[index];
    const std::shared_ptr<const AgentTool> tool = m_tools->find(record.name);
    const PriorWritesCheck check = tool ? tool->descriptor().priorWrites : PriorWritesCheck();
    if (!check.isSet())
        return;
    record.priorWrites = {};
    record.priorWrites.state = PriorWrites::State::Checking;
    const SessionContext session = m_host.turnSession();
    PriorWritesLookup::Request request;
    request.writeTool = record.name;
    request.writeKey = record.operationId;
    request.check = check;
    request.arguments = record.arguments;
    request.context = {session.userId, session.tenantId, session.conversationId,
                       t.result.requestId, t.language};
    request.traceId = record.operationId + QStringLiteral("/prior");
    request.window = m_duplicateWindow;
    const quint64 serial = t.serial;
    PriorWritesLookup::start({m_tools, m_executor, m_writes.ledger(), m_toolBreakers,
                              m_toolPolicies},
                             request, m_loop, [this, index, serial](PriorWrites found) {
                                 if (!turn() || turn()->serial != serial)
                                     return;
                                 ToolCallRecord &waiting = turn()->result.toolCalls[index];
                                 if (waiting.state != ToolCallRecord::State::AwaitingConfirmation)
                                     return; // answered meanwhile: the card is gone
                                 waiting.priorWrites = std::move(found);
                                 Q_EMIT m_loop->toolCallUpdated(turn()->result.requestId, waiting);
                             });
}

QList<int> ToolRound::plan(const QList<ModelToolCall> &calls, int limit)
{
    TurnState &t = *turn();
    const SessionContext session = m_host.turnSession();
    if (calls.size() > limit) {
        qCWarning(lcAgent).noquote() << "turn" << t.result.requestId << "asked for" << calls.size()
                                     << "tool calls in one message; the" << calls.size() - limit
                                     << "beyond" << limit << "are not run";
    }
    // One refusal for every call beyond the bound: its strings are shared, not made again
    // for each of possibly thousands of calls.
    const ToolResult refused = ToolResult::failure(
        ResultCode::ToolCallLimit, t.language,
        {localized(t.language, "At most %1 tool calls run per model message",
                   "每条模型消息最多执行 %1 个工具调用")
             .arg(limit)});
    QList<int> started;
    for (const ModelToolCall &call : calls) {
        ToolCallRecord record;
        record.index = int(t.result.toolCalls.size());
        record.round = t.result.toolRounds;
        record.toolCallId = call.id;
        record.name = call.name;
        record.labels = labelsOf(call.name);
        record.rawArguments = call.arguments;
        // The app, not the model, names the operation; the model's id is only a trace.
        record.operationId = QStringLiteral("%1:%2:%3:%4:%5")
                                 .arg(session.tenantId, session.conversationId, t.result.requestId,
                                      call.name)
                                 .arg(record.index);
        if (started.size() >= limit) {
            // Beyond the bound nothing runs, but the model still gets an answer for every
            // call it made (the conversation must stay well-formed), and the plan records
            // it as finished so that a resumed turn does not run it either.
            record.state = ToolCallRecord::State::Finished;
            record.result = refused;
        } else if (call.cutFromBytes > 0) {
            // Over the bound on arguments: only an excerpt was kept (readModelAnswer), never
            // parsed; finished when planned, like the calls beyond the bound on calls.
            qCWarning(lcAgent).noquote()
                << "tool call" << record.operationId << "not run:" << call.cutFromBytes
                << "bytes of arguments";
            record.state = ToolCallRecord::State::Finished;
            record.result = ToolResult::failure(ResultCode::InvalidArgument, t.language,
                                                {localized(t.language,
                                                           "The arguments are larger than %1 KiB",
                                                           "工具参数超过 %1 KiB")
                                                     .arg(AgentLoop::maxArgumentBytes / 1024)});
        } else {
            started.append(record.index);
        }
        t.calls.add(record.operationId, record.index);
        t.result.toolCalls.append(record);
    }
    return started;
}

void ToolRound::start(const QList<int> &indexes)
{
    TurnState &t = *turn();
    t.pendingTools = int(indexes.size());
    for (int index : indexes)
        Q_EMIT m_loop->toolCallStarted(t.result.requestId, t.result.toolCalls[index]);
    // The calls the bounds refused were finished when planned: they are told, never run.
    for (const ToolCallRecord &record : std::as_const(t.result.toolCalls)) {
        if (record.round == t.result.toolRounds
            && record.state == ToolCallRecord::State::Finished) {
            Q_EMIT m_loop->toolCallFinished(t.result.requestId, record);
        }
    }
    // Every call of the round was refused when planned (arguments over their bound): the
    // model is told at once, as when the last call of a round finishes.
    if (indexes.isEmpty()) {
        m_host.roundFinished();
        return;
    }
    for (int index : indexes) {
        if (!turn() || turn()->finishing)
            return;
        dispatch(index);
    }
}

void ToolRound::dispatch(int index)
{
    TurnState &t = *turn();
    const ToolCallRecord &record = t.result.toolCalls[index];
    const SessionContext session = m_host.turnSession();
    const TrustedContext context{session.userId, session.tenantId, session.conversationId,
                                 t.result.requestId, t.language};
    // Parsed and checked against the tool's schema on the check pool: both grow with what the
    // model sent, and the GUI thread runs this loop (DESIGN.md, "Threading rules").
    QThreadPool *checkPool = checkWorkPool();
    const QFuture<ToolCallAdmission> admitted = QtConcurrent::run(
        checkPool,
        [tool = m_tools->find(record.name), raw = record.rawArguments, context,
         confirmed = record.confirmed] {
            return admitToolCall(tool.get(), raw, context, confirmed, AgentLoop::maxArgumentDepth);
        });
    const quint64 serial = t.serial;
    await(admitted, m_loop, [this, index, serial](ToolCallAdmission admission) {
        // The turn stopped meanwhile: stopTurn finished the record.
        if (!turn() || turn()->serial != serial || turn()->finishing
            || turn()->result.toolCalls[index].state == ToolCallRecord::State::Finished)
            return;
        admit(index, std::move(admission));
    });
}

void ToolRound::admit(int index, ToolCallAdmission admission)
{
    TurnState &t = *turn();
    ToolCallRecord &record = t.result.toolCalls[index];
    if (admission.verdict != ToolCallAdmission::Verdict::Refused)
        record.arguments = admission.arguments;
    switch (admission.verdict) {
    case ToolCallAdmission::Verdict::Lookup:
        execute(index);
        return;
    case ToolCallAdmission::Verdict::Write:
        executeWrite(index);
        return;
    case ToolCallAdmission::Verdict::AskStaff:
        record.state = ToolCallRecord::State::AwaitingConfirmation;
        qCInfo(lcAgent).noquote() << "tool call" << record.operationId
                                  << "waits for the staff member's confirmation";
        t.clock->pauseForStaff();
        checkPriorWrites(index); // the card tells what it finds when it is back
        Q_EMIT m_loop->confirmationRequested(t.result.requestId, record);
        return;
    case ToolCallAdmission::Verdict::Refused:
        // A resumed turn's confirmed write whose tool is gone (its MCP server did not come
        // back): the run that was interrupted may have claimed and sent it. The ledger says
        // which (its arguments, parsed then, came back with the checkpoint): unknown if it may
        // have run, not run otherwise, and its row is settled either way.
        if (t.resumed && record.confirmed && m_writes.hasLedger()
            && admission.refusal.code == ResultCode::UnknownTool) {
            executeWrite(index);
            return;
        }
        break;
    }
    // Nothing ran: the model named no real tool, or its arguments could not be used.
    qCInfo(lcAgent).noquote() << "tool call" << record.operationId
                              << "not run:" << admission.refusal.codeName();
    ToolCallOutcome immediate;
    immediate.result = std::move(admission.refusal);
    onToolFinished(index, immediate);
}

void ToolRound::execute(int index, const QString &idempotencyKey, bool mayHaveRun)
{
    TurnState &t = *turn();
    ToolCallRecord &record = t.result.toolCalls[index];
    record.state = ToolCallRecord::State::Running;
    Q_EMIT m_loop->toolCallUpdated(t.result.requestId, record);
    const bool isWrite = !idempotencyKey.isEmpty();
    ToolCallRequest request;
    request.tool = m_tools->find(record.name);
    request.arguments = record.arguments;
    const SessionContext session = m_host.turnSession();
    request.context = {session.userId, session.tenantId, session.conversationId,
                       t.result.requestId, t.language};
    request.traceId = record.operationId;
    request.budget = t.budget;
    request.breaker = m_toolBreakers ? m_toolBreakers(record.name) : nullptr;
    request.policy = m_toolPolicies(record.name);
    // What the timeline draws the call against.
    const RetryPolicy &policy = request.policy;
    record.attemptTimeoutMs = policy.attemptTimeout.count();
    record.worstCaseMs = policy.effectiveDeadline().count();
    record.maxAttempts = policy.maxAttempts();
    const QDeadlineTimer turnDeadline = t.budget->deadline();
    record.turnDeadlineLeftMs = turnDeadline.isForever()
        ? -1
        : std::max<qint64>(0, turnDeadline.remainingTime());
    request.idempotencyKey = idempotencyKey;
    request.mayHaveRun = mayHaveRun;
    request.prechecked = true; // by admitToolCall, on the check pool
    const QFuture<ToolCallOutcome> future = m_executor->execute(std::move(request));
    t.calls.track(index, future);
    // Watched as a QFuture<void>: a call stopped with its turn is cancelled and has no result.
    const quint64 serial = t.serial;
    await(QFuture<void>(future), m_loop, [this, future, index, isWrite, serial] {
        if (future.isCanceled() || future.resultCount() == 0)
            return;
        // The loop stopped the turn, finished the record and took what the call had (stopTurn).
        if (!turn() || turn()->serial != serial
            || turn()->result.toolCalls[index].state == ToolCallRecord::State::Finished)
            return;
        if (isWrite)
            onWriteFinished(index, future.result());
        else
            onToolFinished(index, future.result());
    });
}

void ToolRound::onAttemptEvent(const AttemptEvent &event)
{
    if (!turn())
        return;
    const std::optional<int> index = turn()->calls.indexOf(event.traceId);
    if (!index)
        return;
    ToolCallRecord &record = turn()->result.toolCalls[*index];
    if (record.state == ToolCallRecord::State::Finished)
        return;
    turn()->calls.attemptSeen(*index, event.callId);
    if (event.phase == AttemptEvent::Phase::Started) {
        record.runningAttempt = event.record.attempt;
        record.runningAttemptStartedMs = event.record.startedMs;
    } else {
        record.runningAttempt = 0;
        record.runningAttemptStartedMs = -1;
        // A question still open when its attempt ended went with it (the session withdraws
        // it and tells the server): nobody waits for staff's answer any more.
        if (record.question == ToolCallRecord::Question::Waiting)
            record.question = ToolCallRecord::Question::Withdrawn;
        record.attempts.append(event.record);
        // The attempt timeline in the local log, one line per attempt.
        qCInfo(lcAgent).noquote() << record.operationId << "attempt" << event.record.attempt
                                  << attemptOutcomeName(event.record.outcome) << "after"
                                  << event.record.durationMs << "ms; next delay"
                                  << event.record.nextDelayMs << "ms";
    }
    Q_EMIT m_loop->toolCallUpdated(turn()->result.requestId, record);
}

void ToolRound::onToolFinished(int index, const ToolCallOutcome &outcome)
{
    if (!turn())
        return;
    TurnState &t = *turn();
    ToolCallRecord &record = t.result.toolCalls[index];
    if (record.state == ToolCallRecord::State::Finished)
        return;
    record.state = ToolCallRecord::State::Finished;
    record.runningAttempt = 0;
    record.runningAttemptStartedMs = -1;
    if (record.question == ToolCallRecord::Question::Waiting)
        record.question = ToolCallRecord::Question::Withdrawn;
    record.result = outcome.result;
    record.attempts = outcome.attempts;
    record.totalMs = outcome.totalMs;
    record.incidentId = outcome.incidentId;
    record.circuitCooldownLeftMs = outcome.circuitCooldownLeftMs;
    record.isolation = outcome.isolation;
    Q_EMIT m_loop->toolCallFinished(t.result.requestId, record);
    // The round's last result is saved with TOOLS_EXECUTED, right after.
    if (--t.pendingTools == 0)
        m_host.roundFinished();
    else
        m_host.saveResult(index);
}

// A confirmed write: claim its operationId in the ledger first. Only a claim runs it; an
// earlier success is returned as it was, and anything the ledger cannot vouch for is not run.
void ToolRound::executeWrite(int index)
{
    TurnState &t = *turn();
    ToolCallRecord &record = t.result.toolCalls[index];
    if (!m_writes.hasLedger()) {
        qCWarning(lcAgent).noquote()
            << "write" << record.operationId << "not run: no idempotency ledger";
        ToolCallOutcome refused;
        refused.result = ToolResult::failure(ResultCode::ToolUnavailable, t.language);
        onToolFinished(index, refused);
        return;
    }
    // A write that needs no confirmation is audited as it starts; a resumed turn's writes
    // were, in the run that was interrupted.
    m_writes.follow(index, auditSubject(index));
    if (!record.confirmed && !t.resumed)
        m_writes.auditStart(index, AuditEntry::Event::Started);
    record.state = ToolCallRecord::State::Running;
    Q_EMIT m_loop->toolCallUpdated(t.result.requestId, record);
    const quint64 serial = t.serial;
    const Language language = t.language;
    // A resumed turn's writes may have been claimed by the run that was interrupted: a
    // PROCESSING row this console (the ledger's owner) claimed is that run's orphan to recover;
    // another console's claim on the same key stays its own.
    const QByteArray hash = requestHash(record.arguments);
    await(m_writes.claim(record.operationId, record.name, hash, t.resumed), m_loop,
          [this, index, serial, operationId = record.operationId, toolName = record.name,
           language](const LedgerClaim &claim) {
              if (!turn() || turn()->serial != serial || turn()->finishing
                  || turn()->result.toolCalls[index].state == ToolCallRecord::State::Finished) {
                  if (claim.outcome == LedgerClaim::Outcome::Claimed) // nothing was sent
                      m_writes.releaseClaim(operationId, toolName,
                                            ToolResult::failure(ResultCode::Cancelled, language));
                  return;
              }
              onClaim(index, claim);
          });
}

void ToolRound::onClaim(int index, const LedgerClaim &claim)
{
    TurnState &t = *turn();
    ToolCallRecord &record = t.result.toolCalls[index];
    if (record.state == ToolCallRecord::State::Finished)
        return;
    ToolCallOutcome answered;
    switch (claim.outcome) {
    case LedgerClaim::Outcome::Claimed: {
        m_writes.claimed(index);
        killPoint(KillPoints::WriteClaimed);
        // An earlier run may have acted when it stopped without a result (a PROCESSING row
        // taken over) or recorded that nobody knows; one that recorded a refusal (unavailable,
        // circuit open) sent nothing that acted. A tool with no way to ask its backend (an MCP
        // write) never sends again when it may have.
        const bool mayHaveRun = claim.mayHaveRun
            && (claim.storedResult.isEmpty()
                || ToolResult::fromJson(claim.storedResult).code
                    == ResultCode::ExecutionStatusUnknown);
        // One that cannot find out (its MCP server never came back after a restart, so its
        // tool is gone) is settled as unknown rather than refused as a tool nobody knows.
        // What it learns now settles what the earlier run left unknown (the audit trail).
        if (mayHaveRun)
            m_writes.settling(index,
                              t.resumed ? AuditEntry::Via::Resume : AuditEntry::Via::Replay);
        if (mayHaveRun && !m_tools->find(record.name)) {
            qCWarning(lcAgent).noquote() << "write" << record.operationId
                                         << "may have run, and its tool is not there to ask";
            ToolCallOutcome unknown;
            unknown.result = ToolResult::failure(ResultCode::ExecutionStatusUnknown, t.language);
            onWriteFinished(index, unknown);
            return;
        }
        execute(index, record.operationId, mayHaveRun);
        return;
    }
    case LedgerClaim::Outcome::AlreadySucceeded:
    case LedgerClaim::Outcome::FailedFinal:
    case LedgerClaim::Outcome::OutcomeUnknown:
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
        qCWarning(lcAgent).noquote()
            << "write" << record.operationId << "not run: the ledger failed:" << claim.detail;
        answered.result = ToolResult::failure(ResultCode::ToolUnavailable, t.language);
        break;
    }
    qCInfo(lcAgent).noquote() << "write" << record.operationId
                              << "answered by the ledger:" << answered.result.codeName();
    m_writes.auditOutcome(index, answered.result, AuditEntry::Via::Ledger);
    onToolFinished(index, answered);
}

void ToolRound::onWriteFinished(int index, ToolCallOutcome outcome)
{
    TurnState &t = *turn();
    const ToolCallRecord &record = t.result.toolCalls[index];
    const LedgerStatus status = settleWriteResult(outcome.result, outcome.attempts, t.language,
                                                  m_writes.outcomeCanBeLearned(record.name));
    if (outcome.result.code == ResultCode::ExecutionStatusUnknown)
        ++t.result.unknownExecutionStatus;
    killPoint(KillPoints::WriteAnswered);
    // The result counts as the tool's only once the ledger holds it, so that a checkpoint
    // never records a write whose row could still read PROCESSING. If recording fails the
    // row stays PROCESSING: the operation reads as in progress, never as a new one.
    m_writes.answered(index, outcome);
    const QString operationId = record.operationId;
    const quint64 serial = t.serial;
    const QFuture<LedgerCompletion> recorded = m_writes.record(record.operationId, status,
                                                               outcome.result);
    // Queued behind the ledger's record, on the same database thread.
    m_writes.auditOutcome(index, outcome.result, AuditEntry::Via::Backend);
    await(recorded, m_loop,
          [this, operationId, serial, index, outcome](const LedgerCompletion &completion) {
              if (completion.outcome == LedgerCompletion::Outcome::Kept) {
                  // The store is out: the ledger keeps the answer and records it once it is back.
                  qCWarning(lcAgent).noquote() << "write" << operationId
                                               << "answered; the ledger keeps it until its store "
                                                  "is back:"
                                               << completion.detail;
                  m_keptRetry->start();
              } else if (!completion.completed()) {
                  qCWarning(lcAgent).noquote()
                      << "write" << operationId
                      << "could not be recorded in the ledger:" << completion.detail;
              }
              killPoint(KillPoints::WriteRecorded);
              if (!turn() || turn()->serial != serial || turn()->finishing)
                  return; // the loop stopped the turn and already reported this outcome (stopTurn)
              m_writes.recorded(index);
              onToolFinished(index, outcome);
          });
}

AuditEntry ToolRound::auditSubject(int index) const
{
    const TurnState &t = *turn();
    const ToolCallRecord &record = t.result.toolCalls.at(index);
    const SessionContext session = m_host.turnSession();
    AuditEntry subject;
    subject.staffId = session.userId;
    subject.tenantId = session.tenantId;
    subject.conversationId = session.conversationId;
    subject.requestId = t.result.requestId;
    subject.operationId = record.operationId;
    subject.toolName = record.name;
    subject.idempotencyKey = record.operationId; // the ledger's key is the operationId
    subject.arguments = record.arguments;
    return subject;
}

// The approval is on disk before the write is claimed: a restart does not ask again.
void ToolRound::confirmed(int index)
{
    TurnState &t = *turn();
    // Audited as staff answer, before the approval is saved: a turn that cannot save it stops
    // there, and the write's outcome row says so (stopTurn).
    m_writes.follow(index, auditSubject(index));
    m_writes.auditStart(index, AuditEntry::Event::Confirmed);
    t.result.toolCalls[index].confirmed = true;
    t.result.toolCalls[index].state = ToolCallRecord::State::Running;
    m_host.saveTurn(
        t.stage, [this, index] { executeWrite(index); }, true);
}

} // namespace AgentConsole::Internal
