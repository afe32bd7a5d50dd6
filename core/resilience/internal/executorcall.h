#pragma once

// Not part of the API: a call and its attempts as ToolExecutor keeps them (toolexecutor.cpp),
// shared with the pool that runs the attempts' bodies (attemptpool.h).

#include "../cancellationtoken.h"
#include "../circuitbreaker.h"
#include "../retrypolicy.h"
#include "../toolexecutor.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QPointer>
#include <QPromise>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>

namespace AgentConsole::Internal {

// Tells the executor that a caller cancelled its call's future. The executor keeps a few
// between calls (ToolExecutor::Private::spareWatches): making a watcher, connecting it and
// destroying it again for every call was a measurable part of a trivial call's round trip
// (docs/PERFORMANCE.md, "executor_bench").
class CancelWatch final : public QFutureWatcher<ToolCallOutcome>
{
public:
    quint64 callId = 0;
};

struct ExecutorCall;

// One attempt of a call: its body runs on a pool thread, the executor races it against its
// timeout. Shared between the two; `call` is cleared once the executor stops waiting for it.
struct Attempt
{
    ExecutorCall *call = nullptr; // null once the call stopped waiting for this attempt
    QString toolName;
    int index = 0;
    qint64 startedMs = 0;
    // When the executor gives up on it (AttemptContext::deadline).
    QDeadlineTimer deadline{QDeadlineTimer::Forever};
    CancellationToken token;
    bool dispatched = false;
    bool replaced = false; // the pool grew by one thread while this body is abandoned
    // An asynchronous tool's attempt (ToolOperation::startAttempt): what cancels it. It holds
    // a place in its tool's bulkhead until it ends, but no thread.
    std::function<void()> cancel;
    bool asynchronous = false;
    // Queued -> Running (the pool thread starts the body) or Queued -> Skipped (the executor
    // gave up on it first). Exactly one side wins, so a body that starts just as its attempt
    // times out is always seen as running, and its thread replaced.
    enum State : int { Queued, Running, Skipped };
    std::atomic<int> state{Queued};
};
using AttemptPtr = std::shared_ptr<Attempt>;

enum class TimerPurpose { None, AttemptTimeout, Backoff };

// The earlier of the policy's deadline and the turn's (its budget's), in ms from the call's
// start.
inline qint64 callDeadlineMs(const RetryPolicy &policy, const RetryBudget *budget)
{
    const qint64 own = policy.effectiveDeadline().count();
    const QDeadlineTimer turnDeadline = budget ? budget->deadline()
                                               : QDeadlineTimer(QDeadlineTimer::Forever);
    if (turnDeadline.isForever())
        return own; // the common case pays no clock read
    // Rounded up: a call must not give up before the turn's deadline (remainingTime() rounds
    // down, which ended calls up to 1 ms before the turn's own deadline timer fired).
    const qint64 turnNs = std::max<qint64>(0, turnDeadline.remainingTimeNSecs());
    return std::min(own, (turnNs + 999'999) / 1'000'000);
}

// A call from execute() to its outcome: what was asked, the attempts so far, the retry
// schedule, and the promise its caller waits on.
struct ExecutorCall
{
    ExecutorCall(quint64 callId, ToolCallRequest &&request, const RetryPolicy &policyValue)
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
        , budget(std::move(request.budget))
        , deadlineMs(callDeadlineMs(policy, budget.get()))
        , breaker(request.breaker)
        // Running from the start, never reported started (ToolExecutor::execute says why).
        , promise(QFutureInterface<ToolCallOutcome>(QFutureInterfaceBase::Running))
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
    RetryBudgetPtr budget;
    qint64 deadlineMs;
    // A breaker that is destroyed while the call runs is simply no longer asked.
    QPointer<CircuitBreaker> breaker;
    int retries = 0;
    QElapsedTimer clock;
    QPromise<ToolCallOutcome> promise;
    std::unique_ptr<CancelWatch> cancelWatch;
    QList<AttemptRecord> attempts;
    qint64 circuitCooldownLeftMs = -1;
    BreakerIsolation isolation; // set when an isolated breaker refused it
    // Set by finish(): what ToolExecutor::stop() hands back synchronously.
    std::optional<ToolCallOutcome> *finishedInto = nullptr;
    AttemptPtr current;
    quint64 timerSequence = 0; // the live entry of the deadline queue; 0 when none
    TimerPurpose timerPurpose = TimerPurpose::None;
};

} // namespace AgentConsole::Internal
