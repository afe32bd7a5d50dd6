#include "agentloop.h"
#include "agentloop_p.h"
#include "modelanswer.h"
#include "toolcalladmission.h"

#include "../async/await.h"
#include "../telemetry/logging.h"
#include "../tools/argumentschema.h"
#include "../tools/toolregistry.h"

#include <QFile>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QUuid>

namespace AgentConsole {
namespace Internal {

QString shortId(const QString &prefix)
{
    return prefix + QUuid::createUuid().toString(QUuid::Id128).left(12);
}

QString systemPrompt()
{
    QFile file(QStringLiteral(":/agentconsole/prompts/system.md"));
    if (file.open(QIODevice::ReadOnly))
        return QString::fromUtf8(file.readAll());
    return QStringLiteral("Answer only from tool results; never guess.");
}

} // namespace Internal

using namespace Internal;

AgentLoop::AgentLoop(Dependencies dependencies, QObject *parent)
    : QObject(parent)
    , d(std::make_unique<Private>(this, std::move(dependencies)))
{
    ToolExecutor *executor = d->executor;
    qRegisterMetaType<AgentConsole::ToolCallRecord>();
    qRegisterMetaType<AgentConsole::ModelProgress>();
    qRegisterMetaType<AgentConsole::TurnResult>();
    d->resetConversation();
    connect(executor, &ToolExecutor::attemptStarted, this,
            [this](const AttemptEvent &event) { d->onAttemptEvent(event); });
    connect(executor, &ToolExecutor::attemptFinished, this,
            [this](const AttemptEvent &event) { d->onAttemptEvent(event); });
}

AgentLoop::~AgentLoop()
{
    if (d->turn) {
        if (d->turn->reply)
            d->turn->reply->disconnect(this);
        // Their deliveries end with this object; the executor stops the running attempts.
        d->turn->calls.cancelRunning();
    }
}

void AgentLoop::setSession(const SessionContext &session)
{
    d->session = session;
    if (d->session.conversationId.isEmpty())
        d->session.conversationId = shortId(QStringLiteral("c-"));
}

SessionContext AgentLoop::session() const
{
    return d->session;
}

ToolLabels AgentLoop::toolLabels(const QString &toolName) const
{
    return d->labelsOf(toolName);
}

void AgentLoop::setModel(ChatModel *model)
{
    d->model = model;
}

ChatModel *AgentLoop::model() const
{
    return d->model;
}

void AgentLoop::setTurnLimits(const TurnLimits &limits)
{
    d->limits = limits;
}

AgentLoop::TurnLimits AgentLoop::turnLimits() const
{
    return d->limits;
}

bool AgentLoop::isBusy() const
{
    return d->turn != nullptr;
}

void AgentLoop::resetConversation()
{
    if (!isBusy())
        d->resetConversation();
}

bool AgentLoop::continueConversation(const QString &conversationId,
                                     const QList<ChatMessage> &messages)
{
    if (isBusy() || conversationId.isEmpty())
        return false;
    d->conversation = {ChatMessage::system(systemPrompt())};
    d->conversation.append(messages);
    d->session.conversationId = conversationId;
    return true;
}

void AgentLoop::Private::resetConversation()
{
    conversation = {ChatMessage::system(systemPrompt())};
    session.conversationId = shortId(QStringLiteral("c-"));
}

bool AgentLoop::isValidRequestId(const QString &requestId)
{
    static const QRegularExpression pattern(QStringLiteral("^[A-Za-z0-9._-]{1,64}$"));
    return pattern.match(requestId).hasMatch();
}

QString AgentLoop::ask(const QString &question, const QString &requestId)
{
    const QString text = question.trimmed();
    if (isBusy() || text.isEmpty() || text.size() > maxQuestionLength
        || (!requestId.isEmpty() && !isValidRequestId(requestId)))
        return {};
    if (d->session.conversationId.isEmpty())
        d->session.conversationId = shortId(QStringLiteral("c-"));

    Private::Turn &turn = d->newTurn();
    turn.result.requestId = requestId.isEmpty() ? shortId(QStringLiteral("r-")) : requestId;
    turn.result.conversationId = d->session.conversationId;
    turn.result.question = text;
    turn.language = languageOf(text);
    turn.conversationLengthBefore = d->conversation.size();
    d->conversation.append(ChatMessage::user(text));

    const QString id = turn.result.requestId;
    qCInfo(lcAgent).noquote() << "turn" << id << "received";
    Q_EMIT turnStarted(id, text);
    if (d->turn && !d->turn->finishing) // a slot may have cancelled it already
        d->checkpoint(TurnStage::Received, [this] { d->callModelWithTools(); });
    return id;
}

void AgentLoop::cancel()
{
    if (!d->turn || d->turn->finishing)
        return;
    d->stopTurn(TurnStatus::Cancelled, ResultCode::Cancelled,
                localized(d->turn->language, "Cancelled by the staff member.", "已由客服取消。"));
}

void AgentLoop::Private::onTurnDeadline()
{
    if (turn->finishing)
        return;
    stopTurn(TurnStatus::Failed, ResultCode::ToolTimeout,
             localized(turn->language,
                       "This request took longer than %1 s and was stopped. "
                       "Please try again later.",
                       "该请求超过 %1 秒仍未完成，已停止，请稍后重试。")
                 .arg(limits.deadline.count() / 1000.0));
}

AgentLoop::Private::Turn &AgentLoop::Private::newTurn()
{
    turn = std::make_unique<Turn>();
    writes.forgetTurn();
    turn->serial = ++turnsStarted;
    turn->budget = std::make_shared<RetryBudget>(
        limits.maxRetries, QDeadlineTimer(limits.deadline, Qt::PreciseTimer));
    turn->result.retryBudget = limits.maxRetries;
    turn->breakerOpensBefore = breakerRegistry ? breakerRegistry->openCount() : 0;
    // The turn's overall deadline: whatever is still running then is stopped, and the turn
    // fails with a plain sentence instead of waiting on layered retries.
    turn->clock = std::make_unique<TurnClock>(limits.deadline, q, [this] { onTurnDeadline(); });
    return *turn;
}

void AgentLoop::Private::stopTurn(TurnStatus status, const QString &unfinishedCode,
                                  const QString &answer)
{
    Turn &turn = *this->turn;
    if (turn.finishing)
        return;
    const bool toolsDone = !turn.result.toolCalls.isEmpty()
        && std::all_of(turn.result.toolCalls.cbegin(), turn.result.toolCalls.cend(),
                       [](const ToolCallRecord &call) {
                           return call.state == ToolCallRecord::State::Finished;
                       });
    if (turn.reply) {
        turn.reply->disconnect(q);
        turn.reply->abort();
        turn.reply->deleteLater();
        turn.reply.clear();
    }
    // Reaches the executor, which raises the running attempt's cancellation token.
    turn.calls.cancelRunning();
    // Calls still running end here with the attempt they were in (or the backoff they were
    // waiting out) recorded as cancelled or stopped at the deadline, and with their time, so
    // that the card and --json do not read "1 attempt · 0 ms" (issue #8). Their records are
    // finished here: what stop() returns is taken here, and a later delivery finds the record
    // finished and is dropped.
    const AttemptOutcome why = status == TurnStatus::Cancelled ? AttemptOutcome::Cancelled
                                                               : AttemptOutcome::DeadlineReached;
    // Calls that had ended before the stop keep the outcome they had (CallsInFlight::Ended).
    const CallsInFlight::Ended ended = turn.calls.endUnfinished(turn.result.toolCalls, why,
                                                                *executor);
    // A write stopped in flight may still reach the backend: the write guard settles it
    // (WriteGuard::settleStopped), never as "cancelled".
    const QSet<int> claimedWrites = writes.claimedWrites();
    for (int index : claimedWrites) {
        ToolCallRecord &call = turn.result.toolCalls[index];
        if (call.state == ToolCallRecord::State::Finished)
            continue;
        call.state = ToolCallRecord::State::Finished;
        if (writes.settleStopped(call, ended, turn.language))
            ++turn.result.unknownExecutionStatus;
        Q_EMIT q->toolCallFinished(turn.result.requestId, call);
    }
    writes.forgetTurn();
    for (ToolCallRecord &call : turn.result.toolCalls) {
        if (call.state != ToolCallRecord::State::Finished) {
            call.state = ToolCallRecord::State::Finished;
            if (!ended.takeArrived(call)) {
                ended.takeStopped(call);
                call.result = ToolResult::failure(unfinishedCode, turn.language);
            }
            Q_EMIT q->toolCallFinished(turn.result.requestId, call);
        }
    }
    // Every tool had finished: only the answer is missing, and it may be tried again from the
    // stored results (a deadline that passed while the model wrote). A staff member's cancel
    // is final.
    if (status == TurnStatus::Failed && toolsDone)
        turn.answerFailed = true;
    finishTurn(status, answer);
}

void AgentLoop::Private::callModelWithTools()
{
    if (!toolsReady) {
        callModel();
        return;
    }
    // The turn's deadline runs meanwhile, and a cancel ends the turn: a late answer from the
    // wait finds another turn, or this one finishing, and is dropped.
    const quint64 serial = turn->serial;
    toolsReady(q, [this, serial](const QStringList &notReady) {
        if (!turn || turn->serial != serial || turn->finishing)
            return;
        turn->result.serversNotReady = notReady;
        if (!notReady.isEmpty())
            qCInfo(lcAgent).noquote() << "turn" << turn->result.requestId
                                      << "asks the model without the tools of"
                                      << notReady.join(QStringLiteral(", ")) << "(not ready)";
        callModel();
    });
}

void AgentLoop::Private::callModel()
{
    Turn &t = *turn;
    ChatRequest request;
    request.messages = conversation;
    request.budget = t.budget;
    ++t.result.modelCalls;
    // The last round offers no tools, so the model has to answer from what it has.
    if (t.result.toolRounds < AgentLoop::maxToolRounds)
        request.tools = tools->descriptors();

    ChatReply *reply = model->complete(request);
    reply->setParent(q);
    t.reply = reply;
    const QString requestId = t.result.requestId;
    QObject::connect(reply, &ChatReply::contentDelta, q, [this, requestId](const QString &text) {
        Q_EMIT q->answerDelta(requestId, text);
    });
    QObject::connect(reply, &ChatReply::retrying, q,
                     [this, requestId](const QString &name, int attempt, int maxAttempts, int) {
                         Q_EMIT q->modelProgress(requestId, {ModelProgress::Kind::Retrying, name,
                                                             attempt, maxAttempts});
                     });
    QObject::connect(reply, &ChatReply::fallingBack, q, [this, requestId](const QString &name) {
        Q_EMIT q->modelProgress(requestId, {ModelProgress::Kind::FallingBack, name, 0, 0});
    });
    QObject::connect(reply, &ChatReply::finished, q, [this, reply] { onModelFinished(reply); });
    if (reply->isFinished()) // a provider that failed before returning
        QMetaObject::invokeMethod(
            q, [this, reply] { onModelFinished(reply); }, Qt::QueuedConnection);
}

void AgentLoop::Private::onModelFinished(ChatReply *reply)
{
    reply->deleteLater();
    if (!turn || turn->reply != reply)
        return;
    Turn &t = *turn;
    t.reply.clear();
    ModelStep step = readModelAnswer(reply->response(), t.result, t.language,
                                     t.result.toolRounds < AgentLoop::maxToolRounds,
                                     AgentLoop::maxShownReasoning);
    switch (step.next) {
    case ModelStep::Next::Fail:
        // After the tools ran, only the answer is missing: it can be tried again later from
        // the stored results, without running any tool.
        t.answerFailed = t.stage == TurnStage::AnswerGenerating;
        finishTurn(TurnStatus::Failed, step.text);
        return;
    case ModelStep::Next::TooManyToolRounds:
        finishTurn(TurnStatus::Failed, step.text);
        return;
    case ModelStep::Next::Decline:
        finishTurn(TurnStatus::Completed, step.text);
        return;
    case ModelStep::Next::RunTools:
        conversation.append(step.message);
        runTools(step.toolCalls);
        return;
    case ModelStep::Next::Answer:
        conversation.append(step.message);
        finishTurn(TurnStatus::Completed, step.text);
        return;
    }
}

void AgentLoop::Private::runTools(const QList<ModelToolCall> &calls)
{
    Turn &t = *turn;
    ++t.result.toolRounds;
    const int limit = std::max(1, limits.maxToolCallsPerMessage);
    if (calls.size() > limit) {
        qCWarning(lcAgent).noquote() << "turn" << t.result.requestId << "asked for"
                                     << calls.size() << "tool calls in one message; the"
                                     << calls.size() - limit << "beyond" << limit
                                     << "are not run";
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
                                 .arg(session.tenantId, session.conversationId,
                                      t.result.requestId, call.name)
                                 .arg(record.index);
        if (started.size() >= limit) {
            // Beyond the bound nothing runs, but the model still gets an answer for every
            // call it made (the conversation must stay well-formed), and the plan records
            // it as finished so that a resumed turn does not run it either.
            record.state = ToolCallRecord::State::Finished;
            record.result = refused;
        } else {
            started.append(record.index);
        }
        t.calls.add(record.operationId, record.index);
        t.result.toolCalls.append(record);
    }
    // The plan is on disk before anything runs: a restart finds the same operationIds.
    checkpoint(TurnStage::Planned, [this, started] { startCalls(started); }, true);
}

void AgentLoop::Private::startCalls(const QList<int> &indexes)
{
    Turn &t = *turn;
    t.pendingTools = int(indexes.size());
    for (int index : indexes)
        Q_EMIT q->toolCallStarted(t.result.requestId, t.result.toolCalls[index]);
    // The calls the bound refused were finished when planned: they are told, never run.
    for (const ToolCallRecord &record : std::as_const(t.result.toolCalls)) {
        if (record.round == t.result.toolRounds
            && record.result.code == ResultCode::ToolCallLimit) {
            Q_EMIT q->toolCallFinished(t.result.requestId, record);
        }
    }
    for (int index : indexes) {
        if (!turn || turn->finishing)
            return;
        dispatch(index);
    }
}

void AgentLoop::Private::dispatch(int index)
{
    Turn &t = *turn;
    ToolCallRecord &record = t.result.toolCalls[index];
    const TrustedContext context{session.userId, session.tenantId, session.conversationId,
                                 t.result.requestId, t.language};
    const std::shared_ptr<const AgentTool> tool = tools->find(record.name);
    ToolCallAdmission admission = admitToolCall(tool.get(), record.rawArguments, context,
                                                record.confirmed, AgentLoop::maxArgumentDepth);
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
        Q_EMIT q->confirmationRequested(t.result.requestId, record);
        return;
    case ToolCallAdmission::Verdict::Refused:
        break;
    }
    // Nothing ran: the model named no real tool, or its arguments could not be used.
    qCInfo(lcAgent).noquote() << "tool call" << record.operationId << "not run:"
                              << admission.refusal.code;
    ToolCallOutcome immediate;
    immediate.result = std::move(admission.refusal);
    onToolFinished(index, immediate);
}

void AgentLoop::Private::execute(int index, const QString &idempotencyKey, bool mayHaveRun)
{
    Turn &t = *turn;
    ToolCallRecord &record = t.result.toolCalls[index];
    record.state = ToolCallRecord::State::Running;
    Q_EMIT q->toolCallUpdated(t.result.requestId, record);
    const bool isWrite = !idempotencyKey.isEmpty();
    ToolCallRequest request;
    request.tool = tools->find(record.name);
    request.arguments = record.arguments;
    request.context = {session.userId, session.tenantId, session.conversationId,
                       t.result.requestId, t.language};
    request.traceId = record.operationId;
    request.budget = t.budget;
    request.breaker = toolBreakers ? toolBreakers(record.name) : nullptr;
    request.turnDeadline = t.budget->deadline();
    request.policy = toolPolicies ? toolPolicies(record.name) : std::nullopt;
    // What the timeline draws the call against.
    const RetryPolicy &policy = request.policy ? *request.policy
                                               : executor->options().defaultPolicy;
    record.attemptTimeoutMs = policy.attemptTimeout.count();
    record.worstCaseMs = policy.effectiveDeadline().count();
    record.maxAttempts = policy.maxAttempts();
    record.turnDeadlineLeftMs = request.turnDeadline.isForever()
        ? -1 : std::max<qint64>(0, request.turnDeadline.remainingTime());
    request.idempotencyKey = idempotencyKey;
    request.mayHaveRun = mayHaveRun;
    const QFuture<ToolCallOutcome> future = executor->execute(std::move(request));
    t.calls.track(index, future);
    // Watched as a QFuture<void>: a call stopped with its turn is cancelled and has no result.
    const quint64 serial = t.serial;
    await(QFuture<void>(future), q, [this, future, index, isWrite, serial] {
        if (future.isCanceled() || future.resultCount() == 0)
            return;
        // stopTurn() finished the record and took what the call had: nothing more comes.
        if (!turn || turn->serial != serial
            || turn->result.toolCalls[index].state == ToolCallRecord::State::Finished)
            return;
        if (isWrite)
            onWriteFinished(index, future.result());
        else
            onToolFinished(index, future.result());
    });
}

void AgentLoop::Private::onAttemptEvent(const AttemptEvent &event)
{
    if (!turn)
        return;
    const std::optional<int> index = turn->calls.indexOf(event.traceId);
    if (!index)
        return;
    ToolCallRecord &record = turn->result.toolCalls[*index];
    if (record.state == ToolCallRecord::State::Finished)
        return;
    turn->calls.attemptSeen(*index, event.callId);
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
    Q_EMIT q->toolCallUpdated(turn->result.requestId, record);
}

void AgentLoop::Private::onToolFinished(int index, const ToolCallOutcome &outcome)
{
    if (!turn)
        return;
    Turn &t = *turn;
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
    Q_EMIT q->toolCallFinished(t.result.requestId, record);
    // The round's last result is saved with TOOLS_EXECUTED, right after.
    if (--t.pendingTools == 0)
        finishToolRound();
    else
        saveProgress(index);
}

void AgentLoop::Private::finishToolRound()
{
    Turn &t = *turn;
    for (const ToolCallRecord &record : std::as_const(t.result.toolCalls)) {
        if (!record.incidentId.isEmpty()) {
            // A bug is not a tool result: the model never sees it, the turn stops here.
            t.result.incidentId = record.incidentId;
            finishTurn(TurnStatus::Failed,
                       localized(t.language,
                                 "An internal error stopped this request (incident %1). "
                                 "The details are in the local log.",
                                 "内部错误导致该请求中止（事件编号 %1），详情见本地日志。")
                           .arg(record.incidentId));
            return;
        }
    }
    // The results join the conversation first: a turn stopped from here on is resumed from
    // them, and the model must find every call of the round answered.
    for (const ToolCallRecord &record : std::as_const(t.result.toolCalls)) {
        if (record.round != t.result.toolRounds)
            continue;
        conversation.append(ChatMessage::toolResult(record.toolCallId, record.name,
            QString::fromUtf8(
                QJsonDocument(record.result.toJson()).toJson(QJsonDocument::Compact))));
    }
    // Tool calls end at the turn's deadline at the latest, possibly just before the loop's own
    // deadline timer fires: either way the turn is over, whichever noticed first.
    if (t.budget->deadline().hasExpired()) {
        onTurnDeadline();
        return;
    }
    checkpoint(TurnStage::ToolsExecuted, [this] {
        checkpoint(TurnStage::AnswerGenerating, [this] { callModel(); });
    });
}

void AgentLoop::Private::finishTurn(TurnStatus status, const QString &answer)
{
    Turn &t = *turn;
    if (t.finishing)
        return;
    // The turn stays busy until its final checkpoint is on disk.
    t.finishing = true;
    t.clock->stop();
    t.result.status = status;
    t.result.answer = answer;
    t.result.totalMs = t.clock->elapsedMs();
    if (breakerRegistry)
        t.result.breakerOpens = breakerRegistry->openCount() - t.breakerOpensBefore;
    if (t.result.model.isEmpty() && model)
        t.result.model = model->modelName();
    checkpoint(status == TurnStatus::Completed ? TurnStage::Completed : TurnStage::Failed,
               [this] { emitFinished(); });
}

void AgentLoop::Private::emitFinished()
{
    std::unique_ptr<Turn> finished = std::move(turn);
    // The deadline timer may be the one whose timeout brought us here: let it go later.
    finished->clock->releaseTimerLater();
    const TurnStatus status = finished->result.status;
    if (beforeResume) {
        // The staff member's own conversation carries on, not the resumed one; unless it is
        // the resumed one (reopened from the history), which then keeps the finished turn.
        const bool sameConversation = beforeResume->first.conversationId
                == session.conversationId
            && beforeResume->first.userId == session.userId
            && beforeResume->first.tenantId == session.tenantId;
        if (!sameConversation || status != TurnStatus::Completed)
            std::tie(session, conversation) = std::move(*beforeResume);
        beforeResume.reset();
    } else if (status != TurnStatus::Completed) {
        // Keep the conversation well-formed for the next turn: drop this turn's half.
        conversation.resize(finished->conversationLengthBefore);
    }
    qCInfo(lcAgent).noquote() << "turn" << finished->result.requestId
                              << turnStatusName(status) << "in" << finished->result.totalMs
                              << "ms with" << finished->result.toolCalls.size() << "tool calls";
    Q_EMIT q->turnFinished(finished->result);
}

ToolLabels AgentLoop::Private::labelsOf(const QString &toolName) const
{
    const std::shared_ptr<const AgentTool> tool = tools ? tools->find(toolName) : nullptr;
    return tool ? tool->descriptor().labels : ToolLabels();
}

} // namespace AgentConsole
