#include "agentloop.h"
#include "agentloop_p.h"
#include "conversationwindow.h"
#include "internal/modelanswer.h"

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
            [this](const AttemptEvent &event) { d->round.onAttemptEvent(event); });
    connect(executor, &ToolExecutor::attemptFinished, this,
            [this](const AttemptEvent &event) { d->round.onAttemptEvent(event); });
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

QList<ChatMessage> AgentLoop::conversationMessages() const
{
    return d->conversation.mid(1); // past the system prompt
}

bool AgentLoop::continueConversation(const QString &conversationId,
                                     const QList<ChatMessage> &messages)
{
    if (isBusy() || conversationId.isEmpty())
        return false;
    d->conversation = {ChatMessage::system(systemPrompt())};
    d->conversation.append(messages);
    ++d->conversationRevision;
    d->session.conversationId = conversationId;
    return true;
}

void AgentLoop::Private::resetConversation()
{
    conversation = {ChatMessage::system(systemPrompt())};
    ++conversationRevision;
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
    turn.result.scenario = d->session.scenario;
    turn.result.question = text;
    if (d->turnConditions)
        turn.result.conditions = d->turnConditions();
    if (d->turnPolicy)
        turn.result.teamPolicy = d->turnPolicy();
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
    round.writes().forgetTurn();
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

void AgentLoop::Private::stopTurn(TurnStatus status, ResultCode::Code unfinishedCode,
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
    Internal::WriteGuard &writes = round.writes();
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
    // Every write the turn audited has its outcome row: what its record says now.
    writes.auditUnfinished(turn.result.toolCalls, AuditEntry::Via::Stopped);
    writes.forgetTurn();
    // Every tool had finished: only the answer is missing, and it may be tried again from the
    // stored results (a deadline that passed while the model wrote). A staff member's cancel
    // is final.
    if (status == TurnStatus::Failed && toolsDone)
        turn.answerFailed = true;
    finishTurn(status, answer);
}

void AgentLoop::Private::callModelWithTools()
{
    whenToolsReady([this] { callModel(); });
}

void AgentLoop::Private::whenToolsReady(std::function<void()> next)
{
    if (!toolsReady) {
        next();
        return;
    }
    // The turn's deadline runs meanwhile, and a cancel ends the turn: a late answer from the
    // wait finds another turn, or this one finishing, and is dropped.
    const quint64 serial = turn->serial;
    toolsReady(q, [this, serial, next = std::move(next)](const QStringList &notReady) {
        if (!turn || turn->serial != serial || turn->finishing)
            return;
        turn->result.serversNotReady = notReady;
        if (!notReady.isEmpty())
            qCInfo(lcAgent).noquote()
                << "turn" << turn->result.requestId << "goes on without the tools of"
                << notReady.join(QStringLiteral(", ")) << "(not ready)";
        next();
    });
}

void AgentLoop::Private::callModel()
{
    Turn &t = *turn;
    ChatRequest request;
    ConversationWindow window = ConversationWindow::of(conversation, limits.conversationChars);
    request.messages = std::move(window.messages);
    if (window.turnsLeftOut > t.result.turnsLeftOut) {
        t.result.turnsLeftOut = window.turnsLeftOut;
        qCInfo(lcAgent).noquote() << "turn" << t.result.requestId << "sends the model"
                                  << "the latest turns only:" << window.turnsLeftOut
                                  << "earlier turns left out (conversation budget"
                                  << limits.conversationChars << "characters)";
    }
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
                         Q_EMIT q->modelProgress(requestId,
                                                 {ModelProgress::Kind::Retrying, name, attempt,
                                                  maxAttempts});
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
                                     {AgentLoop::maxShownReasoning, AgentLoop::maxArgumentBytes,
                                      AgentLoop::cutArgumentExcerpt});
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
    ++turn->result.toolRounds;
    const QList<int> started = round.plan(calls, std::max(1, limits.maxToolCallsPerMessage));
    // The plan is on disk before anything runs: a restart finds the same operationIds.
    checkpoint(
        TurnStage::Planned, [this, started] { round.start(started); }, true);
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
        conversation.append(ChatMessage::toolResult(
            record.toolCallId, record.name,
            QString::fromUtf8(
                QJsonDocument(record.result.toJson()).toJson(QJsonDocument::Compact))));
    }
    // Tool calls end at the turn's deadline at the latest, possibly just before the loop's own
    // deadline timer fires: either way the turn is over, whichever noticed first.
    if (t.budget->deadline().hasExpired()) {
        onTurnDeadline();
        return;
    }
    checkpoint(TurnStage::ToolsExecuted,
               [this] { checkpoint(TurnStage::AnswerGenerating, [this] { callModel(); }); });
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
        const bool sameConversation = beforeResume->first.conversationId == session.conversationId
            && beforeResume->first.userId == session.userId
            && beforeResume->first.tenantId == session.tenantId;
        if (!sameConversation || status != TurnStatus::Completed) {
            std::tie(session, conversation) = std::move(*beforeResume);
            ++conversationRevision;
        }
        beforeResume.reset();
    } else if (status != TurnStatus::Completed) {
        // Keep the conversation well-formed for the next turn: drop this turn's half.
        conversation.resize(finished->conversationLengthBefore);
        ++conversationRevision;
    }
    qCInfo(lcAgent).noquote() << "turn" << finished->result.requestId << turnStatusName(status)
                              << "in" << finished->result.totalMs << "ms with"
                              << finished->result.toolCalls.size() << "tool calls";
    Q_EMIT q->turnFinished(finished->result);
}

ToolLabels AgentLoop::Private::labelsOf(const QString &toolName) const
{
    return round.labelsOf(toolName);
}

} // namespace AgentConsole
