#include "toolexecutor.h"

#include "circuitbreaker.h"
#include "failuretable.h"

#include "../telemetry/logging.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QHash>
#include <QMetaMethod>
#include <QMutex>
#include <QPointer>
#include <QPromise>
#include <QThreadPool>
#include <QTimerEvent>

#include <atomic>
#include <deque>
#include <functional>
#include <queue>
#include <vector>
#include <exception>
#include <unordered_map>

namespace AgentConsole {

using Millis = std::chrono::milliseconds;

namespace {

struct Call;

struct Attempt
{
    Call *call = nullptr; // null once the call stopped waiting for this attempt
    QString toolName;
    int index = 0;
    qint64 startedMs = 0;
    CancellationToken token;
    bool dispatched = false;
    bool replaced = false; // the pool grew by one thread while this body is abandoned
    // Queued -> Running (the pool thread starts the body) or Queued -> Skipped (the executor
    // gave up on it first). Exactly one side wins, so a body that starts just as its attempt
    // times out is always seen as running, and its thread replaced.
    enum State : int { Queued, Running, Skipped };
    std::atomic<int> state{Queued};
};
using AttemptPtr = std::shared_ptr<Attempt>;

struct Bulkhead
{
    int limit = 2;
    int inFlight = 0; // bodies holding a pool thread or queued in the pool, abandoned included
    std::deque<AttemptPtr> waiting;
};

enum class TimerPurpose { None, AttemptTimeout, Backoff };

// The earlier of the policy's deadline and the turn's, in ms from the call's start.
qint64 callDeadlineMs(const RetryPolicy &policy, const QDeadlineTimer &turnDeadline)
{
    const qint64 own = policy.effectiveDeadline().count();
    if (turnDeadline.isForever())
        return own; // the common case pays no clock read
    // Rounded up: a call must not give up before the turn's deadline (remainingTime() rounds
    // down, which ended calls up to 1 ms before the turn's own deadline timer fired).
    const qint64 turnNs = std::max<qint64>(0, turnDeadline.remainingTimeNSecs());
    return std::min(own, (turnNs + 999'999) / 1'000'000);
}

struct Call
{
    Call(quint64 callId, ToolCallRequest &&request, const RetryPolicy &policyValue)
        : id(callId)
        , tool(std::move(request.tool))
        , toolName(tool->name())
        , traceId(std::move(request.traceId))
        , idempotencyKey(std::move(request.idempotencyKey))
        , mayHaveRun(request.mayHaveRun)
        , arguments(std::move(request.arguments))
        , context(std::move(request.context))
        , policy(policyValue)
        , backoff(policy, policy.jitterSeed ^ (callId * 0x9e3779b97f4a7c15ULL))
        , deadlineMs(callDeadlineMs(policy, request.turnDeadline))
        , breaker(request.breaker)
        , budget(std::move(request.budget))
    {
        clock.start();
    }

    quint64 id;
    std::shared_ptr<const ToolOperation> tool;
    QString toolName;
    QString traceId;
    QString idempotencyKey;
    bool mayHaveRun;
    QJsonObject arguments;
    TrustedContext context;
    RetryPolicy policy;
    BackoffSchedule backoff;
    qint64 deadlineMs;
    // A breaker that is destroyed while the call runs is simply no longer asked.
    QPointer<CircuitBreaker> breaker;
    RetryBudgetPtr budget;
    int retries = 0;
    QElapsedTimer clock;
    QPromise<ToolCallOutcome> promise;
    std::unique_ptr<QFutureWatcher<ToolCallOutcome>> cancelWatch;
    QList<AttemptRecord> attempts;
    qint64 circuitCooldownLeftMs = -1;
    // Set by finish(): what ToolExecutor::stop() hands back synchronously.
    std::optional<ToolCallOutcome> *finishedInto = nullptr;
    AttemptPtr current;
    quint64 timerSequence = 0; // the live entry of the deadline heap; 0 when none
    TimerPurpose timerPurpose = TimerPurpose::None;
};

// Lets pool threads post a finished attempt back without racing the executor's destruction.
struct DeliveryGuard
{
    QMutex mutex;
    QObject *receiver = nullptr;
};

AttemptOutcome outcomeFor(FailureKind kind, const ToolResult &result)
{
    switch (kind) {
    case FailureKind::None:
        return result.success ? AttemptOutcome::Succeeded : AttemptOutcome::BusinessFailure;
    case FailureKind::NotFound:
    case FailureKind::InvalidArgument:
        return AttemptOutcome::BusinessFailure;
    case FailureKind::Transient:
        return AttemptOutcome::TransientFailure;
    case FailureKind::AttemptTimeout:
        return AttemptOutcome::TimedOut;
    case FailureKind::Permanent:
        return AttemptOutcome::Rejected;
    case FailureKind::AccessDenied:
        return AttemptOutcome::AccessDenied;
    case FailureKind::Unexpected:
        return AttemptOutcome::Unexpected;
    case FailureKind::Cancelled:
        return AttemptOutcome::Cancelled;
    case FailureKind::CircuitOpen:
        return AttemptOutcome::CircuitOpen;
    }
    return AttemptOutcome::Unexpected;
}

// The code a call that failed so ends with. Only the mechanism's codes come from here, so
// their words come from the mechanism's rows of the failure table.
ResultCode::Code codeFor(FailureKind kind)
{
    using Code = ResultCode::Code;
    switch (kind) {
    case FailureKind::AttemptTimeout: return Code::ToolTimeout;
    case FailureKind::Transient: return Code::ToolUnavailable;
    case FailureKind::CircuitOpen: return Code::ToolUnavailable;
    case FailureKind::Permanent: return Code::ToolRejected;
    case FailureKind::AccessDenied: return Code::ToolAccessDenied;
    case FailureKind::Cancelled: return Code::Cancelled;
    case FailureKind::InvalidArgument: return Code::InvalidArgument;
    case FailureKind::None:
    case FailureKind::NotFound:
    case FailureKind::Unexpected:
        break;
    }
    return Code::InternalError;
}

ToolResult failureFor(ResultCode::Code code, Language language, const QStringList &errors = {})
{
    return FailureTable::mechanism().failure(code, language, errors);
}

// Why a TOOL_UNAVAILABLE came without an attempt: written for the model and the chat, so that
// the answer can say the lookup is down rather than that it failed just now.
QString circuitOpenReason(Language language)
{
    return language == Language::Chinese
        ? QStringLiteral("该服务当前已知不可用（熔断器已打开），本次未调用")
        : QStringLiteral("The service is known to be down right now (circuit open); "
                         "it was not called");
}

// What an attempt's end says about the dependency's health. Rejected requests, access denied
// and bugs are about this request or this console, not about the backend, and a cancelled
// attempt says nothing at all: those only give their permission back.
void tellBreaker(CircuitBreaker *breaker, FailureKind kind, qint64 durationMs)
{
    if (!breaker)
        return;
    const Millis duration{durationMs};
    switch (kind) {
    case FailureKind::None:
    case FailureKind::NotFound:
        breaker->recordSuccess(duration);
        return;
    case FailureKind::Transient:
    case FailureKind::AttemptTimeout:
        breaker->recordFailure(duration);
        return;
    case FailureKind::InvalidArgument:
    case FailureKind::Permanent:
    case FailureKind::AccessDenied:
    case FailureKind::Unexpected:
    case FailureKind::Cancelled:
    case FailureKind::CircuitOpen:
        breaker->release();
        return;
    }
}

} // namespace

class ToolExecutor::Private
{
public:
    Private(ToolExecutor *q, const Options &options)
        : q(q)
        , options(options)
        , guard(std::make_shared<DeliveryGuard>())
        , pool(std::make_unique<QThreadPool>())
    {
        guard->receiver = q;
        monotonic.start();
        pool->setObjectName(QStringLiteral("ToolPool"));
        pool->setMaxThreadCount(options.workerThreads);
    }

    void startAttempt(Call *call);
    void refuseOpenCircuit(Call *call, qint64 now);
    void dispatch(Bulkhead &bulkhead, const AttemptPtr &attempt);
    void pump(Bulkhead &bulkhead);
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
    void resizePool() { pool->setMaxThreadCount(options.workerThreads + replacements); }
    Bulkhead &bulkheadFor(const QString &toolName);
    void emitEvent(const Call *call, AttemptEvent::Phase phase, const AttemptRecord &record);

    ToolExecutor *q;
    Options options;
    std::shared_ptr<DeliveryGuard> guard;
    std::unique_ptr<QThreadPool> pool;
    std::unordered_map<quint64, std::unique_ptr<Call>> calls;
    // Every attempt timeout and backoff of every call, earliest first, behind one precise Qt
    // timer. With a Qt timer per call, each kill is a linear search of the thread's timer list,
    // which made a burst of 1,000 simultaneous timeouts measurably late. Cancelled entries
    // stay in the heap and are skipped when they come up (their sequence no longer matches).
    struct Deadline
    {
        qint64 dueNs;
        quint64 callId;
        quint64 sequence;
        bool operator>(const Deadline &other) const { return dueNs > other.dueNs; }
    };
    std::priority_queue<Deadline, std::vector<Deadline>, std::greater<Deadline>> deadlines;
    QElapsedTimer monotonic;
    quint64 nextSequence = 1;
    int wakeTimerId = 0;
    qint64 wakeDueNs = 0;
    std::unordered_map<QString, Bulkhead> bulkheads;
    QHash<QString, int> bulkheadLimits;
    quint64 nextCallId = 1;
    int replacements = 0;
    int abandoned = 0;
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
    {
        QMutexLocker lock(&d->guard->mutex);
        d->guard->receiver = nullptr;
    }
    cancelAll();
    // Bodies that honour cancellation return within microseconds. One that ignores it would
    // block the pool's destructor for as long as it likes, so such a pool is left to the
    // process rather than blocking the thread that destroys the executor.
    if (!d->pool->waitForDone(1000)) {
        qCWarning(lcResilience) << "tool bodies ignored cancellation at shutdown;"
                                << "leaving their pool to the process";
        static_cast<void>(d->pool.release());
    }
}

const ToolExecutor::Options &ToolExecutor::options() const
{
    return d->options;
}

void ToolExecutor::setDefaultPolicy(const RetryPolicy &policy)
{
    d->options.defaultPolicy = policy;
}

void ToolExecutor::setBulkheadLimit(const QString &toolName, int limit)
{
    d->bulkheadLimits.insert(toolName, std::max(1, limit));
    auto it = d->bulkheads.find(toolName);
    if (it != d->bulkheads.end()) {
        it->second.limit = std::max(1, limit);
        d->pump(it->second);
    }
}

int ToolExecutor::activeCalls() const
{
    return int(d->calls.size());
}

int ToolExecutor::abandonedBodies() const
{
    return d->abandoned;
}

int ToolExecutor::threadLimit() const
{
    return d->pool->maxThreadCount();
}

QFuture<ToolCallOutcome> ToolExecutor::execute(ToolCallRequest request)
{
    Q_ASSERT(request.tool);
    const RetryPolicy policy = request.policy.value_or(d->options.defaultPolicy);
    const quint64 id = d->nextCallId++;

    // Validation and trusted context are checked here, before any attempt: a wrong order id
    // must not be executed three times.
    if (auto rejected = request.tool->precheck(request.arguments, request.context)) {
        QPromise<ToolCallOutcome> promise;
        promise.start();
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
    raw->promise.start();
    QFuture<ToolCallOutcome> future = raw->promise.future();
    raw->cancelWatch = std::make_unique<QFutureWatcher<ToolCallOutcome>>();
    connect(raw->cancelWatch.get(), &QFutureWatcherBase::canceled, this,
            [this, id] { d->onCallerCancelled(id); });
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
    if (event->timerId() != d->wakeTimerId) {
        QObject::timerEvent(event);
        return;
    }
    killTimer(d->wakeTimerId);
    d->wakeTimerId = 0;
    d->fireDueDeadlines();
    d->rearmWake();
}

void ToolExecutor::Private::fireDueDeadlines()
{
    while (!deadlines.empty() && deadlines.top().dueNs <= monotonic.nsecsElapsed()) {
        const Deadline due = deadlines.top();
        deadlines.pop(); // before handling: the handler may arm new deadlines
        const auto it = calls.find(due.callId);
        if (it == calls.end())
            continue;
        Call *call = it->second.get();
        if (call->timerSequence != due.sequence)
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
    while (!deadlines.empty() && calls.find(deadlines.top().callId) == calls.end())
        deadlines.pop(); // finished calls leave nothing worth waking for
    if (deadlines.empty()) {
        if (wakeTimerId != 0)
            q->killTimer(wakeTimerId);
        wakeTimerId = 0;
        return;
    }
    const qint64 dueNs = deadlines.top().dueNs;
    if (wakeTimerId != 0 && wakeDueNs <= dueNs)
        return; // already waking up in time
    if (wakeTimerId != 0)
        q->killTimer(wakeTimerId);
    // Qt timers count whole milliseconds: round down and, if woken a fraction early, the
    // next wake-up is 0 ms away. A deadline is never handled before it is due.
    const qint64 remainingNs = std::max<qint64>(0, dueNs - monotonic.nsecsElapsed());
    // Precise: a coarse timer is up to 5% (5 ms on 100 ms) early or late by design.
    wakeTimerId = q->startTimer(Millis{remainingNs / 1'000'000}, Qt::PreciseTimer);
    wakeDueNs = dueNs;
}

void ToolExecutor::Private::armTimer(Call *call, qint64 ms, TimerPurpose purpose)
{
    disarmTimer(call);
    call->timerSequence = nextSequence++;
    call->timerPurpose = purpose;
    deadlines.push({monotonic.nsecsElapsed() + std::max<qint64>(0, ms) * 1'000'000, call->id,
                    call->timerSequence});
    rearmWake();
}

void ToolExecutor::Private::disarmTimer(Call *call)
{
    call->timerSequence = 0;
    call->timerPurpose = TimerPurpose::None;
}

Bulkhead &ToolExecutor::Private::bulkheadFor(const QString &toolName)
{
    auto it = bulkheads.find(toolName);
    if (it == bulkheads.end()) {
        Bulkhead bulkhead;
        bulkhead.limit = bulkheadLimits.value(toolName, std::max(1, options.bulkheadPerTool));
        it = bulkheads.emplace(toolName, std::move(bulkhead)).first;
    }
    return it->second;
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
    call->current = attempt;

    AttemptRecord record;
    record.attempt = attempt->index;
    record.startedMs = now;
    emitEvent(call, AttemptEvent::Phase::Started, record);

    armTimer(call, std::min<qint64>(call->policy.attemptTimeout.count(), remaining),
             TimerPurpose::AttemptTimeout);

    Bulkhead &bulkhead = bulkheadFor(call->toolName);
    if (bulkhead.inFlight < bulkhead.limit && bulkhead.waiting.empty())
        dispatch(bulkhead, attempt);
    else
        bulkhead.waiting.push_back(attempt);
}

void ToolExecutor::Private::refuseOpenCircuit(Call *call, qint64 now)
{
    call->circuitCooldownLeftMs = call->breaker->cooldownLeft().count();
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
    qCInfo(lcResilience).noquote() << call->toolName << "not attempted: circuit"
                                   << call->breaker->dependency() << "is open for another"
                                   << call->circuitCooldownLeftMs << "ms";
    const Language language = call->context.language;
    finish(call,
           failureFor(codeFor(FailureKind::CircuitOpen), language,
                      {circuitOpenReason(language)}),
           FailureKind::CircuitOpen);
}

void ToolExecutor::Private::dispatch(Bulkhead &bulkhead, const AttemptPtr &attempt)
{
    ++bulkhead.inFlight;
    attempt->dispatched = true;
    Call *call = attempt->call;
    std::shared_ptr<const ToolOperation> tool = call->tool;
    const QJsonObject arguments = call->arguments;
    const TrustedContext context = call->context;
    std::shared_ptr<DeliveryGuard> delivery = guard;
    AttemptContext attemptContext{attempt->index, attempt->token, call->idempotencyKey,
                                  call->mayHaveRun || attempt->index > 1, call->traceId};

    pool->start([attempt, tool, arguments, context, delivery,
                 attemptContext = std::move(attemptContext)] {
        AttemptResult result;
        int expected = Attempt::Queued;
        if (!attempt->state.compare_exchange_strong(expected, Attempt::Running)) {
            result.failure = FailureKind::Cancelled;
        } else {
            try {
                result = tool->attempt(arguments, context, attemptContext);
            } catch (const std::exception &error) {
                result.failure = FailureKind::Unexpected;
                result.logDetail = QString::fromLocal8Bit(error.what());
            } catch (...) {
                result.failure = FailureKind::Unexpected;
                result.logDetail = QStringLiteral("non-standard exception");
            }
        }
        QMutexLocker lock(&delivery->mutex);
        if (QObject *receiver = delivery->receiver) {
            auto *executor = static_cast<ToolExecutor *>(receiver);
            QMetaObject::invokeMethod(
                executor,
                [executor, attempt, result = std::move(result)]() mutable {
                    executor->d->onBodyFinished(attempt, std::move(result));
                },
                Qt::QueuedConnection);
        }
    });
}

void ToolExecutor::Private::pump(Bulkhead &bulkhead)
{
    while (bulkhead.inFlight < bulkhead.limit && !bulkhead.waiting.empty()) {
        AttemptPtr next = std::move(bulkhead.waiting.front());
        bulkhead.waiting.pop_front();
        if (next->call && !next->token.isCancelled())
            dispatch(bulkhead, next);
    }
}

void ToolExecutor::Private::onBodyFinished(const AttemptPtr &attempt, AttemptResult result)
{
    Bulkhead &bulkhead = bulkheadFor(attempt->toolName);
    --bulkhead.inFlight;
    if (attempt->replaced) {
        --replacements;
        resizePool();
    }
    if (!attempt->call) {
        --abandoned;
        if (result.failure == FailureKind::Unexpected)
            qCWarning(lcResilience).noquote()
                << "abandoned attempt of" << attempt->toolName
                << "ended with an unexpected error:" << result.logDetail;
    }
    pump(bulkhead);

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
    if (!attempt->dispatched) {
        Bulkhead &bulkhead = bulkheadFor(attempt->toolName);
        auto &queue = bulkhead.waiting;
        // Queued attempts time out in about the order they were queued, so the one to remove
        // is near the front, where erasing from a deque is cheap (erase-remove would move
        // the whole queue on every timeout).
        const auto it = std::find(queue.begin(), queue.end(), attempt);
        if (it != queue.end())
            queue.erase(it);
        return;
    }
    ++abandoned;
    // Only a body that is actually running holds a thread worth replacing; one still queued in
    // the pool is marked skipped here and returns at once when it gets a thread.
    int expected = Attempt::Queued;
    if (!attempt->state.compare_exchange_strong(expected, Attempt::Skipped)
        && replacements < options.maxReplacementThreads) {
        attempt->replaced = true;
        ++replacements;
        resizePool();
    }
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

std::optional<ToolCallOutcome> ToolExecutor::Private::stopCall(quint64 callId,
                                                               AttemptOutcome why)
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
        qCWarning(lcResilience).noquote() << call->toolName << "attempt" << record.attempt
                                          << QVariant::fromValue(kind).toString() << "-"
                                          << result.logDetail;
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
    if (call->finishedInto)
        *call->finishedInto = outcome;

    // Take the call out of the table before touching the promise, so that whatever the caller
    // does when its watcher reports (start new calls, cancel all) finds a consistent table.
    auto node = calls.extract(call->id);
    std::unique_ptr<Call> owned = std::move(node.mapped());
    // The cancel watcher is done. Delete it before the promise reports, so that no result and
    // finished callouts are posted to it: each post wakes this thread's event loop, and its
    // destructor would then scan the posted-event queue to drop them, a sizeable share of the
    // cost of every outcome in a burst of timeouts. Only a caller's cancellation can be
    // delivering through the watcher's own signal right now: then it is deleted later.
    std::unique_ptr<QFutureWatcher<ToolCallOutcome>> cancelWatch = std::move(owned->cancelWatch);
    cancelWatch->disconnect(q);
    if (owned->promise.isCanceled())
        cancelWatch.release()->deleteLater();
    else
        cancelWatch.reset();
    owned->promise.addResult(std::move(outcome));
    owned->promise.finish();
}

} // namespace AgentConsole
