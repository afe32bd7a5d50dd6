// executor_bench: what ToolExecutor costs and how precisely it keeps its timeouts.
//
//   (a) per-call overhead: sequential round trips of a trivial tool through the executor, vs the
//       same body through a bare QtConcurrent::run(&pool, f) + QFutureWatcher on a pool of the
//       same size, measured in the same run (interleaved rounds, median of the rounds);
//   (b) throughput with 2 workers and 64 calls in flight (bare pool for comparison);
//   (c) timeout lateness of 1,000 concurrent calls whose bodies hang until cancelled
//       (attempt timeout 100 ms, no retry; the hang tool has a bulkhead of 1), next to bare
//       Qt::PreciseTimer single-shots armed the same way;
//   (d) how long fast calls of another tool take while those 1,000 calls are pending and while
//       their timeouts fire;
//   (e) the same 1,000 hung calls as an asynchronous tool (an MCP server that never answers:
//       ToolOperation::startAttempt), all in flight at once (bulkhead 1,000): fast calls of
//       another tool during them against fast calls alone, measured in the same run, and the
//       pool's threads afterwards (issue #40 §3: a call that waits holds no thread).
//
// Run by hand: build/tests/bench/executor_bench [a b c e]   (see docs/PERFORMANCE.md)
// The last line is machine-readable:
//   overhead_ratio=R lateness_p99_ms=L fast_during_hang_ms=F async_fast_ratio=A
// Exit status 0 when (a) ran and met its target (R <= 1.2, the executor's round trip against
// the bare one of the same run), 3 when it did not.

#include "core/resilience/toolexecutor.h"

#include "benchhost.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFutureWatcher>
#include <QLoggingCategory>
#include <QThread>
#include <QThreadPool>
#include <QTimer>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

#include <sched.h>

using namespace AgentConsole;
using Millis = RetryPolicy::Millis;

namespace {

constexpr int kWorkers = 2;
constexpr int kWarmup = 2000;
constexpr int kRoundTrips = 20000;
constexpr int kRounds = 20;
constexpr int kThroughputCalls = 100000;
constexpr int kInFlight = 64;
constexpr int kHungCalls = 1000;
constexpr int kTimeoutMs = 100;
constexpr int kHangRuns = 3;
// (a)'s target: the executor's round trip at most this many times the bare one.
constexpr double kOverheadTarget = 1.2;

class TrivialTool final : public ToolOperation
{
public:
    QString name() const override { return QStringLiteral("orderStatus"); }
    std::optional<ToolResult> precheck(const QJsonObject &, const TrustedContext &) const override
    {
        return std::nullopt;
    }
    AttemptResult attempt(const QJsonObject &, const TrustedContext &,
                          const AttemptContext &) const override
    {
        return AttemptResult::completed(
            ToolResult::ok(QStringLiteral("ok"), QJsonValue(QStringLiteral("A1001"))));
    }
};

class HangingTool final : public ToolOperation
{
public:
    QString name() const override { return QStringLiteral("logistics"); }
    std::optional<ToolResult> precheck(const QJsonObject &, const TrustedContext &) const override
    {
        return std::nullopt;
    }
    AttemptResult attempt(const QJsonObject &, const TrustedContext &,
                          const AttemptContext &attempt) const override
    {
        attempt.cancellation.waitUntilCancelled(); // a silent downstream that honours cancel
        return AttemptResult::transient(QString());
    }
};

// Waits on a remote party that never answers, holding no thread: ends when cancelled.
class AsyncHangingTool final : public ToolOperation
{
public:
    QString name() const override { return QStringLiteral("mcp__hang"); }
    std::optional<ToolResult> precheck(const QJsonObject &, const TrustedContext &) const override
    {
        return std::nullopt;
    }
    AttemptResult attempt(const QJsonObject &, const TrustedContext &,
                          const AttemptContext &) const override
    {
        return AttemptResult::rejected(QStringLiteral("asynchronous"));
    }
    bool isAsynchronous() const override { return true; }
    std::function<void()> startAttempt(const QJsonObject &, const TrustedContext &,
                                       const AttemptContext &, AttemptDone done) const override
    {
        return [done = std::move(done)] {
            AttemptResult cancelled;
            cancelled.failure = FailureKind::Cancelled;
            done(cancelled);
        };
    }
};

ToolCallRequest requestFor(std::shared_ptr<const ToolOperation> tool)
{
    ToolCallRequest request;
    request.tool = std::move(tool);
    request.arguments = QJsonObject{{QStringLiteral("orderId"), QStringLiteral("A1001")}};
    request.context = {QStringLiteral("staff-7"), QStringLiteral("tenant-1"),
                       QStringLiteral("conv-1"), QStringLiteral("req-1"), Language::English};
    return request;
}

struct Percentiles
{
    double p50 = 0;
    double p99 = 0;
    double max = 0;
};

Percentiles percentiles(std::vector<double> values)
{
    if (values.empty())
        return {};
    std::sort(values.begin(), values.end());
    const auto at = [&](double q) {
        const auto rank = std::size_t(std::ceil(q * double(values.size())));
        return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
    };
    return {at(0.50), at(0.99), values.back()};
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// Round trips started one after another, each from the previous one's completion handler,
// delivered through a QFutureWatcher parented to a receiver. Returns microseconds per call.
template<typename T>
double sequentialRoundTrips(int count, const std::function<QFuture<T>()> &start)
{
    QObject receiver;
    QEventLoop loop;
    int done = 0;
    std::function<void()> next = [&] {
        auto *watcher = new QFutureWatcher<T>(&receiver);
        QObject::connect(watcher, &QFutureWatcherBase::finished, &receiver, [&, watcher] {
            watcher->deleteLater();
            if (++done == count)
                loop.quit();
            else
                next();
        });
        watcher->setFuture(start());
    };
    QElapsedTimer clock;
    clock.start();
    QTimer::singleShot(0, &receiver, next);
    loop.exec();
    return double(clock.nsecsElapsed()) / 1e3 / count;
}

// `total` calls with `inFlight` outstanding at any time. Returns calls per second.
template<typename T>
double throughput(int total, int inFlight, const std::function<QFuture<T>()> &start)
{
    QObject receiver;
    QEventLoop loop;
    int started = 0;
    int done = 0;
    std::function<void()> launch = [&] {
        ++started;
        auto *watcher = new QFutureWatcher<T>(&receiver);
        QObject::connect(watcher, &QFutureWatcherBase::finished, &receiver, [&, watcher] {
            watcher->deleteLater();
            if (++done == total)
                loop.quit();
            else if (started < total)
                launch();
        });
        watcher->setFuture(start());
    };
    QElapsedTimer clock;
    clock.start();
    QTimer::singleShot(0, &receiver, [&] {
        for (int i = 0; i < inFlight; ++i)
            launch();
    });
    loop.exec();
    return double(total) / (double(clock.nsecsElapsed()) / 1e9);
}

void runUntil(const std::function<bool()> &condition, int guardMs)
{
    QEventLoop loop;
    QTimer poll;
    poll.setTimerType(Qt::PreciseTimer);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (condition())
            loop.quit();
    });
    QTimer::singleShot(guardMs, &loop, &QEventLoop::quit);
    poll.start(5);
    if (!condition())
        loop.exec();
}

double msSince(const QElapsedTimer &clock, qint64 ns)
{
    return double(clock.nsecsElapsed() - ns) / 1e6;
}

// (c) reference: 1,000 bare precise single-shot timers of 100 ms armed back to back.
Percentiles barePreciseTimerLateness()
{
    QObject receiver;
    QElapsedTimer clock;
    clock.start();
    std::vector<qint64> armedNs(kHungCalls);
    std::vector<double> lateness;
    lateness.reserve(kHungCalls);
    for (int i = 0; i < kHungCalls; ++i) {
        armedNs[i] = clock.nsecsElapsed();
        QTimer::singleShot(kTimeoutMs, Qt::PreciseTimer, &receiver, [&, i] {
            lateness.push_back(double(clock.nsecsElapsed() - armedNs[i]) / 1e6 - kTimeoutMs);
        });
    }
    runUntil([&] { return int(lateness.size()) == kHungCalls; }, 10000);
    return percentiles(lateness);
}

// (a) One measurement of the per-call overhead; prints it and returns the ratio.
double measureOverhead(const char *label, const ToolExecutor::Options &options,
                       const ToolCallRequest &request)
{
    ToolExecutor executor(options);
    QThreadPool pool;
    pool.setMaxThreadCount(options.workerThreads);
    const std::shared_ptr<const ToolOperation> tool = request.tool;
    const QJsonObject arguments = request.arguments;
    const TrustedContext context = request.context;
    const std::function<QFuture<AttemptResult>()> bare = [&] {
        // The same body, run on a pool of the same size, its result delivered the same way.
        return QtConcurrent::run(&pool, [tool, arguments, context] {
            return tool->attempt(arguments, context, AttemptContext{});
        });
    };
    const std::function<QFuture<ToolCallOutcome>()> viaExecutor = [&] {
        return executor.execute(request);
    };
    sequentialRoundTrips(kWarmup, bare);
    sequentialRoundTrips(kWarmup, viaExecutor);
    // Short alternating rounds, so that both sides see the same machine: on a shared machine
    // the cost of a thread wake-up, which dominates a round trip, drifts from second to second.
    std::vector<double> bareUs;
    std::vector<double> executorUs;
    std::vector<double> ratios;
    for (int round = 0; round < kRounds; ++round) {
        bareUs.push_back(sequentialRoundTrips(kRoundTrips / kRounds, bare));
        executorUs.push_back(sequentialRoundTrips(kRoundTrips / kRounds, viaExecutor));
        ratios.push_back(executorUs.back() / bareUs.back());
    }
    const auto [bareMin, bareMax] = std::minmax_element(bareUs.begin(), bareUs.end());
    const auto [exeMin, exeMax] = std::minmax_element(executorUs.begin(), executorUs.end());
    const auto [ratioMin, ratioMax] = std::minmax_element(ratios.begin(), ratios.end());
    const double ratio = median(ratios);
    std::printf("(a) sequential round trips, %s, %d workers, %d calls each in %d alternating "
                "rounds; median of rounds (min-max):\n"
                "    bare QtConcurrent::run + QFutureWatcher: %5.1f us/call (%.1f-%.1f)\n"
                "    ToolExecutor::execute + QFutureWatcher:  %5.1f us/call (%.1f-%.1f)\n"
                "    ratio executor/bare %.2f (%.2f-%.2f)\n",
                label, options.workerThreads, kRoundTrips, kRounds, median(bareUs), *bareMin,
                *bareMax, median(executorUs), *exeMin, *exeMax, ratio, *ratioMin, *ratioMax);
    std::fflush(stdout);
    return ratio;
}

struct HangRun
{
    double submitMs = 0;
    int timedOut = 0;
    std::vector<double> deliveredLateness;
    std::vector<double> recordedLateness;
    std::vector<std::pair<double, double>> fastCalls; // submitted at, took (ms)
    int threadLimitAfter = 0;
    int abandonedAfter = 0;
};

// (c) and (d): 1,000 calls of a tool that hangs until cancelled, submitted back to back, and
// meanwhile a fast call of another tool every 10 ms, from 5 ms after the last submission until
// well after the timeouts fired. Watchers are kept until the end, so that no deleteLater()
// traffic of the bench competes with the executor while the timeouts fire.
HangRun runHang(const ToolExecutor::Options &options, const ToolCallRequest &fastRequest,
                bool instrumented)
{
    constexpr int fastCallCount = 14;
    auto hanging = std::make_shared<HangingTool>();
    ToolExecutor executor(options);
    executor.setBulkheadLimit(hanging->name(), 1); // it can never hold both workers
    RetryPolicy hangPolicy;
    hangPolicy.attemptTimeout = Millis{kTimeoutMs};
    hangPolicy.maxRetries = 0;
    ToolCallRequest hangRequest = requestFor(hanging);
    hangRequest.policy = hangPolicy;

    // Warm-up: a burst of trivial calls, so that both workers exist before the measurement
    // (otherwise the first fast call also pays for starting a thread, ~1-3 ms here).
    {
        std::vector<QFuture<ToolCallOutcome>> warmup;
        for (int i = 0; i < 64; ++i)
            warmup.push_back(executor.execute(fastRequest));
        runUntil([&] {
            return std::all_of(warmup.begin(), warmup.end(),
                               [](const auto &future) { return future.isFinished(); });
        }, 5000);
    }

    HangRun run;
    run.deliveredLateness.reserve(kHungCalls);
    QElapsedTimer clock;
    clock.start();
    std::vector<qint64> submittedNs(kHungCalls + 1, 0);
    QHash<quint64, qint64> handledNs; // by call id
    auto receiver = std::make_unique<QObject>();
    if (instrumented) {
        QObject::connect(&executor, &ToolExecutor::attemptFinished, receiver.get(),
                         [&](const AttemptEvent &event) {
                             handledNs.insert(event.callId, clock.nsecsElapsed());
                         });
    }
    int delivered = 0;
    const qint64 firstNs = clock.nsecsElapsed();
    for (int i = 1; i <= kHungCalls; ++i) {
        auto *watcher = new QFutureWatcher<ToolCallOutcome>(receiver.get());
        QObject::connect(watcher, &QFutureWatcherBase::finished, receiver.get(),
                         [&, watcher, i] {
                             const qint64 now = clock.nsecsElapsed();
                             const double dueMs = double(submittedNs[i]) / 1e6 + kTimeoutMs;
                             run.deliveredLateness.push_back(double(now) / 1e6 - dueMs);
                             ++delivered;
                             if (watcher->future().resultCount() == 0)
                                 return;
                             const ToolCallOutcome outcome = watcher->result();
                             if (outcome.result.code == ResultCode::ToolTimeout)
                                 ++run.timedOut;
                             if (instrumented)
                                 run.recordedLateness.push_back(
                                     double(handledNs.value(outcome.callId)) / 1e6 - dueMs);
                         });
        submittedNs[i] = clock.nsecsElapsed();
        const QFuture<ToolCallOutcome> future = executor.execute(hangRequest);
        Q_ASSERT(future.isRunning());
        watcher->setFuture(future);
    }
    run.submitMs = msSince(clock, firstNs);

    QTimer fastTimer;
    fastTimer.setTimerType(Qt::PreciseTimer);
    const std::function<void()> submitFast = [&] {
        if (int(run.fastCalls.size()) >= fastCallCount) {
            fastTimer.stop();
            return;
        }
        const qint64 submitted = clock.nsecsElapsed();
        const std::size_t index = run.fastCalls.size();
        run.fastCalls.emplace_back(double(submitted - firstNs) / 1e6, -1.0);
        auto *watcher = new QFutureWatcher<ToolCallOutcome>(receiver.get());
        QObject::connect(watcher, &QFutureWatcherBase::finished, receiver.get(),
                         [&, index, submitted] {
                             run.fastCalls[index].second = msSince(clock, submitted);
                         });
        watcher->setFuture(executor.execute(fastRequest));
    };
    QObject::connect(&fastTimer, &QTimer::timeout, receiver.get(), submitFast);
    QTimer::singleShot(5, Qt::PreciseTimer, receiver.get(), [&] {
        fastTimer.start(10);
        submitFast();
    });

    runUntil([&] {
        return delivered == kHungCalls && int(run.fastCalls.size()) == fastCallCount
            && std::all_of(run.fastCalls.begin(), run.fastCalls.end(),
                           [](const auto &call) { return call.second >= 0; });
    }, 30000);
    runUntil([&] { return executor.abandonedBodies() == 0; }, 5000);
    run.threadLimitAfter = executor.threadLimit();
    run.abandonedAfter = executor.abandonedBodies();
    receiver.reset();
    return run;
}

struct AsyncHangRun
{
    std::vector<double> alone;  // fast calls with nothing else in flight, ms each
    std::vector<double> during; // fast calls while the hung calls are in flight, ms each
    int timedOut = 0;
    int threadLimitAfter = 0;
};

// Fast calls one after another, each timed from submission to its outcome.
std::vector<double> fastCalls(ToolExecutor &executor, const ToolCallRequest &request, int count)
{
    std::vector<double> took;
    QElapsedTimer clock;
    for (int i = 0; i < count; ++i) {
        QEventLoop loop;
        QFutureWatcher<ToolCallOutcome> watcher;
        QObject::connect(&watcher, &QFutureWatcherBase::finished, &loop, &QEventLoop::quit);
        clock.start();
        watcher.setFuture(executor.execute(request));
        if (!watcher.isFinished())
            loop.exec();
        took.push_back(double(clock.nsecsElapsed()) / 1e6);
    }
    return took;
}

AsyncHangRun runAsyncHang(const ToolExecutor::Options &options,
                          const ToolCallRequest &fastRequest, int fastCount)
{
    auto hanging = std::make_shared<AsyncHangingTool>();
    ToolExecutor executor(options);
    executor.setBulkheadLimit(hanging->name(), kHungCalls); // all of them in flight at once
    RetryPolicy hangPolicy;
    hangPolicy.attemptTimeout = Millis{2000}; // they stay in flight while the fast calls run
    hangPolicy.maxRetries = 0;
    ToolCallRequest hangRequest = requestFor(hanging);
    hangRequest.policy = hangPolicy;

    AsyncHangRun run;
    fastCalls(executor, fastRequest, 64); // warm-up: both workers exist
    run.alone = fastCalls(executor, fastRequest, fastCount);
    QObject receiver;
    int delivered = 0;
    for (int i = 0; i < kHungCalls; ++i) {
        auto *watcher = new QFutureWatcher<ToolCallOutcome>(&receiver);
        QObject::connect(watcher, &QFutureWatcherBase::finished, &receiver, [&, watcher] {
            ++delivered;
            if (watcher->future().resultCount() > 0
                && watcher->result().result.code == ResultCode::ToolTimeout)
                ++run.timedOut;
        });
        watcher->setFuture(executor.execute(hangRequest));
    }
    run.during = fastCalls(executor, fastRequest, fastCount);
    run.threadLimitAfter = executor.threadLimit();
    runUntil([&] { return delivered == kHungCalls; }, 30000);
    return run;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    // Phases to run: any of "a", "b", "c", "e" as arguments; all by default.
    const QStringList phases = app.arguments().mid(1);
    const auto wanted = [&](char phase) {
        return phases.isEmpty() || phases.contains(QString(QLatin1Char(phase)));
    };
    // Timeouts are logged at info level; 1,000 log lines on stderr would measure the terminal.
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.resilience.info=false"));

    std::printf("executor_bench: %s\n", Bench::hostLine().constData());

    auto trivial = std::make_shared<TrivialTool>();
    const ToolCallRequest trivialRequest = requestFor(trivial);
    const QJsonObject arguments = trivialRequest.arguments;
    const TrustedContext context = trivialRequest.context;

    ToolExecutor::Options options;
    options.workerThreads = kWorkers;

    // (a) per-call overhead ------------------------------------------------------------------
    double overheadRatio = 0;
    if (wanted('a')) {
        // Pinned: every thread of the measurement on one CPU, so both sides pay context
        // switches rather than cross-CPU wake-ups. This is the executor's own cost, and the
        // stable, conservative figure (the headline). Unpinned, a round trip is dominated by
        // waking a thread on the other CPU, whose cost here is bimodal (~14 or ~45 us) with
        // thread placement; it is printed too.
        cpu_set_t all;
        sched_getaffinity(0, sizeof all, &all);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(sched_getcpu(), &one);
        sched_setaffinity(0, sizeof one, &one); // threads started from now on inherit it
        overheadRatio = measureOverhead("pinned to 1 CPU", options, trivialRequest);
        sched_setaffinity(0, sizeof all, &all);
        measureOverhead("unpinned", options, trivialRequest);
    }

    // (b) throughput -------------------------------------------------------------------------
    if (wanted('b')) {
        ToolExecutor executor(options);
        QThreadPool pool;
        pool.setMaxThreadCount(kWorkers);
        const std::function<QFuture<AttemptResult>()> bare = [&] {
            return QtConcurrent::run(&pool, [trivial, arguments, context] {
                return trivial->attempt(arguments, context, AttemptContext{});
            });
        };
        const std::function<QFuture<ToolCallOutcome>()> viaExecutor = [&] {
            return executor.execute(trivialRequest);
        };
        throughput(kWarmup, kInFlight, viaExecutor);
        const double bareRate = throughput(kThroughputCalls, kInFlight, bare);
        // With the default bulkhead (2 bodies of one tool in flight), the next body of the tool
        // is handed to the pool only when the executor's thread has seen one finish; with a
        // bulkhead as wide as the calls in flight, bodies queue in the pool as with the bare
        // pool.
        const double executorRate = throughput(kThroughputCalls, kInFlight, viaExecutor);
        executor.setBulkheadLimit(trivial->name(), kInFlight);
        const double wideRate = throughput(kThroughputCalls, kInFlight, viaExecutor);
        const QByteArray defaultLabel =
            QByteArrayLiteral("ToolExecutor, default bulkhead ")
            + QByteArray::number(options.bulkheadPerTool) + ':';
        const QByteArray wideLabel =
            QByteArrayLiteral("ToolExecutor, bulkhead ") + QByteArray::number(kInFlight) + ':';
        std::printf("(b) throughput, %d workers, %d in flight, %d calls:\n"
                    "    %-36s %6.0f calls/s\n    %-36s %6.0f calls/s\n"
                    "    %-36s %6.0f calls/s\n",
                    kWorkers, kInFlight, kThroughputCalls, "bare pool:", bareRate,
                    defaultLabel.constData(), executorRate, wideLabel.constData(), wideRate);
        std::fflush(stdout);
    }

    // (c) timeout lateness, (d) fast calls during the hang -----------------------------------
    double latenessP99 = 0;
    double fastWorst = 0;
    if (wanted('c')) {
        std::printf(
            "(c) %d concurrent calls hanging until cancelled, attempt timeout %d ms, "
            "no retry, bulkhead 1 of %d workers.\n"
            "    lateness = when it happened - (submission + %d ms); p50 / p99 / max, ms;\n"
            "    each run first measures %d bare Qt::PreciseTimer single-shots armed "
            "the same way\n",
            kHungCalls, kTimeoutMs, kWorkers, kTimeoutMs, kHungCalls);
        std::vector<double> p99s;
        std::vector<double> fastWorsts;
        for (int run = 1; run <= kHangRuns + 1; ++run) {
            // The last run also listens to attemptFinished, to split the lateness into "the
            // executor handled the timeout" and "the outcome reached the caller"; listening
            // costs a little, so the headline figures come from the other runs.
            const bool instrumented = run == kHangRuns + 1;
            const Percentiles bare = barePreciseTimerLateness();
            const HangRun result = runHang(options, trivialRequest, instrumented);
            const Percentiles delivered = percentiles(result.deliveredLateness);
            std::printf("    run %d%s: bare timers %4.2f / %4.2f / %4.2f; executor: submitted in "
                        "%4.1f ms, %d/%d TOOL_TIMEOUT\n",
                        run, instrumented ? " (instrumented)" : "", bare.p50, bare.p99, bare.max,
                        result.submitMs, result.timedOut, kHungCalls);
            if (instrumented) {
                const Percentiles recorded = percentiles(result.recordedLateness);
                std::printf("        executor handled the timeout %5.2f / %5.2f / %5.2f\n",
                            recorded.p50, recorded.p99, recorded.max);
            }
            std::printf("        outcome reached the caller   %5.2f / %5.2f / %5.2f\n",
                        delivered.p50, delivered.p99, delivered.max);
            double worst = 0;
            std::printf("(d)     fast calls (submitted at ms -> took ms):");
            for (const auto &[submittedAt, took] : result.fastCalls) {
                std::printf(" %.0f->%.2f", submittedAt, took);
                worst = std::max(worst, took);
            }
            std::printf("\n        worst %.2f ms; afterwards thread limit %d, abandoned %d\n",
                        worst, result.threadLimitAfter, result.abandonedAfter);
            std::fflush(stdout);
            if (!instrumented) {
                p99s.push_back(delivered.p99);
                fastWorsts.push_back(worst);
            }
        }
        latenessP99 = median(p99s);
        fastWorst = median(fastWorsts);
        std::printf("(c)+(d) over runs 1-%d: lateness p99 median %.2f (max %.2f) ms; "
                    "worst fast call median %.2f (max %.2f) ms\n",
                    kHangRuns, latenessP99, *std::max_element(p99s.begin(), p99s.end()),
                    fastWorst, *std::max_element(fastWorsts.begin(), fastWorsts.end()));
    }

    // (e) asynchronous hung calls: no thread held --------------------------------------------
    double asyncRatio = 0;
    if (wanted('e')) {
        const int count = qEnvironmentVariableIsSet("AGENT_CONSOLE_BENCH_SHORT") ? 20 : 200;
        const AsyncHangRun run = runAsyncHang(options, trivialRequest, count);
        const Percentiles alone = percentiles(run.alone);
        const Percentiles during = percentiles(run.during);
        asyncRatio = alone.p50 > 0 ? during.p50 / alone.p50 : 0;
        std::printf("(e) %d asynchronous calls in flight at once, never answered until their "
                    "%d ms timeout (bulkhead %d, %d workers):\n"
                    "    %d fast calls alone      p50 / p99 / max %6.3f / %6.3f / %6.3f ms\n"
                    "    %d fast calls during     p50 / p99 / max %6.3f / %6.3f / %6.3f ms "
                    "(p50 ratio %.2f)\n"
                    "    %d/%d TOOL_TIMEOUT; thread limit while they waited %d\n",
                    kHungCalls, 2000, kHungCalls, kWorkers, count, alone.p50, alone.p99,
                    alone.max, count, during.p50, during.p99, during.max, asyncRatio,
                    run.timedOut, kHungCalls, run.threadLimitAfter);
        std::fflush(stdout);
    }

    const bool met = !wanted('a') || overheadRatio <= kOverheadTarget;
    if (wanted('a'))
        std::printf("target: overhead <= %.1fx the bare round trip of the same run: %.2fx, %s\n",
                    kOverheadTarget, overheadRatio, met ? "met" : "MISSED");
    std::printf("load average after the run: %s\n", qPrintable(Bench::loadAverage()));
    std::printf("overhead_ratio=%.2f lateness_p99_ms=%.2f fast_during_hang_ms=%.2f "
                "async_fast_ratio=%.2f\n",
                overheadRatio, latenessP99, fastWorst, asyncRatio);
    // The short run in ctest (AGENT_CONSOLE_BENCH_SHORT) checks that the bench works, not
    // its figures.
    return met || qEnvironmentVariableIsSet("AGENT_CONSOLE_BENCH_SHORT") ? 0 : 3;
}
