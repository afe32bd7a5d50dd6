// CircuitBreaker and CircuitBreakerRegistry: every transition, driven by an injected clock, so
// that nothing waits for a cool-down and every run sees the same times.

#include "core/resilience/circuitbreaker.h"

#include <QLoggingCategory>
#include <QMetaEnum>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>

using namespace AgentConsole;
using namespace std::chrono_literals;
using State = CircuitBreaker::State;

namespace {

// A hand-moved monotonic clock.
struct FakeClock
{
    qint64 nowMs = 1000;
    CircuitBreaker::Clock function()
    {
        return [this] { return nowMs; };
    }
};

CircuitBreaker::Options smallWindow(int size, int minimum, double threshold)
{
    CircuitBreaker::Options options;
    options.windowSize = size;
    options.minimumCalls = minimum;
    options.failureRateThreshold = threshold;
    options.openCooldown = 10s;
    options.halfOpenProbes = 2;
    return options;
}

// Plays a script of calls through the breaker: 'S' success, 'F' failure, 'W' slow success,
// 'X' slow failure (slow = 500 ms, fast = 5 ms). Every call asks for permission first, as a
// real caller does; a refused call is not recorded.
void play(CircuitBreaker &breaker, const QString &script)
{
    for (const QChar step : script) {
        if (!breaker.tryAcquire())
            continue;
        const bool slow = step == QLatin1Char('W') || step == QLatin1Char('X');
        const auto duration = slow ? 500ms : 5ms;
        if (step == QLatin1Char('F') || step == QLatin1Char('X'))
            breaker.recordFailure(duration);
        else
            breaker.recordSuccess(duration);
    }
}

QString nameOf(State state)
{
    return QString::fromLatin1(QMetaEnum::fromType<State>().valueToKey(int(state)));
}

// "Closed->Open", ... from a spy on stateChanged.
QStringList transitions(const QSignalSpy &spy)
{
    const QString dependency = QStringLiteral("orders");
    QStringList list;
    for (const QList<QVariant> &arguments : spy) {
        if (arguments.at(0).toString() != dependency)
            list.append(QStringLiteral("wrong dependency ") + arguments.at(0).toString());
        list.append(nameOf(arguments.at(1).value<State>()) + QStringLiteral("->")
                    + nameOf(arguments.at(2).value<State>()));
    }
    return list;
}

QLoggingCategory::CategoryFilter g_previousFilter = nullptr;

void enableResilienceInfo(QLoggingCategory *category)
{
    if (g_previousFilter)
        g_previousFilter(category);
    if (qstrcmp(category->categoryName(), "agentconsole.resilience") == 0)
        category->setEnabled(QtInfoMsg, true);
}

// Opens a breaker with ten failures.
void open(CircuitBreaker &breaker)
{
    play(breaker, QStringLiteral("FFFFFFFFFF"));
    QCOMPARE(breaker.state(), State::Open);
}

} // namespace

class tst_CircuitBreaker final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void opensOnTheFailureRate_data();
    void opensOnTheFailureRate();
    void opensOnTheSlowCallRate_data();
    void opensOnTheSlowCallRate();
    void windowSlides();
    void resultsWhileOpenAreIgnored();

    void failsFastUntilTheCooldownPassed();
    void halfOpenProbesSucceedAndClose();
    void halfOpenProbeFailureReopens();
    void slowProbesReopen();
    void releaseGivesTheProbeBack();
    void releaseWhileClosedChangesNothing();

    void signalsAndLogEveryChange();
    void optionsThatCannotWorkAreMadeToWork();

    void registryHoldsOneBreakerPerDependency();
    void registryCountsOpensAndReemits();
    void registryClockAndOptions();
    void aSnapshotPutsEverythingBack();
    void anIsolationRefusesWhateverTheStateAndLiftsBackToIt();
    void anIsolationCoversItsNameAndTheNamesUnderIt();
    void theRegistryIsolatesBreakersNowAndLater();
};

void tst_CircuitBreaker::initTestCase()
{
    qRegisterMetaType<AgentConsole::CircuitBreaker::State>();
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.resilience.info=false"));
}

void tst_CircuitBreaker::opensOnTheFailureRate_data()
{
    QTest::addColumn<int>("windowSize");
    QTest::addColumn<int>("minimumCalls");
    QTest::addColumn<double>("threshold");
    QTest::addColumn<QString>("script");
    QTest::addColumn<State>("expected");

    QTest::newRow("9 failures, minimum 10: not judged yet")
        << 20 << 10 << 0.5 << "FFFFFFFFF" << State::Closed;
    QTest::newRow("10th failure reaches the minimum")
        << 20 << 10 << 0.5 << "FFFFFFFFFF" << State::Open;
    QTest::newRow("5 of 10 at 50%: opens (>=)") << 20 << 10 << 0.5 << "SSSSSFFFFF" << State::Open;
    QTest::newRow("4 of 10 at 50%: stays closed")
        << 20 << 10 << 0.5 << "SSSSSSFFFF" << State::Closed;
    QTest::newRow("3 of 10 at 30%: exact rate opens")
        << 20 << 10 << 0.3 << "SSSSSSSFFF" << State::Open;
    QTest::newRow("failures first, then enough successes")
        << 20 << 10 << 0.5 << "FFFFSSSSSSSSSS" << State::Closed;
    QTest::newRow("all successes")
        << 20 << 10 << 0.5 << "SSSSSSSSSSSSSSSSSSSSSSSS" << State::Closed;
    QTest::newRow("minimum 1, one failure, 100%") << 5 << 1 << 1.0 << "F" << State::Open;
    QTest::newRow("slow successes are not failures")
        << 20 << 10 << 0.5 << "WWWWWWWWWW" << State::Closed;
}

void tst_CircuitBreaker::opensOnTheFailureRate()
{
    QFETCH(int, windowSize);
    QFETCH(int, minimumCalls);
    QFETCH(double, threshold);
    QFETCH(QString, script);
    QFETCH(State, expected);

    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders"),
                           smallWindow(windowSize, minimumCalls, threshold));
    breaker.setClock(clock.function());
    if (expected == State::Open)
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("Closed -> Open")));
    play(breaker, script);
    QCOMPARE(breaker.state(), expected);
    QCOMPARE(breaker.openCount(), expected == State::Open ? 1 : 0);
}

void tst_CircuitBreaker::opensOnTheSlowCallRate_data()
{
    QTest::addColumn<int>("slowThresholdMs");
    QTest::addColumn<double>("slowRate");
    QTest::addColumn<QString>("script");
    QTest::addColumn<State>("expected");

    // Slow = 500 ms in `play`; fast = 5 ms. Failure threshold stays at 50%.
    QTest::newRow("judging off: all slow stays closed")
        << 0 << 0.5 << "WWWWWWWWWW" << State::Closed;
    QTest::newRow("half slow at 50%") << 100 << 0.5 << "SSSSSWWWWW" << State::Open;
    QTest::newRow("4 of 10 slow at 50%") << 100 << 0.5 << "SSSSSSWWWW" << State::Closed;
    QTest::newRow("all slow at the default 100%") << 100 << 1.0 << "WWWWWWWWWW" << State::Open;
    QTest::newRow("9 of 10 slow at 100%") << 100 << 1.0 << "SWWWWWWWWW" << State::Closed;
    QTest::newRow("threshold equal to the duration is slow")
        << 500 << 1.0 << "WWWWWWWWWW" << State::Open;
    QTest::newRow("threshold above the duration") << 501 << 1.0 << "WWWWWWWWWW" << State::Closed;
    // Slow failures count for both rates; 4 slow failures + 2 slow successes = 6 slow of 10.
    QTest::newRow("slow failures count as slow") << 100 << 0.6 << "SSSSXXXXWW" << State::Open;
}

void tst_CircuitBreaker::opensOnTheSlowCallRate()
{
    QFETCH(int, slowThresholdMs);
    QFETCH(double, slowRate);
    QFETCH(QString, script);
    QFETCH(State, expected);

    FakeClock clock;
    CircuitBreaker::Options options = smallWindow(20, 10, 0.5);
    options.slowCallThreshold = std::chrono::milliseconds{slowThresholdMs};
    options.slowCallRateThreshold = slowRate;
    CircuitBreaker breaker(QStringLiteral("orders"), options);
    breaker.setClock(clock.function());
    if (expected == State::Open)
        QTest::ignoreMessage(QtWarningMsg,
                             QRegularExpression(QStringLiteral("Closed -> Open .*were slow")));
    play(breaker, script);
    QCOMPARE(breaker.state(), expected);
}

void tst_CircuitBreaker::windowSlides()
{
    // Window of 4, judged from 4 calls, opens at 75%. Cumulatively the script below would be
    // 5 failures of 8 (63%); only a window that forgets old calls sees 3 of the last 4.
    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders"), smallWindow(4, 4, 0.75));
    breaker.setClock(clock.function());
    const QString script = QStringLiteral("FFSSSFFF");
    const QList<int> failuresInWindow{1, 2, 2, 2, 1, 1, 2, 3};
    for (int i = 0; i < script.size(); ++i) {
        if (i == script.size() - 1)
            QTest::ignoreMessage(QtWarningMsg,
                                 QRegularExpression(QStringLiteral("3 of the last 4 calls")));
        play(breaker, script.mid(i, 1));
        if (i < script.size() - 1) {
            QCOMPARE(breaker.state(), State::Closed);
            QCOMPARE(breaker.windowCalls(), std::min(i + 1, 4));
            QCOMPARE(breaker.windowFailures(), failuresInWindow.at(i));
        }
    }
    QCOMPARE(breaker.state(), State::Open);
    // The window is reset by the change; OPEN holds no window.
    QCOMPARE(breaker.windowCalls(), 0);
}

// What a scenario run does to the breakers it finds (ScenarioRunner): a snapshot, new breakers
// for the run, the snapshot back: state, window (a full ring, oldest first), counts, and the
// cool-down of one that was open, on its own clock.
void tst_CircuitBreaker::aSnapshotPutsEverythingBack()
{
    FakeClock clock;
    CircuitBreakerRegistry registry(smallWindow(4, 4, 0.75));
    registry.setClock(clock.function());
    CircuitBreaker *orders = registry.breaker(QStringLiteral("orders"));
    CircuitBreaker *stock = registry.breaker(QStringLiteral("stock"));
    play(*orders, QStringLiteral("SSFSF")); // the ring has wrapped: F S F S... last 4 = SFSF
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("Closed -> Open")));
    play(*stock, QStringLiteral("FFFF"));
    QCOMPARE(stock->state(), State::Open);
    clock.nowMs += 4000; // 6 s of its cool-down left
    const CircuitBreakerRegistry::Snapshot before = registry.snapshot();
    QCOMPARE(before.openCount, 1);

    QSignalSpy changes(&registry, &CircuitBreakerRegistry::stateChanged);
    registry.restore({}); // new breakers for a run
    QCOMPARE(stock->state(), State::Closed);
    QCOMPARE(orders->windowCalls(), 0);
    QCOMPARE(registry.openCount(), 0);
    QCOMPARE(changes.size(), 1); // stock: Open -> Closed
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("Closed -> Open")));
    play(*orders, QStringLiteral("FFFF")); // the run trips orders
    CircuitBreaker *created = registry.breaker(QStringLiteral("tickets")); // made by the run
    play(*created, QStringLiteral("F"));

    registry.restore(before);
    QCOMPARE(orders->state(), State::Closed);
    QCOMPARE(orders->windowCalls(), 4);
    QCOMPARE(orders->windowFailures(), 2);
    QCOMPARE(orders->openCount(), 0);
    QCOMPARE(stock->state(), State::Open);
    QCOMPARE(stock->openCount(), 1);
    QCOMPARE(stock->cooldownLeft(), 6s);
    QCOMPARE(created->state(), State::Closed);
    QCOMPARE(created->windowCalls(), 0);
    QCOMPARE(registry.openCount(), 1);
    // The restored window goes on sliding from its oldest call: one more failure makes the
    // last four S F S F -> F S F F, 3 of 4.
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("3 of the last 4")));
    play(*orders, QStringLiteral("F"));
    QCOMPARE(orders->state(), State::Open);
}

void tst_CircuitBreaker::resultsWhileOpenAreIgnored()
{
    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders"), smallWindow(20, 10, 0.5));
    breaker.setClock(clock.function());
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("-> Open")));
    open(breaker);
    // Calls admitted before it opened finish late: neither closes nor re-opens it.
    breaker.recordSuccess(5ms);
    breaker.recordFailure(5ms);
    breaker.release();
    QCOMPARE(breaker.state(), State::Open);
    QCOMPARE(breaker.openCount(), 1);
    // Nor do they count as probes once the cool-down passed: no probe is outstanding.
    clock.nowMs += 10000;
    QVERIFY(breaker.tryAcquire());
    QCOMPARE(breaker.state(), State::HalfOpen);
    breaker.recordSuccess(5ms); // the probe
    breaker.recordSuccess(5ms); // a straggler: ignored, no probe outstanding
    QCOMPARE(breaker.state(), State::HalfOpen);
}

void tst_CircuitBreaker::failsFastUntilTheCooldownPassed()
{
    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders"), smallWindow(20, 10, 0.5));
    breaker.setClock(clock.function());
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("-> Open")));
    open(breaker);
    const qint64 openedAt = clock.nowMs;

    for (const qint64 offset : {0, 1, 5000, 9999}) {
        clock.nowMs = openedAt + offset;
        QVERIFY2(!breaker.tryAcquire(), qPrintable(QString::number(offset)));
        QCOMPARE(breaker.state(), State::Open);
    }
    QCOMPARE(breaker.rejectedCount(), 4);

    clock.nowMs = openedAt + 10000;
    QVERIFY(breaker.tryAcquire());
    QCOMPARE(breaker.state(), State::HalfOpen);
}

void tst_CircuitBreaker::halfOpenProbesSucceedAndClose()
{
    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders"), smallWindow(20, 10, 0.5));
    breaker.setClock(clock.function());
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("-> Open")));
    open(breaker);
    clock.nowMs += 10000;

    // Two probes may be outstanding; a third call is refused.
    QVERIFY(breaker.tryAcquire());
    QVERIFY(breaker.tryAcquire());
    QVERIFY(!breaker.tryAcquire());
    QCOMPARE(breaker.state(), State::HalfOpen);

    breaker.recordSuccess(5ms);
    QCOMPARE(breaker.state(), State::HalfOpen);
    // A probe that succeeded does not free a place: two probes in all, per episode.
    QVERIFY(!breaker.tryAcquire());
    breaker.recordSuccess(5ms);
    QCOMPARE(breaker.state(), State::Closed);

    // Closed with an empty window: nine failures are not yet judged.
    QCOMPARE(breaker.windowCalls(), 0);
    play(breaker, QStringLiteral("FFFFFFFFF"));
    QCOMPARE(breaker.state(), State::Closed);
    QCOMPARE(breaker.openCount(), 1);
}

void tst_CircuitBreaker::halfOpenProbeFailureReopens()
{
    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders"), smallWindow(20, 10, 0.5));
    breaker.setClock(clock.function());
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("Closed -> Open")));
    open(breaker);
    clock.nowMs += 12000;
    QVERIFY(breaker.tryAcquire());
    QVERIFY(breaker.tryAcquire());
    breaker.recordSuccess(5ms);
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("HalfOpen -> Open \\(a probe failed")));
    breaker.recordFailure(5ms);
    QCOMPARE(breaker.state(), State::Open);
    QCOMPARE(breaker.openCount(), 2);

    // The cool-down starts again from the re-opening, not from the first opening.
    const qint64 reopenedAt = clock.nowMs;
    clock.nowMs = reopenedAt + 9999;
    QVERIFY(!breaker.tryAcquire());
    clock.nowMs = reopenedAt + 10000;
    QVERIFY(breaker.tryAcquire());
    QCOMPARE(breaker.state(), State::HalfOpen);
}

void tst_CircuitBreaker::slowProbesReopen()
{
    FakeClock clock;
    CircuitBreaker::Options options = smallWindow(20, 10, 0.5);
    options.slowCallThreshold = 100ms;
    options.slowCallRateThreshold = 1.0;
    CircuitBreaker breaker(QStringLiteral("orders"), options);
    breaker.setClock(clock.function());
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("Closed -> Open")));
    open(breaker);
    clock.nowMs += 10000;

    // Both probes slow: 100% slow reaches the slow threshold, as it would in CLOSED.
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("HalfOpen -> Open")));
    play(breaker, QStringLiteral("WW"));
    QCOMPARE(breaker.state(), State::Open);

    // One fast probe of two: 50% < 100%, closes.
    clock.nowMs += 10000;
    play(breaker, QStringLiteral("WS"));
    QCOMPARE(breaker.state(), State::Closed);
}

void tst_CircuitBreaker::releaseGivesTheProbeBack()
{
    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders"), smallWindow(20, 10, 0.5));
    breaker.setClock(clock.function());
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("-> Open")));
    open(breaker);
    clock.nowMs += 10000;
    QVERIFY(breaker.tryAcquire());
    QVERIFY(breaker.tryAcquire());
    QVERIFY(!breaker.tryAcquire());
    // A probe cancelled (or rejected for a reason that says nothing about health): another
    // call may probe instead; the state does not change.
    breaker.release();
    QCOMPARE(breaker.state(), State::HalfOpen);
    QVERIFY(breaker.tryAcquire());
    QVERIFY(!breaker.tryAcquire());
    breaker.recordSuccess(5ms);
    breaker.recordSuccess(5ms);
    QCOMPARE(breaker.state(), State::Closed);
}

void tst_CircuitBreaker::releaseWhileClosedChangesNothing()
{
    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders"), smallWindow(20, 10, 0.5));
    breaker.setClock(clock.function());
    for (int i = 0; i < 50; ++i) {
        QVERIFY(breaker.tryAcquire());
        breaker.release();
    }
    QCOMPARE(breaker.state(), State::Closed);
    QCOMPARE(breaker.windowCalls(), 0);
}

void tst_CircuitBreaker::signalsAndLogEveryChange()
{
    // Info messages on, whatever QT_LOGGING_RULES says (ctest turns them off, and the
    // environment's rules win over setFilterRules): a filter has the last word.
    g_previousFilter = QLoggingCategory::installFilter(enableResilienceInfo);
    const auto restore = qScopeGuard([] { QLoggingCategory::installFilter(g_previousFilter); });

    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders"), smallWindow(20, 10, 0.5));
    breaker.setClock(clock.function());
    QSignalSpy spy(&breaker, &CircuitBreaker::stateChanged);
    // Opening is a warning; the other changes are information.
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral(
                             "^circuit breaker orders: Closed -> Open \\(10 of the last 10 calls "
                             "failed\\); failing fast for 10000 ms$")));
    QTest::ignoreMessage(QtInfoMsg, QRegularExpression(QStringLiteral("Open -> HalfOpen")));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("HalfOpen -> Open")));
    QTest::ignoreMessage(QtInfoMsg, QRegularExpression(QStringLiteral("Open -> HalfOpen")));
    QTest::ignoreMessage(QtInfoMsg, QRegularExpression(QStringLiteral("HalfOpen -> Closed")));

    open(breaker);
    clock.nowMs += 10000;
    play(breaker, QStringLiteral("F"));
    clock.nowMs += 10000;
    play(breaker, QStringLiteral("SS"));

    QCOMPARE(transitions(spy),
             (QStringList{"Closed->Open", "Open->HalfOpen", "HalfOpen->Open", "Open->HalfOpen",
                          "HalfOpen->Closed"}));
    QCOMPARE(breaker.openCount(), 2);
}

void tst_CircuitBreaker::optionsThatCannotWorkAreMadeToWork()
{
    CircuitBreaker::Options options;
    options.windowSize = 0;
    options.minimumCalls = 50; // more than the window could ever hold
    options.halfOpenProbes = 0;
    options.openCooldown = -5s;
    CircuitBreaker breaker(QStringLiteral("orders"), options);
    QCOMPARE(breaker.options().windowSize, 1);
    QCOMPARE(breaker.options().minimumCalls, 1);
    QCOMPARE(breaker.options().halfOpenProbes, 1);
    QCOMPARE(breaker.options().openCooldown, 0ms);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("-> Open")));
    play(breaker, QStringLiteral("F"));
    QCOMPARE(breaker.state(), State::Open);
}

void tst_CircuitBreaker::registryHoldsOneBreakerPerDependency()
{
    CircuitBreakerRegistry registry(smallWindow(20, 10, 0.5));
    CircuitBreaker *orders = registry.breaker(QStringLiteral("orders-backend"));
    CircuitBreaker *stock = registry.breaker(QStringLiteral("inventory-backend"));
    QVERIFY(orders && stock && orders != stock);
    QCOMPARE(registry.breaker(QStringLiteral("orders-backend")), orders);
    QCOMPARE(registry.find(QStringLiteral("orders-backend")), orders);
    QCOMPARE(registry.find(QStringLiteral("nobody")), nullptr);
    QCOMPARE(registry.dependencies(), (QStringList{"inventory-backend", "orders-backend"}));
    QCOMPARE(orders->parent(), &registry);
    QCOMPARE(orders->dependency(), QStringLiteral("orders-backend"));
    QCOMPARE(orders->options().windowSize, 20);

    // One dependency down does not take the other with it.
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("orders-backend")));
    open(*orders);
    QCOMPARE(stock->state(), State::Closed);
    QVERIFY(stock->tryAcquire());
}

void tst_CircuitBreaker::registryCountsOpensAndReemits()
{
    FakeClock clock;
    CircuitBreakerRegistry registry(smallWindow(20, 10, 0.5));
    registry.setClock(clock.function());
    QSignalSpy spy(&registry, &CircuitBreakerRegistry::stateChanged);
    CircuitBreaker *orders = registry.breaker(QStringLiteral("orders"));
    CircuitBreaker *model = registry.breaker(QStringLiteral("deepseek"));

    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("orders: Closed")));
    open(*orders);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("deepseek: Closed")));
    open(*model);
    clock.nowMs += 10000;
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("orders: HalfOpen")));
    play(*orders, QStringLiteral("F"));

    QCOMPARE(registry.openCount(), 3); // circuit_breaker_open_count
    QCOMPARE(orders->openCount() + model->openCount(), 3);
    QStringList seen;
    for (const QList<QVariant> &arguments : spy)
        seen.append(arguments.at(0).toString() + QLatin1Char(' ')
                    + nameOf(arguments.at(1).value<State>()) + QStringLiteral("->")
                    + nameOf(arguments.at(2).value<State>()));
    QCOMPARE(seen,
             (QStringList{"orders Closed->Open", "deepseek Closed->Open", "orders Open->HalfOpen",
                          "orders HalfOpen->Open"}));
}

void tst_CircuitBreaker::registryClockAndOptions()
{
    FakeClock clock;
    CircuitBreakerRegistry registry(smallWindow(20, 10, 0.5));
    CircuitBreaker::Options quick = smallWindow(2, 2, 0.5);
    quick.openCooldown = 100ms;
    registry.setOptions(QStringLiteral("model"), quick);
    CircuitBreaker *early = registry.breaker(QStringLiteral("model"));
    QCOMPARE(early->options().windowSize, 2);
    QCOMPARE(early->options().openCooldown, 100ms);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("exists already")));
    registry.setOptions(QStringLiteral("model"), smallWindow(5, 5, 0.5));
    QCOMPARE(early->options().windowSize, 2);

    // The clock reaches breakers created before and after it was set.
    registry.setClock(clock.function());
    CircuitBreaker *late = registry.breaker(QStringLiteral("tools"));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("model: Closed")));
    play(*early, QStringLiteral("FF"));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("tools: Closed")));
    open(*late);
    clock.nowMs += 100;
    QVERIFY(early->tryAcquire());
    QVERIFY(!late->tryAcquire());
    clock.nowMs += 9900;
    QVERIFY(late->tryAcquire());
}

namespace {

BreakerIsolation isolationOf(const QString &dependency)
{
    BreakerIsolation isolation;
    isolation.dependency = dependency;
    isolation.reason = QStringLiteral("vendor outage");
    isolation.leadStaffId = QStringLiteral("L-07");
    isolation.leadRole = QStringLiteral("lead");
    isolation.since = QDateTime::currentDateTimeUtc();
    return isolation;
}

} // namespace

void tst_CircuitBreaker::anIsolationRefusesWhateverTheStateAndLiftsBackToIt()
{
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.resilience.info=false\n"
                                                    "agentconsole.resilience.warning=false"));
    const auto restoreRules = qScopeGuard([] {
        QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.resilience.info=false"));
    });
    CircuitBreaker breaker(QStringLiteral("logistics:embedded"), {});
    QSignalSpy changes(&breaker, &CircuitBreaker::isolationChanged);
    QVERIFY(breaker.tryAcquire());
    breaker.recordFailure(5ms); // one failure in the window, kept under the isolation
    // One value, set twice: two made apart could differ in their time's millisecond.
    const BreakerIsolation isolation = isolationOf(QStringLiteral("logistics"));
    breaker.setIsolation(isolation);
    QCOMPARE(changes.size(), 1);
    breaker.setIsolation(isolation); // the same: no change
    QVERIFY(breaker.isIsolated());
    QVERIFY(!breaker.tryAcquire());
    QCOMPARE(breaker.rejectedCount(), 1);
    QCOMPARE(breaker.state(), State::Closed);
    QCOMPARE(breaker.windowFailures(), 1);
    breaker.setIsolation({});
    QCOMPARE(changes.size(), 2);
    QVERIFY(!breaker.isIsolated());
    QVERIFY(breaker.tryAcquire());
    breaker.release();
    QCOMPARE(breaker.windowFailures(), 1);
}

void tst_CircuitBreaker::anIsolationCoversItsNameAndTheNamesUnderIt()
{
    const BreakerIsolation logistics = isolationOf(QStringLiteral("logistics"));
    QVERIFY(logistics.covers(QStringLiteral("logistics")));
    QVERIFY(logistics.covers(QStringLiteral("logistics:embedded")));
    QVERIFY(logistics.covers(QStringLiteral("logistics:api.example:443")));
    QVERIFY(!logistics.covers(QStringLiteral("logisticsx:embedded")));
    QVERIFY(!logistics.covers(QStringLiteral("orders:embedded")));
    const BreakerIsolation model = isolationOf(QStringLiteral("model:api.example:443"));
    QVERIFY(model.covers(QStringLiteral("model:api.example:443")));
    QVERIFY(!model.covers(QStringLiteral("model:api.example:4433")));
    QVERIFY(!BreakerIsolation().covers(QStringLiteral("logistics")));
    BreakerIsolation until = logistics;
    until.until = logistics.since.addSecs(60);
    QVERIFY(until.holdsAt(logistics.since.addSecs(59)));
    QVERIFY(!until.holdsAt(logistics.since.addSecs(60)));
    QVERIFY(logistics.holdsAt(logistics.since.addYears(1)));
}

void tst_CircuitBreaker::theRegistryIsolatesBreakersNowAndLater()
{
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.resilience.info=false\n"
                                                    "agentconsole.resilience.warning=false"));
    const auto restoreRules = qScopeGuard([] {
        QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.resilience.info=false"));
    });
    CircuitBreakerRegistry registry;
    QSignalSpy changes(&registry, &CircuitBreakerRegistry::isolationChanged);
    CircuitBreaker *orders = registry.breaker(QStringLiteral("orders:embedded"));
    CircuitBreaker *logistics = registry.breaker(QStringLiteral("logistics:embedded"));
    BreakerIsolation whole = isolationOf(QStringLiteral("logistics"));
    BreakerIsolation narrow = isolationOf(QStringLiteral("logistics:embedded"));
    narrow.reason = QStringLiteral("this backend only");
    registry.setIsolations({whole, narrow});
    QVERIFY(!orders->isIsolated());
    QCOMPARE(logistics->isolation().reason, QStringLiteral("this backend only")); // the longest
    QCOMPARE(changes.size(), 1);
    CircuitBreaker *later = registry.breaker(QStringLiteral("logistics:api.example:443"));
    QCOMPARE(later->isolation(), whole);
    QVERIFY(!later->tryAcquire());
    registry.setIsolations({});
    QVERIFY(!logistics->isIsolated());
    QVERIFY(!later->isIsolated());
    QVERIFY(later->tryAcquire());
}

QTEST_GUILESS_MAIN(tst_CircuitBreaker)
#include "tst_circuitbreaker.moc"
