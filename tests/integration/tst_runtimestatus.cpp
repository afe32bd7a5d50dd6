// RuntimeStatus: what the window shows of the runtime, decided in core. A real runtime on a
// temporary data directory; breakers driven through their own API with an injected clock.
#include "core/console/agentruntime.h"
#include "core/console/runtimestatus.h"
#include "core/resilience/circuitbreaker.h"
#include "core/resilience/retrypolicy.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

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
};

void tst_RuntimeStatus::policyAndWorstCaseBeforeStart()
{
    RuntimeOptions options;
    options.dataDirectory = QStringLiteral("/nonexistent-not-started");
    {
        const AgentRuntime runtime(options);
        const RuntimeStatus status = runtime.status();
        // DESIGN.md: 2 + 0.2 + 2 + 0.4 + 2 = 6.6 s for the default tool policy.
        QCOMPARE(status.toolWorstCase, 6600ms);
        QCOMPARE(status.toolPolicy, RetryPolicy::defaults().describe());
        QVERIFY(status.toolPolicy.endsWith(QStringLiteral("worst case 6.6 s")));
        QVERIFY(status.modelName.isEmpty()); // not ready: no model yet
        QCOMPARE(status.worstBreaker, DependencyStatus::Breaker::Closed);
        QVERIFY(status.troubledDependencies.isEmpty());
    }
    RetryPolicy quick = RetryPolicy::defaults();
    quick.attemptTimeout = 500ms;
    quick.maxRetries = 1;
    options.toolPolicy = quick;
    const AgentRuntime runtime(options);
    QCOMPARE(runtime.status().toolWorstCase, quick.worstCaseDuration());
    QCOMPARE(runtime.status().toolWorstCase, 1200ms); // 0.5 + 0.2 + 0.5
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
    RuntimeStatus status = runtime.status();
    QVERIFY(!status.modelName.isEmpty());
    QVERIFY(!status.offlineFallback); // the offline model has nothing to fall back from
    QCOMPARE(status.worstBreaker, DependencyStatus::Breaker::Closed);

    CircuitBreakerRegistry *breakers = runtime.breakers();
    QVERIFY(breakers);
    qint64 nowMs = 1'000'000;
    breakers->setClock([&nowMs] { return nowMs; });
    QSignalSpy changed(&runtime, &AgentRuntime::statusChanged);
    CircuitBreaker *first = breakers->breaker(QStringLiteral("a:first"));
    CircuitBreaker *second = breakers->breaker(QStringLiteral("b:second"));
    breakers->breaker(QStringLiteral("c:closed"));

    open(first);
    QCOMPARE(changed.size(), 1);
    nowMs += first->options().openCooldown.count() + 1;
    QVERIFY(first->tryAcquire()); // a probe after the cool-down: half-open
    QCOMPARE(changed.size(), 2);
    status = runtime.status();
    QCOMPARE(troubled(status), QStringList{QStringLiteral("a:first half-open")});
    QCOMPARE(status.worstBreaker, DependencyStatus::Breaker::HalfOpen);

    // An open breaker is the worst case and goes first, whatever its name.
    open(second);
    QCOMPARE(changed.size(), 3);
    status = runtime.status();
    QCOMPARE(troubled(status), (QStringList{QStringLiteral("b:second open"),
                                            QStringLiteral("a:first half-open")}));
    QCOMPARE(status.worstBreaker, DependencyStatus::Breaker::Open);
    QCOMPARE(status.troubledDependencies.first().openCooldown,
             second->options().openCooldown);
}

QTEST_GUILESS_MAIN(tst_RuntimeStatus)
#include "tst_runtimestatus.moc"
