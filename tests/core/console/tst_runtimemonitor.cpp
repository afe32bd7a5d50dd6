// RuntimeMonitor: what the running console tells of itself, decided in core. The status the
// window shows (model, breakers worst first, the tool policy and its worst case), a breaker's
// reset, what failing dependencies left and its putting back, each tool's latency, the
// counters and the duplicate check. A real runtime on a temporary data directory; breakers
// driven through their own API (RuntimeTestSeam) with an injected clock.
#include "runtimestart.h"

#include "core/console/activeconnection.h"
#include "core/console/agentruntime.h"
#include "core/console/dependencystate.h"
#include "core/console/runtimemonitor.h"
#include "core/console/runtimestatus.h"
#include "core/console/runtimetestseam.h"
#include "core/telemetry/counters.h"
#include "core/turn/agentloop.h"
#include "core/turn/turnresult.h"
#include "core/resilience/circuitbreaker.h"
#include "core/resilience/retrypolicy.h"

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

class tst_RuntimeMonitor final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void policyAndWorstCaseBeforeStart();
    void breakersWorstFirst();
    void aResetBreakerIsClosedAndSaid();
    void dependencyStateIsPutBack();
    void aTurnIsTimedAndCounted();
    void aSettingsSwitchIsAStatusChange();

private:
    // A runtime on this case's own data directory, not started yet.
    AgentRuntime &makeRuntime();

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<AgentRuntime> m_runtime;
};

void tst_RuntimeMonitor::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void tst_RuntimeMonitor::cleanup()
{
    m_runtime.reset();
    m_dir.reset();
}

AgentRuntime &tst_RuntimeMonitor::makeRuntime()
{
    RuntimeOptions options;
    options.dataDirectory = m_dir->path();
    m_runtime = std::make_unique<AgentRuntime>(options);
    return *m_runtime;
}

void tst_RuntimeMonitor::policyAndWorstCaseBeforeStart()
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

void tst_RuntimeMonitor::breakersWorstFirst()
{
    AgentRuntime &runtime = makeRuntime();
    QVERIFY(Testing::startAndWait(runtime));
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


void tst_RuntimeMonitor::aResetBreakerIsClosedAndSaid()
{
    AgentRuntime &runtime = makeRuntime();
    RuntimeMonitor *monitor = runtime.monitor();
    QVERIFY(!monitor->resetBreaker(QStringLiteral("a:first"))); // none of that name yet
    QVERIFY(Testing::startAndWait(runtime));
    CircuitBreakerRegistry *breakers = RuntimeTestSeam::breakers(runtime);
    CircuitBreaker *first = breakers->breaker(QStringLiteral("a:first"));
    open(first);
    QSignalSpy changed(monitor, &RuntimeMonitor::statusChanged);
    QVERIFY(monitor->resetBreaker(QStringLiteral("a:first")));
    QCOMPARE(first->state(), CircuitBreaker::State::Closed);
    QVERIFY(!changed.isEmpty());
    QCOMPARE(monitor->status().worstBreaker, DependencyStatus::Breaker::Closed);
    // A closed breaker's reset is said too: its window is empty now.
    const qsizetype before = changed.size();
    QVERIFY(monitor->resetBreaker(QStringLiteral("a:first")));
    QCOMPARE(changed.size(), before + 1);
    QVERIFY(!monitor->resetBreaker(QStringLiteral("no:such")));
}

// A scenario run starts from a fresh start's state and puts the staff member's back.
void tst_RuntimeMonitor::dependencyStateIsPutBack()
{
    AgentRuntime &runtime = makeRuntime();
    QVERIFY(Testing::startAndWait(runtime));
    RuntimeMonitor *monitor = runtime.monitor();
    CircuitBreakerRegistry *breakers = RuntimeTestSeam::breakers(runtime);
    open(breakers->breaker(QStringLiteral("a:first")));
    const DependencyState saved = monitor->dependencyState();
    QCOMPARE(saved.breakers.openCount, 1);

    monitor->restoreDependencyState({});
    QCOMPARE(breakers->find(QStringLiteral("a:first"))->state(), CircuitBreaker::State::Closed);
    QCOMPARE(monitor->status().worstBreaker, DependencyStatus::Breaker::Closed);

    monitor->restoreDependencyState(saved);
    QCOMPARE(breakers->find(QStringLiteral("a:first"))->state(), CircuitBreaker::State::Open);
    QCOMPARE(breakers->openCount(), 1);
    QCOMPARE(troubled(monitor->status()), QStringList{QStringLiteral("a:first open")});
}

// A finished turn: its calls timed (toolLatencyChanged), the counters summed by the journal,
// the backend's duplicate figure checked at start and kept with the totals.
void tst_RuntimeMonitor::aTurnIsTimedAndCounted()
{
    AgentRuntime &runtime = makeRuntime();
    RuntimeMonitor *monitor = runtime.monitor();
    QCOMPARE(monitor->duplicateBusinessObjects(), -1); // unknown until checked
    QSignalSpy checked(monitor, &RuntimeMonitor::duplicateBusinessObjectsChecked);
    QVERIFY(Testing::startAndWait(runtime));
    QVERIFY(checked.size() == 1 || checked.wait(timeoutMs));
    QCOMPARE(checked.first().first().toInt(), 0);
    QCOMPARE(monitor->duplicateBusinessObjects(), 0);
    QVERIFY(!monitor->isCheckingDuplicates());
    QVERIFY(monitor->toolLatency().histograms().isEmpty());

    QSignalSpy timed(monitor, &RuntimeMonitor::toolLatencyChanged);
    QSignalSpy finished(runtime.agentLoop(), &AgentLoop::turnFinished);
    QVERIFY(!runtime.agentLoop()->ask(QStringLiteral("Is SKU-200 in stock?")).isEmpty());
    QVERIFY(finished.wait(timeoutMs));
    QCOMPARE(timed.size(), 1);
    const auto turn = finished.first().first().value<TurnResult>();
    int calls = 0;
    for (const ToolLatencyStats::Histogram &histogram : monitor->toolLatency().histograms())
        calls += histogram.calls;
    QCOMPARE(calls, int(turn.toolCalls.size()));
    QVERIFY(calls > 0);

    const QFuture<QJsonObject> totals = monitor->counterTotals();
    QVERIFY(QTest::qWaitFor([&totals] { return totals.isFinished(); }, timeoutMs));
    const QString duplicates = Metrics::counterName(Metrics::Counter::DuplicateBusinessObject);
    QCOMPARE(totals.result().value(duplicates).toInt(-1), 0);
}

// Another model or backend: the window reads the status again.
void tst_RuntimeMonitor::aSettingsSwitchIsAStatusChange()
{
    AgentRuntime &runtime = makeRuntime();
    QVERIFY(Testing::startAndWait(runtime));
    QSignalSpy changed(runtime.monitor(), &RuntimeMonitor::statusChanged);
    QString error;
    QVERIFY2(runtime.connection()->apply(runtime.options().model, runtime.options().backend,
                                         &error),
             qPrintable(error));
    QCOMPARE(changed.size(), 1);
    QCOMPARE(runtime.monitor()->status().modelName, runtime.connection()->modelName());
}

QTEST_GUILESS_MAIN(tst_RuntimeMonitor)
#include "tst_runtimemonitor.moc"
