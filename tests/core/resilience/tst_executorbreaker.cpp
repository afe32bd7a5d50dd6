// ToolExecutor with a circuit breaker and a turn's retry budget, which holds the turn's
// deadline: an open breaker fails fast without touching the tool; attempts feed the breaker
// by what they say about the dependency's health; a spent budget stops retries; the budget's
// deadline caps a call and each attempt, and is what the attempt is told.
//
// Breakers run on an injected clock, so no test waits for a cool-down. The only waits are for
// the executor's own short timeouts and backoffs (tens of ms), through a real event loop.

#include "resiliencetestsupport.h"
#include "tests/support/testfailuredomain.h"

#include "core/resilience/circuitbreaker.h"

#include <QLoggingCategory>
#include <QRegularExpression>
#include <QTest>

#include <memory>
#include <stdexcept>

using namespace AgentConsole;
using namespace AgentConsole::Testing;
using namespace std::chrono_literals;
using State = CircuitBreaker::State;

namespace {

constexpr int kSlackMs = 200; // for timing upper bounds on a loaded 2-core machine

ToolExecutor::Options optionsWith(int workers)
{
    ToolExecutor::Options options;
    options.workerThreads = workers;
    return options;
}

CircuitBreaker::Options breakerOptions(int window, int minimum, int probes = 2)
{
    CircuitBreaker::Options options;
    options.windowSize = window;
    options.minimumCalls = minimum;
    options.failureRateThreshold = 0.5;
    options.openCooldown = 10s;
    options.halfOpenProbes = probes;
    return options;
}

struct FakeClock
{
    qint64 nowMs = 0;
    CircuitBreaker::Clock function()
    {
        return [this] { return nowMs; };
    }
};

void openBreaker(CircuitBreaker &breaker)
{
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("Closed -> Open")));
    while (breaker.state() == State::Closed) {
        QVERIFY(breaker.tryAcquire());
        breaker.recordFailure(5ms);
    }
}

std::shared_ptr<ScriptedTool> scriptedTool(const QString &script)
{
    return std::make_shared<ScriptedTool>(
        QStringLiteral("orderStatus"), [script](const AttemptContext &ctx) {
            if (script == QLatin1String("succeed"))
                return AttemptResult::completed(okResult());
            if (script == QLatin1String("transient"))
                return AttemptResult::transient(QString());
            if (script == QLatin1String("hang")) {
                ctx.cancellation.waitUntilCancelled();
                return AttemptResult::completed(okResult()); // too late: discarded
            }
            if (script == QLatin1String("not found"))
                return AttemptResult::completed(
                    ToolResult::failure(TestDomain::NothingFound, Language::English));
            if (script == QLatin1String("rejected"))
                return AttemptResult::rejected(QString());
            if (script == QLatin1String("denied"))
                return AttemptResult::accessDenied(QString());
            if (script == QLatin1String("bug"))
                throw std::runtime_error("a bug");
            throw std::logic_error("unknown script");
        });
}

ToolCallOutcome run(ToolExecutor &executor, const ToolCallRequest &request, bool *ok)
{
    QElapsedTimer clock;
    clock.start();
    CallProbe probe(executor.execute(request), clock);
    *ok = probe.wait(5000) && probe.hasOutcome();
    return *ok ? probe.outcome() : ToolCallOutcome{};
}

} // namespace

class tst_ExecutorBreaker final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void openBreakerFailsFast_data();
    void openBreakerFailsFast();
    void isolatedBreakerRefusesWithTheLeadsWords();
    void attemptsTellTheBreaker_data();
    void attemptsTellTheBreaker();
    void failingAttemptsOpenTheBreakerAndStopTheCall();
    void successfulProbeClosesTheBreaker();
    void cancelledProbeIsReleased();
    void destroyedBreakerIsNoLongerAsked();

    void budgetRefusalStopsRetries_data();
    void budgetRefusalStopsRetries();
    void budgetIsSharedByCalls();

    void turnDeadlineCapsTheCall();
    void expiredTurnDeadlineRunsNothing();
    void extendingTheDeadlineMovesItByThePause();
    void anAttemptIsToldWhenItIsGivenUp_data();
    void anAttemptIsToldWhenItIsGivenUp();
    void theBudgetsDeadlineIsReadWhenTheCallStarts();
};

void tst_ExecutorBreaker::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.resilience.info=false"));
}

void tst_ExecutorBreaker::openBreakerFailsFast_data()
{
    QTest::addColumn<Language>("language");
    QTest::addColumn<QString>("reason");
    QTest::newRow("English") << Language::English << "circuit open";
    QTest::newRow("Chinese") << Language::Chinese << "熔断";
}

void tst_ExecutorBreaker::openBreakerFailsFast()
{
    QFETCH(Language, language);
    QFETCH(QString, reason);

    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders-backend"), breakerOptions(20, 1));
    breaker.setClock(clock.function());
    openBreaker(breaker);
    clock.nowMs += 3600; // 6.4 s of the 10 s cool-down are left

    auto tool = scriptedTool(QStringLiteral("succeed"));
    ToolExecutor executor(optionsWith(2));
    EventLog events(&executor);
    ToolCallRequest request = requestFor(tool);
    request.context.language = language;
    request.breaker = &breaker;
    const QFuture<ToolCallOutcome> future = executor.execute(request);

    // Decided at once, on the caller's thread: nothing was scheduled, nothing reached the pool.
    QVERIFY(future.isFinished());
    QCOMPARE(executor.activeCalls(), 0);
    const ToolCallOutcome outcome = future.result();
    QCOMPARE(tool->calls(), 0);
    QVERIFY(outcome.attempts.isEmpty());
    QCOMPARE(outcome.retries, 0);
    QCOMPARE(events.callCount(), 0);
    QCOMPARE(outcome.finalFailure, FailureKind::CircuitOpen);
    QCOMPARE(outcome.result.success, false);
    QCOMPARE(outcome.result.code, ResultCode::ToolUnavailable);
    QCOMPARE(outcome.result.message, SafeText::messageFor(ResultCode::ToolUnavailable, language));
    QVERIFY2(outcome.result.errors.join(QLatin1Char('|')).contains(reason),
             qPrintable(outcome.result.errors.join(QLatin1Char('|'))));
    QVERIFY(outcome.result.errors.contains(
        SafeText::retryHintFor(ResultCode::ToolUnavailable, language)));
    QCOMPARE(breaker.rejectedCount(), 1);
    QCOMPARE(breaker.state(), State::Open);
    // The refusal says so, apart from a 503: the cool-down left when it was refused.
    QCOMPARE(outcome.circuitCooldownLeftMs, qint64(6400));
    QCOMPARE(breaker.cooldownLeft(), 6400ms);
}

void tst_ExecutorBreaker::isolatedBreakerRefusesWithTheLeadsWords()
{
    // Closed underneath, isolated by a lead (docs/TEAM.md): refused at once, the call carries
    // who, when and why for its card; the model reads only that it is unavailable.
    CircuitBreaker breaker(QStringLiteral("logistics:embedded"), breakerOptions(20, 10));
    BreakerIsolation isolation;
    isolation.dependency = QStringLiteral("logistics");
    isolation.reason = QStringLiteral("logistics vendor outage");
    isolation.leadStaffId = QStringLiteral("L-07");
    isolation.leadRole = QStringLiteral("lead_l07");
    isolation.since = QDateTime::currentDateTimeUtc();
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("isolated: by L-07")));
    breaker.setIsolation(isolation);

    auto tool = scriptedTool(QStringLiteral("succeed"));
    ToolExecutor executor(optionsWith(2));
    ToolCallRequest request = requestFor(tool);
    request.breaker = &breaker;
    const QFuture<ToolCallOutcome> future = executor.execute(request);
    QVERIFY(future.isFinished());
    const ToolCallOutcome outcome = future.result();
    QCOMPARE(tool->calls(), 0);
    QCOMPARE(outcome.finalFailure, FailureKind::CircuitOpen);
    QCOMPARE(outcome.result.code, ResultCode::ToolUnavailable);
    QCOMPARE(outcome.isolation, isolation);
    QCOMPARE(outcome.circuitCooldownLeftMs, qint64(0));
    const QString errors = outcome.result.errors.join(QLatin1Char('|'));
    QVERIFY2(errors.contains(QStringLiteral("taken offline by the shift lead")),
             qPrintable(errors));
    QVERIFY2(!errors.contains(QStringLiteral("vendor")), qPrintable(errors));
    QCOMPARE(breaker.state(), State::Closed);

    // Lifted: the next call runs.
    breaker.setIsolation({});
    bool ok = false;
    const ToolCallOutcome after = run(executor, request, &ok);
    QVERIFY(ok);
    QVERIFY(after.result.success);
    QVERIFY(after.isolation.isNull());
}

void tst_ExecutorBreaker::attemptsTellTheBreaker_data()
{
    QTest::addColumn<QString>("script");
    QTest::addColumn<int>("windowCalls");
    QTest::addColumn<int>("windowFailures");

    // No retries here: one attempt, one verdict (or none).
    QTest::newRow("success counts for it") << "succeed" << 1 << 0;
    QTest::newRow("not found is a healthy answer") << "not found" << 1 << 0;
    QTest::newRow("transient counts against it") << "transient" << 1 << 1;
    QTest::newRow("timeout counts against it") << "hang" << 1 << 1;
    QTest::newRow("rejected says nothing") << "rejected" << 0 << 0;
    QTest::newRow("access denied says nothing") << "denied" << 0 << 0;
    QTest::newRow("a bug says nothing") << "bug" << 0 << 0;
}

void tst_ExecutorBreaker::attemptsTellTheBreaker()
{
    QFETCH(QString, script);
    QFETCH(int, windowCalls);
    QFETCH(int, windowFailures);

    CircuitBreaker breaker(QStringLiteral("orders-backend"), breakerOptions(20, 20));
    RetryPolicy policy = shortPolicy();
    policy.maxRetries = 0;
    ToolExecutor executor(optionsWith(2));
    ToolCallRequest request = requestFor(scriptedTool(script), policy);
    request.breaker = &breaker;
    if (script == QLatin1String("bug"))
        QTest::ignoreMessage(QtCriticalMsg, QRegularExpression(QStringLiteral("^incident ")));
    bool ok = false;
    const ToolCallOutcome outcome = run(executor, request, &ok);
    QVERIFY(ok);
    QCOMPARE(outcome.attempts.size(), 1);
    QCOMPARE(breaker.windowCalls(), windowCalls);
    QCOMPARE(breaker.windowFailures(), windowFailures);
    QCOMPARE(breaker.state(), State::Closed);
}

void tst_ExecutorBreaker::failingAttemptsOpenTheBreakerAndStopTheCall()
{
    // Opens once 4 calls are in the window with half of them failed.
    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders-backend"), breakerOptions(4, 4));
    breaker.setClock(clock.function());
    auto tool = scriptedTool(QStringLiteral("transient"));
    ToolExecutor executor(optionsWith(2));
    EventLog events(&executor);
    ToolCallRequest request = requestFor(tool);
    request.breaker = &breaker;

    // Call 1: three transient attempts, three failures: not yet judged.
    bool ok = false;
    const ToolCallOutcome first = run(executor, request, &ok);
    QVERIFY(ok);
    const QStringList threeFailures{"TransientFailure +10ms", "TransientFailure +20ms",
                                    "TransientFailure"};
    QCOMPARE(stepsOf(first.attempts), threeFailures);
    QCOMPARE(first.retries, 2);
    QCOMPARE(first.result.code, ResultCode::ToolUnavailable);
    QCOMPARE(first.circuitCooldownLeftMs, qint64(-1)); // three 503s, no refusal
    QCOMPARE(breaker.state(), State::Closed);

    // Call 2: its first failure opens the breaker; the retry is refused and the timeline says
    // why the backoff led nowhere.
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("Closed -> Open")));
    const ToolCallOutcome second = run(executor, request, &ok);
    QVERIFY(ok);
    QCOMPARE(breaker.state(), State::Open);
    QCOMPARE(stepsOf(second.attempts), (QStringList{"TransientFailure +10ms", "CircuitOpen"}));
    QCOMPARE(events.of(second.callId),
             (QStringList{"start 1", "end 1 TransientFailure +10ms", "end 2 CircuitOpen"}));
    QCOMPARE(second.attempts.last().durationMs, 0);
    QVERIFY(second.attempts.first().made);
    QVERIFY(!second.attempts.last().made); // the refused retry was not made
    QCOMPARE(second.circuitCooldownLeftMs, qint64(10000));
    QCOMPARE(second.finalFailure, FailureKind::CircuitOpen);
    QCOMPARE(second.result.code, ResultCode::ToolUnavailable);
    QCOMPARE(tool->calls(), 4);

    // Call 3: fails fast, the tool is not called again.
    const QFuture<ToolCallOutcome> third = executor.execute(request);
    QVERIFY(third.isFinished());
    QVERIFY(third.result().attempts.isEmpty());
    QCOMPARE(third.result().finalFailure, FailureKind::CircuitOpen);
    QCOMPARE(tool->calls(), 4);
    QCOMPARE(breaker.openCount(), 1);
}

void tst_ExecutorBreaker::successfulProbeClosesTheBreaker()
{
    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders-backend"), breakerOptions(20, 1, 1));
    breaker.setClock(clock.function());
    openBreaker(breaker);
    clock.nowMs += 10000;

    auto tool = scriptedTool(QStringLiteral("succeed"));
    ToolExecutor executor(optionsWith(2));
    ToolCallRequest request = requestFor(tool);
    request.breaker = &breaker;
    bool ok = false;
    const ToolCallOutcome outcome = run(executor, request, &ok);
    QVERIFY(ok);
    QCOMPARE(outcome.result.code, ResultCode::Ok);
    QCOMPARE(breaker.state(), State::Closed);
    QCOMPARE(tool->calls(), 1);
}

void tst_ExecutorBreaker::cancelledProbeIsReleased()
{
    FakeClock clock;
    CircuitBreaker breaker(QStringLiteral("orders-backend"), breakerOptions(20, 1, 1));
    breaker.setClock(clock.function());
    openBreaker(breaker);
    clock.nowMs += 10000;

    RetryPolicy policy = shortPolicy();
    policy.attemptTimeout = 5s; // only the cancellation ends this attempt
    auto tool = scriptedTool(QStringLiteral("hang"));
    ToolExecutor executor(optionsWith(2));
    ToolCallRequest request = requestFor(tool, policy);
    request.breaker = &breaker;
    QElapsedTimer elapsed;
    elapsed.start();
    CallProbe probe(executor.execute(request), elapsed);
    QCOMPARE(breaker.state(), State::HalfOpen);
    QVERIFY(spinUntil([&] { return tool->calls() == 1; }));
    probe.future().cancel();
    QVERIFY(spinUntil([&] { return executor.activeCalls() == 0; }));

    // The only probe was given back: the breaker is still probing and lets another call try.
    QCOMPARE(breaker.state(), State::HalfOpen);
    QVERIFY(breaker.tryAcquire());
    QVERIFY(spinUntil([&] { return executor.abandonedBodies() == 0; }));
}

void tst_ExecutorBreaker::destroyedBreakerIsNoLongerAsked()
{
    auto breaker = std::make_unique<CircuitBreaker>(QStringLiteral("orders-backend"),
                                                    breakerOptions(20, 1));
    RetryPolicy policy = shortPolicy();
    policy.maxRetries = 1;
    auto tool = scriptedTool(QStringLiteral("hang"));
    ToolExecutor executor(optionsWith(2));
    ToolCallRequest request = requestFor(tool, policy);
    request.breaker = breaker.get();
    QElapsedTimer clock;
    clock.start();
    CallProbe probe(executor.execute(request), clock);
    breaker.reset(); // e.g. the settings changed the backend while a call ran
    QVERIFY(probe.wait(5000));
    QCOMPARE(stepsOf(probe.outcome().attempts), (QStringList{"TimedOut +10ms", "TimedOut"}));
    QCOMPARE(probe.outcome().result.code, ResultCode::ToolTimeout);
    QVERIFY(spinUntil([&] { return executor.abandonedBodies() == 0; }));
}

void tst_ExecutorBreaker::budgetRefusalStopsRetries_data()
{
    QTest::addColumn<QString>("script");
    QTest::addColumn<int>("budget");
    QTest::addColumn<QStringList>("steps");
    QTest::addColumn<ResultCode::Code>("code");

    QTest::newRow("transient, budget 0") << "transient" << 0 << QStringList{"TransientFailure"}
                                         << ResultCode::ToolUnavailable;
    QTest::newRow("transient, budget 1")
        << "transient" << 1 << QStringList{"TransientFailure +10ms", "TransientFailure"}
        << ResultCode::ToolUnavailable;
    QTest::newRow("transient, budget 5")
        << "transient" << 5
        << QStringList{"TransientFailure +10ms", "TransientFailure +20ms", "TransientFailure"}
        << ResultCode::ToolUnavailable;
    QTest::newRow("timeouts, budget 0") << "hang" << 0 << QStringList{"TimedOut"}
                                        << ResultCode::ToolTimeout;
    QTest::newRow("timeouts, budget 1") << "hang" << 1 << QStringList{"TimedOut +10ms", "TimedOut"}
                                        << ResultCode::ToolTimeout;
    QTest::newRow("success takes nothing") << "succeed" << 0 << QStringList{"Succeeded"}
                                           << ResultCode::Ok;
}

void tst_ExecutorBreaker::budgetRefusalStopsRetries()
{
    QFETCH(QString, script);
    QFETCH(int, budget);
    QFETCH(QStringList, steps);
    QFETCH(ResultCode::Code, code);

    auto tool = scriptedTool(script);
    ToolExecutor executor(optionsWith(2));
    EventLog events(&executor);
    ToolCallRequest request = requestFor(tool);
    request.budget = std::make_shared<RetryBudget>(budget);
    bool ok = false;
    const ToolCallOutcome outcome = run(executor, request, &ok);
    QVERIFY(ok);
    QCOMPARE(stepsOf(outcome.attempts), steps);
    QCOMPARE(events.of(outcome.callId), eventsFor(steps));
    QCOMPARE(outcome.result.code, code);
    QCOMPARE(outcome.retries, int(steps.size()) - 1);
    QCOMPARE(request.budget->used(RetryBudget::Layer::Tool), outcome.retries);
    QCOMPARE(request.budget->used(RetryBudget::Layer::Model), 0);
    QCOMPARE(tool->calls(), int(steps.size()));
    QVERIFY(spinUntil([&] { return executor.abandonedBodies() == 0; }));
}

void tst_ExecutorBreaker::budgetIsSharedByCalls()
{
    // Three calls of a tool that always fails transiently would retry 6 times; the turn
    // allows 4 in all, whoever asks first.
    auto tool = scriptedTool(QStringLiteral("transient"));
    // The attempts fail at once; a roomy timeout keeps a slow start (TSan's, a loaded machine)
    // from turning one of them into a timeout, which this test is not about.
    RetryPolicy policy = shortPolicy();
    policy.attemptTimeout = 2s;
    ToolExecutor executor(optionsWith(2));
    auto budget = std::make_shared<RetryBudget>(4);
    QElapsedTimer clock;
    clock.start();
    std::vector<std::unique_ptr<CallProbe>> probes;
    for (int i = 0; i < 3; ++i) {
        ToolCallRequest request = requestFor(tool, policy);
        request.budget = budget;
        probes.push_back(std::make_unique<CallProbe>(executor.execute(request), clock));
    }
    int retries = 0;
    int attempts = 0;
    for (const auto &probe : probes) {
        QVERIFY(probe->wait(5000));
        QCOMPARE(probe->outcome().result.code, ResultCode::ToolUnavailable);
        retries += probe->outcome().retries;
        attempts += int(probe->outcome().attempts.size());
    }
    QCOMPARE(retries, 4);
    QCOMPARE(attempts, 3 + 4);
    QCOMPARE(budget->used(RetryBudget::Layer::Tool), 4);
    QCOMPARE(budget->remaining(), 0);
    QCOMPARE(tool->calls(), 7);
}

void tst_ExecutorBreaker::turnDeadlineCapsTheCall()
{
    // The policy would allow 3 x 1 s; the turn (its budget, with retries to spare) has 80 ms
    // left.
    RetryPolicy policy = shortPolicy();
    policy.attemptTimeout = 1s;
    auto tool = scriptedTool(QStringLiteral("hang"));
    ToolExecutor executor(optionsWith(2));
    ToolCallRequest request = requestFor(tool, policy);
    request.budget = std::make_shared<RetryBudget>(8, QDeadlineTimer(80, Qt::PreciseTimer));
    QElapsedTimer clock;
    clock.start();
    CallProbe probe(executor.execute(request), clock);
    QVERIFY(probe.wait(5000));
    const ToolCallOutcome &outcome = probe.outcome();
    QCOMPARE(stepsOf(outcome.attempts), QStringList{"TimedOut"});
    QCOMPARE(outcome.result.code, ResultCode::ToolTimeout);
    QVERIFY2(outcome.attempts.first().durationMs >= 75,
             qPrintable(QString::number(outcome.attempts.first().durationMs)));
    QVERIFY2(probe.deliveredMs() <= 80 + kSlackMs,
             qPrintable(QString::number(probe.deliveredMs())));
    QVERIFY(spinUntil([&] { return executor.abandonedBodies() == 0; }));

    // A turn deadline later than the policy's changes nothing.
    RetryPolicy quick = shortPolicy();
    quick.maxRetries = 0;
    ToolCallRequest relaxed = requestFor(tool, quick);
    relaxed.budget = std::make_shared<RetryBudget>(8, QDeadlineTimer(60000));
    CallProbe second(executor.execute(relaxed), clock);
    QVERIFY(second.wait(5000));
    QCOMPARE(stepsOf(second.outcome().attempts), QStringList{"TimedOut"});
    QVERIFY2(second.outcome().attempts.first().durationMs <= 40 + kSlackMs / 2,
             qPrintable(QString::number(second.outcome().attempts.first().durationMs)));
    QVERIFY(spinUntil([&] { return executor.abandonedBodies() == 0; }));
}

void tst_ExecutorBreaker::expiredTurnDeadlineRunsNothing()
{
    auto tool = scriptedTool(QStringLiteral("succeed"));
    ToolExecutor executor(optionsWith(2));
    ToolCallRequest request = requestFor(tool);
    request.budget = std::make_shared<RetryBudget>(8, QDeadlineTimer(0));
    const QFuture<ToolCallOutcome> future = executor.execute(request);
    QVERIFY(future.isFinished());
    QCOMPARE(future.result().result.code, ResultCode::ToolTimeout);
    QVERIFY(future.result().attempts.isEmpty());
    QCOMPARE(tool->calls(), 0);
}

// The turn's clock stands still while a write waits for the staff member: the deadline moves
// by exactly the pause, no more.
void tst_ExecutorBreaker::extendingTheDeadlineMovesItByThePause()
{
    const QDeadlineTimer start(std::chrono::milliseconds(60'000), Qt::PreciseTimer);
    RetryBudget budget(8, start);
    budget.extendDeadline(std::chrono::milliseconds(1'500));
    QCOMPARE(budget.deadline().deadlineNSecs() - start.deadlineNSecs(), qint64(1'500'000'000));
    QCOMPARE(budget.deadline().timerType(), Qt::PreciseTimer);
    QVERIFY(budget.deadline().remainingTime() > 60'000);
    QVERIFY(budget.deadline().remainingTime() <= 61'500);
    budget.extendDeadline(std::chrono::milliseconds(0)); // nothing to add
    QCOMPARE(budget.deadline().deadlineNSecs() - start.deadlineNSecs(), qint64(1'500'000'000));

    RetryBudget unbounded(8);
    unbounded.extendDeadline(std::chrono::milliseconds(10));
    QVERIFY(unbounded.deadline().isForever());
}

// What a tool that asks someone on an attempt's behalf passes on (an MCP server's question):
// when the executor gives up on the attempt, its timeout cut short by the budget's deadline.
// Without a budget there is no turn, and only the policy's timeout.
void tst_ExecutorBreaker::anAttemptIsToldWhenItIsGivenUp_data()
{
    QTest::addColumn<int>("turnLeftMs"); // -1: no budget
    QTest::addColumn<int>("lowestMs");
    QTest::addColumn<int>("highestMs");
    QTest::newRow("no budget: the attempt timeout") << -1 << 1000 - kSlackMs << 1000;
    QTest::newRow("a budget with time to spare") << 60'000 << 1000 - kSlackMs << 1000;
    QTest::newRow("the budget's deadline first") << 300 << 1 << 300;
}

void tst_ExecutorBreaker::anAttemptIsToldWhenItIsGivenUp()
{
    QFETCH(int, turnLeftMs);
    QFETCH(int, lowestMs);
    QFETCH(int, highestMs);
    std::atomic<qint64> toldLeftMs{-2};
    auto tool = std::make_shared<ScriptedTool>(
        QStringLiteral("orderStatus"), [&toldLeftMs](const AttemptContext &ctx) {
            toldLeftMs = ctx.deadline.isForever() ? -1 : ctx.deadline.remainingTime();
            return AttemptResult::completed(okResult());
        });
    RetryPolicy policy = shortPolicy();
    policy.attemptTimeout = 1s;
    ToolExecutor executor(optionsWith(2));
    ToolCallRequest request = requestFor(tool, policy);
    if (turnLeftMs >= 0)
        request.budget = std::make_shared<RetryBudget>(
            8, QDeadlineTimer(turnLeftMs, Qt::PreciseTimer));
    bool ok = false;
    const ToolCallOutcome outcome = run(executor, request, &ok);
    QVERIFY(ok);
    QCOMPARE(outcome.result.code, ResultCode::Ok);
    QVERIFY2(toldLeftMs >= lowestMs && toldLeftMs <= highestMs,
             qPrintable(QString::number(toldLeftMs)));
}

// The budget is the deadline's one owner: what the turn's clock gave back to it (a pause for
// staff) before the call starts is what the call gets, with nothing else to tell the executor.
void tst_ExecutorBreaker::theBudgetsDeadlineIsReadWhenTheCallStarts()
{
    auto tool = scriptedTool(QStringLiteral("succeed"));
    ToolExecutor executor(optionsWith(2));
    auto budget = std::make_shared<RetryBudget>(8, QDeadlineTimer(0, Qt::PreciseTimer));
    ToolCallRequest request = requestFor(tool);
    request.budget = budget;
    bool ok = false;
    ToolCallOutcome outcome = run(executor, request, &ok);
    QVERIFY(ok);
    QCOMPARE(outcome.result.code, ResultCode::ToolTimeout); // the turn's time is up
    QCOMPARE(tool->calls(), 0);

    budget->extendDeadline(60s); // staff read a confirmation for a minute
    outcome = run(executor, request, &ok);
    QVERIFY(ok);
    QCOMPARE(outcome.result.code, ResultCode::Ok);
    QCOMPARE(stepsOf(outcome.attempts), QStringList{"Succeeded"});
    QCOMPARE(tool->calls(), 1);
}

QTEST_GUILESS_MAIN(tst_ExecutorBreaker)
#include "tst_executorbreaker.moc"
