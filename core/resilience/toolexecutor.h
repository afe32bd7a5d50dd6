#pragma once

#include "attemptrecord.h"
#include "breakerisolation.h"
#include "retrybudget.h"
#include "retrypolicy.h"
#include "tooloperation.h"

#include <QFuture>
#include <QJsonObject>
#include <QObject>

#include <memory>
#include <optional>

namespace AgentConsole {

class CircuitBreaker;

struct ToolCallRequest
{
    std::shared_ptr<const ToolOperation> tool;
    QJsonObject arguments;
    TrustedContext context;
    // The call's whole retry policy. The caller decides it (in the console, ToolPolicies: the
    // one owner of every tool's policy); the executor has none of its own. Left as it is, it
    // is the seed article's figures (RetryPolicy::defaults()).
    RetryPolicy policy;
    QString traceId; // copied into every AttemptEvent of this call (e.g. the operationId)
    // Writes: passed to every attempt (AttemptContext); attempts after the first always count
    // as "may have run".
    QString idempotencyKey;
    bool mayHaveRun = false;
    // The tool backend's breaker (DESIGN.md: one per dependency). Asked before every attempt;
    // told how each attempt went. Not owned; may be null, or destroyed while the call runs.
    CircuitBreaker *breaker = nullptr;
    // The turn's shared retry budget: every retry of this call takes one from it first. It
    // also holds the turn's one deadline, read when the call starts: the call's own deadline
    // is the earlier of the turn's and the policy's. Without a budget the call has no turn,
    // so no deadline but the policy's.
    RetryBudgetPtr budget = nullptr; // initialized, so {tool, args, ctx, {}, {}} stays clean
    // The caller already ran tool->precheck on these arguments, off its own thread (the agent
    // loop's admission on the check pool): the executor, which checks on its caller's thread,
    // does not check them again there.
    bool prechecked = false;
};

struct ToolCallOutcome
{
    quint64 callId = 0;
    QString toolName;
    ToolResult result;
    FailureKind finalFailure = FailureKind::None;
    QList<AttemptRecord> attempts;
    int retries = 0; // retries scheduled (backoffs started), for tool_retry_count
    qint64 totalMs = 0;
    QString incidentId; // set when a bug in the tool body was caught; details are in the log
    // >= 0 when an open circuit breaker refused the call (its first attempt or a retry): the
    // cool-down it had left then. -1 when no breaker refused it.
    qint64 circuitCooldownLeftMs = -1;
    // Set when the breaker that refused it was isolated by a lead (docs/TEAM.md): who, when
    // and why. circuitCooldownLeftMs is >= 0 then too.
    BreakerIsolation isolation;
};

// Runs tool calls resiliently: arguments are checked once before any attempt; each attempt
// runs on the executor's own QThreadPool and is raced against its timeout (a precise timer on
// this object's thread); transient failures and timeouts are retried after a backoff that is a
// timer too, so no pool thread ever sleeps; an overall deadline caps attempts plus backoff.
//
// Starvation: a body that ignores its cancellation token keeps its pool thread. Two mechanisms
// keep such a body from starving everyone else. Each tool is a bulkhead with a limited number of
// bodies in flight (running or abandoned), so a stuck tool can only ever hold its own share of
// threads; its further attempts wait in its own queue, where their timeouts still fire. And a
// thread whose attempt was abandoned while still running is replaced: the pool's thread limit
// grows by one until that body finally returns (bounded by maxReplacementThreads).
//
// Lives on one thread with an event loop (the GUI thread in the app); results come back to
// that thread as finished QFutures, read once finished (await(), a QFutureWatcher): waiting
// for one on this thread would wait for ever. A returned future runs without ever reporting
// a start (QFuture::isStarted() and QFutureWatcher::started() stay silent; see execute()).
// Cancelling a returned future cancels the call: the running attempt's token is raised and
// nothing is retried.
//
// A server's Retry-After replaces the computed backoff up to the policy's max delay, and the
// call's deadline is the worst case the console shows (RetryPolicy::effectiveDeadline()), so
// no call outlasts that figure (beyond delivering the timer that ends it).
//
// With a circuit breaker in the request, an attempt the breaker refuses is not made: the call
// ends at once with TOOL_UNAVAILABLE (reason: circuit open, and the cool-down left in
// ToolCallOutcome::circuitCooldownLeftMs), never retried. Transient failures
// and attempt timeouts count against the breaker, successes and business answers (not found)
// for it; rejected, access denied, bugs and cancellations say nothing about the dependency's
// health and only give the permission back. With a retry budget, a retry the budget refuses is
// not made and the call ends with the code its last failure deserves.
class ToolExecutor final : public QObject
{
    Q_OBJECT

public:
    struct Options
    {
        int workerThreads = 4;
        int bulkheadPerTool = 2;
        int maxReplacementThreads = 32;
    };

    explicit ToolExecutor(QObject *parent = nullptr);
    explicit ToolExecutor(const Options &options, QObject *parent = nullptr);
    ~ToolExecutor() override;

    QFuture<ToolCallOutcome> execute(ToolCallRequest request);
    void cancelAll();
    // Ends call `callId` (AttemptEvent::callId) now, as cancelling its future would, but at
    // once and with the reason on the record: a running attempt is recorded with `why`
    // (Cancelled or DeadlineReached) and its time so far; a call waiting for its backoff
    // records `why` with 0 ms in place of the retry it will not make. The outcome is
    // returned and also delivered to the call's future. Empty when the call is not running.
    std::optional<ToolCallOutcome> stop(quint64 callId, AttemptOutcome why);

    const Options &options() const;
    void setBulkheadLimit(const QString &toolName, int limit);

    int activeCalls() const;
    // Bodies that outlived their attempt and still hold a pool thread.
    int abandonedBodies() const;
    int threadLimit() const;

Q_SIGNALS:
    void attemptStarted(const AgentConsole::AttemptEvent &event);
    void attemptFinished(const AgentConsole::AttemptEvent &event);

protected:
    void timerEvent(QTimerEvent *event) override;

private:
    class Private;
    std::unique_ptr<Private> d;
};

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::ToolCallOutcome)
