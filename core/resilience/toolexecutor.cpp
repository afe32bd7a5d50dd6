#include "toolexecutor.h"

#include "internal/attemptpool.h"
#include "internal/attemptverdict.h"
#include "internal/deadlinequeue.h"
#include "internal/executorcall.h"

#include "../telemetry/logging.h"

#include <QMetaMethod>
#include <QTimerEvent>

#include <unordered_map>
#include <vector>

namespace AgentConsole {

using namespace Internal;
using Millis = std::chrono::milliseconds;
using Call = ExecutorCall;

// The retry state machine of every call: attempts started and raced against their timeout,
// their ends judged (attemptverdict.h), retries scheduled after a backoff, outcomes delivered.
// Where the bodies run is AttemptPool's; when timers fire is DeadlineQueue's.
class ToolExecutor::Private
{
public:
    Private(ToolExecutor *q, const Options &options)
        : q(q)
        , options(options)
        , deadlines(q)
        , pool(q, {options.workerThreads, options.bulkheadPerTool, options.maxReplacementThreads},
               [this](const AttemptPtr &attempt, AttemptResult result) {
                   onBodyFinished(attempt, std::move(result));
               })
    {
    }

    void startAttempt(Call *call);
    void refuseOpenCircuit(Call *call, qint64 now);
    void onBodyFinished(const AttemptPtr &attempt, AttemptResult result);
    void onAttemptTimeout(Call *call);
    void onCallerCancelled(quint64 callId);
    std::optional<ToolCallOutcome> stopCall(quint64 callId, AttemptOutcome why);
    void detachCurrentAttempt(Call *call);
    void settle(Call *call, FailureKind kind, AttemptRecord record, const AttemptResult &result);
    void finish(Call *call, ToolResult result, FailureKind kind, const QString &incidentId = {});
    bool consumeRetry(Call *call, int attempt);
    void armTimer(Call *call, qint64 ms, TimerPurpose purpose);
    void disarmTimer(Call *call);
    void fireDueDeadlines();
    void rearmWake();
    void emitEvent(const Call *call, AttemptEvent::Phase phase, const AttemptRecord &record);
    std::unique_ptr<CancelWatch> takeCancelWatch();
    void putBackCancelWatch(std::unique_ptr<CancelWatch> watch);

    ToolExecutor *q;
    Options options;
    std::unordered_map<quint64, std::unique_ptr<Call>> calls;
    DeadlineQueue deadlines;
    AttemptPool pool;
    quint64 nextCallId = 1;
    // What a spare cancel watcher watches: a future that never starts, finishes or cancels,
    // so that watching it posts nothing. Declared before the watchers, which go first.
    QFutureInterface<ToolCallOutcome> idle{QFutureInterfaceBase::Running};
    std::vector<std::unique_ptr<CancelWatch>> spareWatches;
};

ToolExecutor::ToolExecutor(QObject *parent)
    : ToolExecutor(Options{}, parent)
{
}

ToolExecutor::ToolExecutor(const Options &options, QObject *parent)
    : QObject(parent)
    , d(std::make_unique<Private>(this, options))
{
    qRegisterMetaType<AgentConsole::AttemptEvent>();
    qRegisterMetaType<AgentConsole::ToolCallOutcome>();
}

ToolExecutor::~ToolExecutor()
{
    d->pool.stopDelivering();
    cancelAll();
    // Bodies that honour cancellation return within microseconds; one that ignores it is left
    // to the process (AttemptPool::waitForBodies).
    d->pool.waitForBodies(1000);
}

const ToolExecutor::Options &ToolExecutor::options() const
{
    return d->options;
}

void ToolExecutor::setBulkheadLimit(const QString &toolName, int limit)
{
    d->pool.setBulkheadLimit(toolName, limit);
}

int ToolExecutor::activeCalls() const
{
    return int(d->calls.size());
}

int ToolExecutor::abandonedBodies() const
{
    return d->pool.abandonedBodies();
}

int ToolExecutor::threadLimit() const
{
    return d->pool.threadLimit();
}

QFuture<ToolCallOutcome> ToolExecutor::execute(ToolCallRequest request)
{
    Q_ASSERT(request.tool);
    const RetryPolicy policy = request.policy;
    const quint64 id = d->nextCallId++;

    // Validation and trusted context are checked here, before any attempt: a wrong order id
    // must not be executed three times.
    if (auto rejected = request.prechecked
            ? std::nullopt
            : request.tool->precheck(request.arguments, request.context)) {
        QPromise<ToolCallOutcome> promise{
            QFutureInterface<ToolCallOutcome>(QFutureInterfaceBase::Running)};
        ToolCallOutcome outcome;
        outcome.callId = id;
        outcome.toolName = request.tool->name();
        outcome.finalFailure = FailureKind::InvalidArgument;
        outcome.result = std::move(*rejected);
        promise.addResult(std::move(outcome));
        promise.finish();
        return promise.future();
    }

    auto call = std::make_unique<Call>(id, std::move(request), policy);
    Call *raw = call.get();
    // Running, but never reported started: a started future posts a "started" callout to
    // every watcher connected to it (the cancel watcher below and the caller's), one more
    // event through this thread's loop per watcher and call, a measurable part of a call's
    // cost, for a signal nothing here uses (docs/PERFORMANCE.md, "executor_bench").
    QFuture<ToolCallOutcome> future = raw->promise.future();
    raw->cancelWatch = d->takeCancelWatch();
    raw->cancelWatch->callId = id;
    raw->cancelWatch->setFuture(future);
    d->calls.emplace(id, std::move(call));
    d->startAttempt(raw);
    return future;
}

void ToolExecutor::cancelAll()
{
    QList<quint64> ids;
    for (const auto &entry : d->calls)
        ids.append(entry.first);
    for (quint64 id : ids)
        d->onCallerCancelled(id);
}

std::optional<ToolCallOutcome> ToolExecutor::stop(quint64 callId, AttemptOutcome why)
{
    return d->stopCall(callId, why);
}

void ToolExecutor::timerEvent(QTimerEvent *event)
{
    if (!d->deadlines.takeWakeTimer(event->timerId())) {
        QObject::timerEvent(event);
        return;
    }
    d->fireDueDeadlines();
    d->rearmWake();
}

void ToolExecutor::Private::fireDueDeadlines()
{
    while (const std::optional<DeadlineQueue::Due> due = deadlines.takeDue()) {
        const auto it = calls.find(due->callId);
        if (it == calls.end())
            continue;
        Call *call = it->second.get();
        if (call->timerSequence != due->sequence)
            continue; // disarmed or re-armed since
        const TimerPurpose purpose = call->timerPurpose;
        disarmTimer(call);
        if (purpose == TimerPurpose::AttemptTimeout)
            onAttemptTimeout(call);
        else if (purpose == TimerPurpose::Backoff)
            startAttempt(call);
    }
}

void ToolExecutor::Private::rearmWake()
{
    deadlines.rearm([this](quint64 callId) { return calls.find(callId) != calls.end(); });
}

void ToolExecutor::Private::armTimer(Call *call, qint64 ms, TimerPurpose purpose)
{
    call->timerSequence = deadlines.arm(call->id, ms);
    call->timerPurpose = purpose;
    rearmWake();
}

void ToolExecutor::Private::disarmTimer(Call *call)
{
    call->timerSequence = 0;
    call->timerPurpose = TimerPurpose::None;
}

std::unique_ptr<CancelWatch> ToolExecutor::Private::takeCancelWatch()
{
    if (!spareWatches.empty()) {
        std::unique_ptr<CancelWatch> watch = std::move(spareWatches.back());
        spareWatches.pop_back();
        return watch;
    }
    auto watch = std::make_unique<CancelWatch>();
    CancelWatch *raw = watch.get();
    connect(raw, &QFutureWatcherBase::canceled, q,
            [this, raw] { onCallerCancelled(raw->callId); });
    return watch;
}

// Watching the idle future instead of the call's, before the call's promise reports: no
// result and finished callouts are posted to it (each would wake this thread's loop).
void ToolExecutor::Private::putBackCancelWatch(std::unique_ptr<CancelWatch> watch)
{
    constexpr std::size_t maxSpare = 16; // as many as calls usually run at once
    watch->callId = 0;
    if (spareWatches.size() >= maxSpare)
        return; // destroyed; its future has not reported yet, so nothing was posted to it
    watch->setFuture(idle.future());
    spareWatches.push_back(std::move(watch));
}

void ToolExecutor::Private::emitEvent(const Call *call, AttemptEvent::Phase phase,
                                      const AttemptRecord &record)
{
    static const QMetaMethod started = QMetaMethod::fromSignal(&ToolExecutor::attemptStarted);
    static const QMetaMethod finished = QMetaMethod::fromSignal(&ToolExecutor::attemptFinished);
    const bool isStart = phase == AttemptEvent::Phase::Started;
    if (!q->isSignalConnected(isStart ? started : finished))
        return;
    const AttemptEvent event{call->id, call->traceId, call->toolName, phase, record};
    if (isStart)
        Q_EMIT q->attemptStarted(event);
    else
        Q_EMIT q->attemptFinished(event);
}

void ToolExecutor::Private::startAttempt(Call *call)
{
    const qint64 now = call->clock.elapsed();
    const qint64 remaining = call->deadlineMs - now;
    if (remaining <= 0) {
        const FailureKind last = call->attempts.isEmpty() ? FailureKind::AttemptTimeout
            : call->attempts.constLast().outcome == AttemptOutcome::TimedOut
            ? FailureKind::AttemptTimeout
            : FailureKind::Transient;
        finish(call, failureFor(codeFor(last), call->context.language), last);
        return;
    }
    if (call->breaker && !call->breaker->tryAcquire()) {
        refuseOpenCircuit(call, now);
        return;
    }

    auto attempt = std::make_shared<Attempt>();
    attempt->call = call;
    attempt->toolName = call->toolName;
    attempt->index = int(call->attempts.size()) + 1;
    attempt->startedMs = now;
    const qint64 timeoutMs = std::min<qint64>(call->policy.attemptTimeout.count(), remaining);
    attempt->deadline = QDeadlineTimer(timeoutMs, Qt::PreciseTimer);
    call->current = attempt;

    AttemptRecord record;
    record.attempt = attempt->index;
    record.startedMs = now;
    emitEvent(call, AttemptEvent::Phase::Started, record);

    armTimer(call, timeoutMs, TimerPurpose::AttemptTimeout);

    pool.submit(attempt);
}

void ToolExecutor::Private::refuseOpenCircuit(Call *call, qint64 now)
{
    call->circuitCooldownLeftMs = call->breaker->cooldownLeft().count();
    call->isolation = call->breaker->isolation();
    if (!call->attempts.isEmpty()) {
        // A retry refused after earlier attempts: the timeline ends with the refusal, so that
        // the card shows why the backoff led nowhere. A first attempt refused leaves no record;
        // the result says why.
        AttemptRecord record;
        record.attempt = int(call->attempts.size()) + 1;
        record.startedMs = now;
        record.outcome = AttemptOutcome::CircuitOpen;
        record.made = false;
        call->attempts.append(record);
        emitEvent(call, AttemptEvent::Phase::Finished, record);
    }
    const Language language = call->context.language;
    if (!call->isolation.isNull()) {
        qCInfo(lcResilience).noquote()
            << call->toolName << "not attempted: circuit" << call->breaker->dependency()
            << "is isolated by" << call->isolation.leadStaffId;
        finish(call,
               failureFor(codeFor(FailureKind::CircuitOpen), language, {isolatedReason(language)}),
               FailureKind::CircuitOpen);
        return;
    }
    qCInfo(lcResilience).noquote()
        << call->toolName << "not attempted: circuit" << call->breaker->dependency()
        << "is open for another" << call->circuitCooldownLeftMs << "ms";
    finish(call,
           failureFor(codeFor(FailureKind::CircuitOpen), language, {circuitOpenReason(language)}),
           FailureKind::CircuitOpen);
}

void ToolExecutor::Private::onBodyFinished(const AttemptPtr &attempt, AttemptResult result)
{
    pool.bodyReturned(attempt, result);

    Call *call = attempt->call;
    if (!call || call->current != attempt)
        return; // timed out or cancelled earlier; its outcome is already recorded
    disarmTimer(call);
    call->current.reset();

    AttemptRecord record;
    record.attempt = attempt->index;
    record.startedMs = attempt->startedMs;
    record.durationMs = call->clock.elapsed() - attempt->startedMs;
    record.outcome = outcomeFor(result.failure, result.result);
    tellBreaker(call->breaker, result.failure, record.durationMs);
    settle(call, result.failure, record, result);
}

void ToolExecutor::Private::detachCurrentAttempt(Call *call)
{
    AttemptPtr attempt = std::move(call->current);
    if (!attempt)
        return;
    attempt->token.cancel();
    attempt->call = nullptr;
    pool.withdraw(attempt);
}

void ToolExecutor::Private::onAttemptTimeout(Call *call)
{
    const AttemptPtr attempt = call->current;
    if (!attempt)
        return;
    detachCurrentAttempt(call);

    AttemptRecord record;
    record.attempt = attempt->index;
    record.startedMs = attempt->startedMs;
    record.durationMs = call->clock.elapsed() - attempt->startedMs;
    record.outcome = AttemptOutcome::TimedOut;
    qCInfo(lcResilience).noquote() << call->toolName << "attempt" << attempt->index
                                   << "timed out after" << record.durationMs << "ms";
    tellBreaker(call->breaker, FailureKind::AttemptTimeout, record.durationMs);
    settle(call, FailureKind::AttemptTimeout, record, AttemptResult{});
}

void ToolExecutor::Private::onCallerCancelled(quint64 callId)
{
    stopCall(callId, AttemptOutcome::Cancelled);
}

std::optional<ToolCallOutcome> ToolExecutor::Private::stopCall(quint64 callId, AttemptOutcome why)
{
    const auto it = calls.find(callId);
    if (it == calls.end())
        return std::nullopt;
    Call *call = it->second.get();
    const AttemptPtr attempt = call->current;
    const bool backingOff = call->timerPurpose == TimerPurpose::Backoff;
    disarmTimer(call);
    const qint64 now = call->clock.elapsed();
    if (attempt) {
        detachCurrentAttempt(call);
        AttemptRecord record;
        record.attempt = attempt->index;
        record.startedMs = attempt->startedMs;
        record.durationMs = now - attempt->startedMs;
        record.outcome = why;
        tellBreaker(call->breaker, FailureKind::Cancelled, record.durationMs);
        call->attempts.append(record);
        emitEvent(call, AttemptEvent::Phase::Finished, record);
    } else if (backingOff) {
        // The retry the backoff was waiting for will not be made: the timeline says when and
        // why it ended, rather than promising a backoff that led nowhere.
        AttemptRecord record;
        record.attempt = int(call->attempts.size()) + 1;
        record.startedMs = now;
        record.outcome = why;
        record.made = false;
        call->attempts.append(record);
        emitEvent(call, AttemptEvent::Phase::Finished, record);
    }
    const bool deadline = why == AttemptOutcome::DeadlineReached;
    std::optional<ToolCallOutcome> outcome;
    call->finishedInto = &outcome;
    finish(call,
           failureFor(codeFor(deadline ? FailureKind::AttemptTimeout : FailureKind::Cancelled),
                      call->context.language),
           deadline ? FailureKind::AttemptTimeout : FailureKind::Cancelled);
    return outcome;
}

void ToolExecutor::Private::settle(Call *call, FailureKind kind, AttemptRecord record,
                                   const AttemptResult &result)
{
    if (kind == FailureKind::None || kind == FailureKind::NotFound) {
        call->attempts.append(record);
        emitEvent(call, AttemptEvent::Phase::Finished, record);
        finish(call, result.result, kind);
        return;
    }
    if (!result.logDetail.isEmpty() && kind != FailureKind::Unexpected) {
        qCWarning(lcResilience).noquote()
            << call->toolName << "attempt" << record.attempt
            << QVariant::fromValue(kind).toString() << "-" << result.logDetail;
    }

    if (call->policy.isRetryable(kind) && record.attempt < call->policy.maxAttempts()) {
        const Millis delay = call->backoff.next(record.attempt, result.retryAfter);
        const qint64 now = call->clock.elapsed();
        // A retry is worth starting only if it can still run before the deadline, and only
        // if the turn's budget has one left (asked last, so that no retry is taken for nothing).
        if (now + delay.count() < call->deadlineMs
            && (!call->budget || consumeRetry(call, record.attempt))) {
            ++call->retries;
            record.nextDelayMs = delay.count();
            // The timeline tells a server's wait from the policy's backoff.
            if (result.retryAfter && result.retryAfter->count() >= 0)
                record.retryAfterMs = delay.count();
            call->attempts.append(record);
            emitEvent(call, AttemptEvent::Phase::Finished, record);
            armTimer(call, delay.count(), TimerPurpose::Backoff);
            return;
        }
    }

    call->attempts.append(record);
    emitEvent(call, AttemptEvent::Phase::Finished, record);
    if (kind == FailureKind::Unexpected) {
        const QString incident = newIncidentId();
        qCCritical(lcResilience).noquote()
            << "incident" << incident << "- unexpected error in tool" << call->toolName
            << "attempt" << record.attempt << ":" << result.logDetail;
        finish(call, failureFor(codeFor(kind), call->context.language), kind, incident);
        return;
    }
    finish(call, failureFor(result.code.value_or(codeFor(kind)), call->context.language), kind);
}

bool ToolExecutor::Private::consumeRetry(Call *call, int attempt)
{
    if (call->budget->tryConsume(RetryBudget::Layer::Tool))
        return true;
    qCInfo(lcResilience).noquote() << call->toolName << "attempt" << attempt
                                   << "not retried: the turn's retry budget is spent"
                                   << "or its deadline passed";
    return false;
}

void ToolExecutor::Private::finish(Call *call, ToolResult result, FailureKind kind,
                                   const QString &incidentId)
{
    disarmTimer(call);
    ToolCallOutcome outcome;
    outcome.callId = call->id;
    outcome.toolName = call->toolName;
    outcome.result = std::move(result);
    outcome.finalFailure = kind;
    outcome.attempts = std::move(call->attempts);
    outcome.retries = call->retries;
    outcome.totalMs = call->clock.elapsed();
    outcome.incidentId = incidentId;
    outcome.circuitCooldownLeftMs = call->circuitCooldownLeftMs;
    outcome.isolation = call->isolation;
    if (call->finishedInto)
        *call->finishedInto = outcome;

    // Take the call out of the table before touching the promise, so that whatever the caller
    // does when its watcher reports (start new calls, cancel all) finds a consistent table.
    auto node = calls.extract(call->id);
    std::unique_ptr<Call> owned = std::move(node.mapped());
    // The cancel watcher is done. It leaves the call's future before the promise reports (put
    // back to watch the idle future, or destroyed), so that no result and finished callouts
    // are posted to it: each post wakes this thread's event loop, and leaving or destroying
    // it would then scan the posted-event queue to drop them, a sizeable share of the cost of
    // every outcome in a burst of timeouts. Only a caller's cancellation can be delivering
    // through the watcher's own signal right now: then it is deleted later.
    std::unique_ptr<CancelWatch> cancelWatch = std::move(owned->cancelWatch);
    if (owned->promise.isCanceled()) {
        cancelWatch->disconnect(q);
        cancelWatch.release()->deleteLater();
    } else {
        putBackCancelWatch(std::move(cancelWatch));
    }
    owned->promise.addResult(std::move(outcome));
    owned->promise.finish();
}

} // namespace AgentConsole
