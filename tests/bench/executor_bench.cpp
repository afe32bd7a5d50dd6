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
//       their timeouts fire.
//
// Run by hand: build-resilience/tests/bench/executor_bench   (see docs/PERFORMANCE.md)
// The last line is machine-readable:
//   overhead_ratio=R lateness_p99_ms=L fast_during_hang_ms=F

#include "core/resilience/toolexecutor.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFutureWatcher>
#include <QLoggingCategory>
#include <QSysInfo>
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

using namespace AgentConsole;
using Millis = RetryPolicy::Millis;

namespace {

constexpr int kWorkers = 2;
constexpr int kWarmup = 2000;
constexpr int kRoundTrips = 20000;
constexpr int kRounds = 3;
constexpr int kThroughputCalls = 100000;
constexpr int kInFlight = 64;
constexpr int kHungCalls = 1000;
constexpr int kTimeoutMs = 100;
constexpr int kHangRuns = 3;

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

QString loadAverage()
{
    QFile file(QStringLiteral("/proc/loadavg"));
    if (!file.open(QIODevice::ReadOnly))
        return QStringLiteral("?");
    return QString::fromLatin1(file.readAll()).section(QLatin1Char(' '), 0, 2);
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

    HangRun run;
    run.deliveredLateness.reserve(kHungCalls);
    QElapsedTimer clock;
    clock.start();
    std::vector<qint64> submittedNs(kHungCalls + 1, 0);
    std::vector<qint64> handledNs(kHungCalls + 1, 0); // by call id: ids start at 1
    auto receiver = std::make_unique<QObject>();
    if (instrumented) {
        QObject::connect(&executor, &ToolExecutor::attemptFinished, receiver.get(),
                         [&](const AttemptEvent &event) {
                             if (event.callId <= quint64(kHungCalls))
                                 handledNs[event.callId] = clock.nsecsElapsed();
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
                             if (instrumented)
                                 run.recordedLateness.push_back(double(handledNs[i]) / 1e6
                                                                - dueMs);
                             if (watcher->future().resultCount() > 0
                                 && watcher->result().result.code == ResultCode::ToolTimeout)
                                 ++run.timedOut;
                             ++delivered;
                         });
        submittedNs[i] = clock.nsecsElapsed();
        const QFuture<ToolCallOutcome> future = executor.execute(hangRequest);
        Q_ASSERT(future.isStarted());
        watcher->setFuture(future);
    }
    run.submitMs = msSince(clock, firstNs);

    std::vector<qint64> fastSubmittedNs;
    QTimer fastTimer;
    fastTimer.setTimerType(Qt::PreciseTimer);
    const std::function<void()> submitFast = [&] {
        if (int(fastSubmittedNs.size()) >= fastCallCount) {
            fastTimer.stop();
            return;
        }
        const qint64 submitted = clock.nsecsElapsed();
        fastSubmittedNs.push_back(submitted);
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

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    // Phases to run: any of "a", "b", "c" as arguments; all by default.
    const QStringList phases = app.arguments().mid(1);
    const auto wanted = [&](char phase) {
        return phases.isEmpty() || phases.contains(QString(QLatin1Char(phase)));
    };
    // Timeouts are logged at info level; 1,000 log lines on stderr would measure the terminal.
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.resilience.info=false"));

    std::printf("executor_bench: Qt %s, %s, %d logical CPUs, load average %s\n", qVersion(),
                qPrintable(QSysInfo::prettyProductName()), QThread::idealThreadCount(),
                qPrintable(loadAverage()));

    auto trivial = std::make_shared<TrivialTool>();
    const ToolCallRequest trivialRequest = requestFor(trivial);
    const QJsonObject arguments = trivialRequest.arguments;
    const TrustedContext context = trivialRequest.context;

    ToolExecutor::Options options;
    options.workerThreads = kWorkers;
    options.defaultPolicy = RetryPolicy::defaults();

    // (a) per-call overhead ------------------------------------------------------------------
    double overheadRatio = 0;
    if (wanted('a')) {
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
        sequentialRoundTrips(kWarmup, bare);
        sequentialRoundTrips(kWarmup, viaExecutor);
        std::vector<double> bareUs;
        std::vector<double> executorUs;
        for (int round = 0; round < kRounds; ++round) {
            bareUs.push_back(sequentialRoundTrips(kRoundTrips, bare));
            executorUs.push_back(sequentialRoundTrips(kRoundTrips, viaExecutor));
            std::printf("(a) round %d: bare %.1f us/call, executor %.1f us/call\n", round + 1,
                        bareUs.back(), executorUs.back());
        }
        const double bareMedian = median(bareUs);
        const double executorMedian = median(executorUs);
        overheadRatio = executorMedian / bareMedian;
        std::printf("(a) sequential round trip, %d workers, %d calls x %d rounds (median):\n"
                    "    bare QtConcurrent::run + QFutureWatcher: %.1f us/call\n"
                    "    ToolExecutor::execute + QFutureWatcher:  %.1f us/call\n"
                    "    ratio %.2f (executor bookkeeping: %.1f us/call)\n",
                    kWorkers, kRoundTrips, kRounds, bareMedian, executorMedian, overheadRatio,
                    executorMedian - bareMedian);
        std::fflush(stdout);
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
        const double executorRate = throughput(kThroughputCalls, kInFlight, viaExecutor);
        std::printf("(b) throughput, %d workers, %d in flight, %d calls:\n"
                    "    bare pool: %.0f calls/s, ToolExecutor: %.0f calls/s\n",
                    kWorkers, kInFlight, kThroughputCalls, bareRate, executorRate);
        std::fflush(stdout);
    }

    // (c) timeout lateness, (d) fast calls during the hang -----------------------------------
    double latenessP99 = 0;
    double fastWorst = 0;
    if (wanted('c')) {
        const Percentiles bare = barePreciseTimerLateness();
        std::printf("(c) %d concurrent calls hanging until cancelled, attempt timeout %d ms, "
                    "no retry, bulkhead 1 of %d workers;\n"
                    "    lateness = when it happened - (submission + %d ms), p50 / p99 / max:\n"
                    "    bare Qt::PreciseTimer x %d, same process:      %5.2f / %5.2f / %5.2f ms\n",
                    kHungCalls, kTimeoutMs, kWorkers, kTimeoutMs, kHungCalls, bare.p50,
                    bare.p99, bare.max);
        std::vector<double> p99s;
        std::vector<double> fastWorsts;
        for (int run = 1; run <= kHangRuns + 1; ++run) {
            // The last run also listens to attemptFinished, to split the lateness into "the
            // executor handled the timeout" and "the outcome reached the caller"; listening
            // costs a little, so the headline figures come from the other runs.
            const bool instrumented = run == kHangRuns + 1;
            const HangRun result = runHang(options, trivialRequest, instrumented);
            const Percentiles delivered = percentiles(result.deliveredLateness);
            if (instrumented) {
                const Percentiles recorded = percentiles(result.recordedLateness);
                std::printf("    instrumented run: executor handled timeout %5.2f / %5.2f / "
                            "%5.2f ms\n"
                            "                      outcome reached caller   %5.2f / %5.2f / "
                            "%5.2f ms\n",
                            recorded.p50, recorded.p99, recorded.max, delivered.p50,
                            delivered.p99, delivered.max);
                continue;
            }
            double worst = 0;
            for (const auto &[submittedAt, took] : result.fastCalls)
                worst = std::max(worst, took);
            p99s.push_back(delivered.p99);
            fastWorsts.push_back(worst);
            std::printf("    run %d: submitted in %4.1f ms, %d/%d TOOL_TIMEOUT; "
                        "outcome reached caller %5.2f / %5.2f / %5.2f ms\n",
                        run, result.submitMs, result.timedOut, kHungCalls, delivered.p50,
                        delivered.p99, delivered.max);
            std::printf("(d) run %d: fast calls of another tool (submitted at ms -> took ms):",
                        run);
            for (const auto &[submittedAt, took] : result.fastCalls)
                std::printf(" %.0f->%.2f", submittedAt, took);
            std::printf("\n        worst %.2f ms; afterwards thread limit %d, abandoned %d\n",
                        worst, result.threadLimitAfter, result.abandonedAfter);
            std::fflush(stdout);
        }
        latenessP99 = median(p99s);
        fastWorst = median(fastWorsts);
        std::printf("(c)+(d) median over %d runs: lateness p99 %.2f ms, worst fast call %.2f ms\n",
                    kHangRuns, latenessP99, fastWorst);
    }

    std::printf("overhead_ratio=%.2f lateness_p99_ms=%.2f fast_during_hang_ms=%.2f\n",
                overheadRatio, latenessP99, fastWorst);
    return 0;
}
