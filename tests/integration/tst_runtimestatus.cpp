// RuntimeStatus: what the window shows of the runtime, decided in core. A real runtime on a
// temporary data directory; breakers driven through their own API with an injected clock.
#include "core/console/agentruntime.h"
#include "core/console/runtimemonitor.h"
#include "core/console/runtimetestseam.h"
#include "core/console/toolpolicies.h"
#include "core/console/runtimestatus.h"
#include "core/turn/agentloop.h"
#include "core/turn/turnresult.h"
#include "core/resilience/circuitbreaker.h"
#include "core/resilience/retrypolicy.h"

#include <QFile>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <chrono>
#include <memory>

using namespace AgentConsole;
using namespace std::chrono_literals;

namespace {

constexpr int timeoutMs = 20000;

// Opens `breaker`: as many failed calls as its window needs.
void open(CircuitBreaker *breaker)
{
    for (int i = 0; i < breaker->options().minimumCalls; ++i) {
        QVERIFY(breaker->tryAcquire());
        breaker->recordFailure(5ms);
    }
    QCOMPARE(breaker->state(), CircuitBreaker::State::Open);
}

QStringList troubled(const RuntimeStatus &status)
{
    QStringList names;
    for (const DependencyStatus &dependency : status.troubledDependencies) {
        names.append(dependency.dependency
                     + (dependency.breaker == DependencyStatus::Breaker::Open
                            ? QStringLiteral(" open")
                            : QStringLiteral(" half-open")));
    }
    return names;
}

} // namespace

class tst_RuntimeStatus final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void policyAndWorstCaseBeforeStart();
    void breakersWorstFirst();
    void consolesRetryOutOfStep();
};

void tst_RuntimeStatus::policyAndWorstCaseBeforeStart()
{
    RuntimeOptions options;
    options.dataDirectory = QStringLiteral("/nonexistent-not-started");
    {
        const AgentRuntime runtime(options);
        const RuntimeStatus status = runtime.monitor()->status();
        // DESIGN.md: 2 + 0.2 + 2 + 0.4 + 2 = 6.6 s for the default tool policy.
        QCOMPARE(status.toolWorstCase, 6600ms);
        // Jittered by default (issue #24 §3), the worst case unchanged.
        QCOMPARE(status.toolPolicy, RetryPolicy::jittered(0).describe());
        QVERIFY2(status.toolPolicy.endsWith(QStringLiteral("full jitter; worst case 6.6 s")),
                 qPrintable(status.toolPolicy));
        QVERIFY(status.modelName.isEmpty()); // not ready: no model yet
        QCOMPARE(status.worstBreaker, DependencyStatus::Breaker::Closed);
        QVERIFY(status.troubledDependencies.isEmpty());
    }
    RetryPolicy quick = RetryPolicy::defaults();
    quick.attemptTimeout = 500ms;
    quick.maxRetries = 1;
    options.toolPolicy = quick;
    const AgentRuntime runtime(options);
    QCOMPARE(runtime.monitor()->status().toolWorstCase, quick.worstCaseDuration());
    QCOMPARE(runtime.monitor()->status().toolWorstCase, 1200ms); // 0.5 + 0.2 + 0.5
}

// Issue #24 §3: three consoles of a team once waited exactly the same backoffs (a constant
// seed), so they retried a recovering backend in lockstep. Each runtime now draws its own seed
// unless given one; its default tool policy is jittered with the worst case shown; and three
// consoles seeded apart wait differently for the same failures, each wait within the policy's
// computed backoff. A policy given in the options is used as it is.
void tst_RuntimeStatus::consolesRetryOutOfStep()
{
    QSet<std::uint64_t> seeds;
    for (int i = 0; i < 3; ++i) {
        RuntimeOptions options;
        options.dataDirectory = QStringLiteral("/nonexistent-not-started");
        const AgentRuntime runtime(options);
        const RetryPolicy policy = runtime.policies()->defaultPolicy();
        QCOMPARE(policy.jitter, JitterMode::Full);
        QCOMPARE(policy.worstCaseDuration(), RetryPolicy::defaults().worstCaseDuration());
        seeds.insert(policy.jitterSeed);
    }
    QCOMPARE(seeds.size(), 3); // 64-bit draws from the system's source

    // The same failures on three consoles (fixed seeds, so that the run is repeatable).
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString plan = dir.filePath(QStringLiteral("faults.json"));
    {
        QFile file(plan);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"tools": {"queryLogistics": {"transientFailures": 2}}})");
    }
    QList<QList<qint64>> waits;
    for (const std::uint64_t seed : {0x1001ULL, 0x2002ULL, 0x3003ULL}) {
        RuntimeOptions options;
        options.dataDirectory = dir.filePath(QString::number(seed));
        options.faultPlanFile = plan;
        options.jitterSeed = seed;
        AgentRuntime runtime(options);
        QSignalSpy ready(&runtime, &AgentRuntime::ready);
        runtime.start();
        QVERIFY(ready.wait(timeoutMs));
        QCOMPARE(runtime.policies()->defaultPolicy().jitterSeed, seed);
        QSignalSpy finished(runtime.agentLoop(), &AgentLoop::turnFinished);
        QVERIFY(!runtime.agentLoop()->ask(QStringLiteral("Where is order A1001?")).isEmpty());
        QVERIFY(finished.wait(timeoutMs));
        const auto turn = finished.first().first().value<TurnResult>();
        const auto call = std::find_if(turn.toolCalls.cbegin(), turn.toolCalls.cend(),
                                       [](const ToolCallRecord &c) {
                                           return c.name == QLatin1String("queryLogistics");
                                       });
        QVERIFY(call != turn.toolCalls.cend());
        QCOMPARE(call->result.code, ResultCode::Ok);
        QCOMPARE(call->attempts.size(), 3);
        const RetryPolicy policy = runtime.policies()->defaultPolicy();
        QList<qint64> delays;
        for (int retry = 1; retry <= 2; ++retry) {
            const qint64 delay = call->attempts.at(retry - 1).nextDelayMs;
            QVERIFY2(delay >= 0 && delay <= policy.computedDelay(retry).count(),
                     qPrintable(QString::number(delay)));
            delays.append(delay);
        }
        waits.append(delays);
    }
    QVERIFY2(waits.at(0) != waits.at(1) && waits.at(1) != waits.at(2) && waits.at(0) != waits.at(2),
             qPrintable(QStringLiteral("%1 / %2 / %3")
                            .arg(waits.at(0).at(0)).arg(waits.at(1).at(0)).arg(waits.at(2).at(0))));

    RuntimeOptions given;
    given.dataDirectory = QStringLiteral("/nonexistent-not-started");
    given.toolPolicy = RetryPolicy::defaults();
    QCOMPARE(AgentRuntime(given).policies()->defaultPolicy(), RetryPolicy::defaults());
}

void tst_RuntimeStatus::breakersWorstFirst()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    RuntimeOptions options;
    options.dataDirectory = dir.path();
    AgentRuntime runtime(options);
    QSignalSpy ready(&runtime, &AgentRuntime::ready);
    runtime.start();
    QVERIFY(ready.wait(timeoutMs));
    RuntimeStatus status = runtime.monitor()->status();
    QVERIFY(!status.modelName.isEmpty());
    QVERIFY(!status.offlineFallback); // the offline model has nothing to fall back from
    QCOMPARE(status.worstBreaker, DependencyStatus::Breaker::Closed);

    CircuitBreakerRegistry *breakers = RuntimeTestSeam::breakers(runtime);
    QVERIFY(breakers);
    qint64 nowMs = 1'000'000;
    breakers->setClock([&nowMs] { return nowMs; });
    QSignalSpy changed(runtime.monitor(), &RuntimeMonitor::statusChanged);
    CircuitBreaker *first = breakers->breaker(QStringLiteral("a:first"));
    CircuitBreaker *second = breakers->breaker(QStringLiteral("b:second"));
    breakers->breaker(QStringLiteral("c:closed"));

    open(first);
    QCOMPARE(changed.size(), 1);
    nowMs += first->options().openCooldown.count() + 1;
    QVERIFY(first->tryAcquire()); // a probe after the cool-down: half-open
    QCOMPARE(changed.size(), 2);
    status = runtime.monitor()->status();
    QCOMPARE(troubled(status), QStringList{QStringLiteral("a:first half-open")});
    QCOMPARE(status.worstBreaker, DependencyStatus::Breaker::HalfOpen);

    // An open breaker is the worst case and goes first, whatever its name.
    open(second);
    QCOMPARE(changed.size(), 3);
    status = runtime.monitor()->status();
    QCOMPARE(troubled(status), (QStringList{QStringLiteral("b:second open"),
                                            QStringLiteral("a:first half-open")}));
    QCOMPARE(status.worstBreaker, DependencyStatus::Breaker::Open);
    QCOMPARE(status.troubledDependencies.first().openCooldown,
             second->options().openCooldown);
}

QTEST_GUILESS_MAIN(tst_RuntimeStatus)
#include "tst_runtimestatus.moc"
