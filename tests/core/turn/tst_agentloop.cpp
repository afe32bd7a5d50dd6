#include "agentdoubles.h"
#include "sanitizerbuild.h"
#include "supportsimprocess.h"
#include "throwawaycluster.h"
#include "core/turn/agentloop.h"
#include "core/turn/conversationwindow.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/runtimetestseam.h"
#include "core/faults/faultplan.h"
#include "core/ledger/idempotencyledger.h"
#include "core/ledger/ledgeropening.h"
#include "core/ledger/requesthash.h"
#include "core/resilience/circuitbreaker.h"
#include "core/resilience/toolexecutor.h"
#include "core/tools/toolregistry.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QJsonDocument>
#include <QPointer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <atomic>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

RetryPolicy fastPolicy()
{
    RetryPolicy policy;
    policy.attemptTimeout = std::chrono::milliseconds(200);
    policy.initialDelay = std::chrono::milliseconds(5);
    policy.maxDelay = std::chrono::milliseconds(10);
    return policy;
}

// A tool whose body has a bug: it throws, with internal details in the message.
class ThrowingTool final : public AgentTool
{
public:
    ToolDescriptor descriptor() const override
    {
        ToolDescriptor descriptor;
        descriptor.name = QStringLiteral("queryOrderStatus");
        descriptor.description = QStringLiteral("throws");
        descriptor.parameters = QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}};
        return descriptor;
    }
    std::optional<ToolResult> precheck(const QJsonObject &, const TrustedContext &) const override
    {
        return std::nullopt;
    }
    AttemptResult attempt(const QJsonObject &, const TrustedContext &,
                          const AttemptContext &) const override
    {
        throw std::runtime_error("SELECT * FROM orders -- db at 10.0.0.5 refused");
    }
};

} // namespace

class tst_AgentLoop : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void multiIntentQuestionRunsToolsInParallel();
    void chineseLogisticsQuestion();
    void partialSuccessKeepsTheSuccessfulResult();
    void invalidOrderIdIsReportedNotRun();
    void operationIdsComeFromTheApp();
    void attemptEventsReachTheCards();
    void cancellationReachesRunningTools();
    void aFailingModelFailsTheTurn();
    void aFaultedOfflineModelFallsBackToTheOfflineModel();
    void faultsChangeBetweenTurns();
    void conversationContinuesAcrossTurns();
    void theTurnDeadlineStopsEverything();
    void attemptsAreCountedPerLayer();
    void aFailingRouteOpensOnlyItsOwnBreaker_data();
    void aFailingRouteOpensOnlyItsOwnBreaker();

    void malformedArgumentsAndUnknownToolsDoNotRun();
    void aBugInAToolFailsTheTurnWithAnIncident();
    void writesRunOnlyAfterConfirmation_data();
    void writesRunOnlyAfterConfirmation();
    void anInvalidWriteIsNotOfferedForConfirmation();
    void theTurnDeadlineWaitsForTheStaffMember();
    void theLedgerDecidesWhetherAWriteRuns_data();
    void theLedgerDecidesWhetherAWriteRuns();
    void toolRoundsAreCapped();
    void aWriteThatMayHaveBeenMadeIsNotReportedAsNotMade_data();
    void aWriteThatMayHaveBeenMadeIsNotReportedAsNotMade();
    void aWriteAnsweredUnknownIsNotABusinessAnswer();
    void aWriteWhoseLedgerStopsMidWriteIsRecordedWhenItIsBack();
    void theWindowKeepsWholeTurnsNewestFirst();
    void aLongConversationSendsOnlyWhatFits();

private:
    void startRuntime(const QByteArray &faults = {}, std::optional<RetryPolicy> policy = {},
                      const QString &backendUrl = {}, bool fallbackToOffline = true);
    TurnResult ask(const QString &question);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<AgentRuntime> m_runtime;
};

void tst_AgentLoop::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void tst_AgentLoop::cleanup()
{
    m_runtime.reset();
    m_dir.reset();
}

void tst_AgentLoop::startRuntime(const QByteArray &faults, std::optional<RetryPolicy> policy,
                                 const QString &backendUrl, bool fallbackToOffline)
{
    RuntimeOptions options;
    options.dataDirectory = m_dir->path();
    options.model.fallbackToOffline = fallbackToOffline;
    options.toolPolicy = policy.value_or(fastPolicy());
    if (!backendUrl.isEmpty())
        options.backend = {BackendOptions::Kind::Http, backendUrl};
    if (!faults.isEmpty()) {
        QFile plan(m_dir->filePath(QStringLiteral("faults.json")));
        QVERIFY(plan.open(QIODevice::WriteOnly));
        plan.write(faults);
        options.faultPlanFile = plan.fileName();
    }
    m_runtime = std::make_unique<AgentRuntime>(options);
    QSignalSpy ready(m_runtime.get(), &AgentRuntime::ready);
    m_runtime->start();
    QVERIFY(ready.wait(10'000));
}

TurnResult tst_AgentLoop::ask(const QString &question)
{
    AgentLoop *loop = m_runtime->agentLoop();
    QSignalSpy finished(loop, &AgentLoop::turnFinished);
    const QString requestId = loop->ask(question);
    if (requestId.isEmpty())
        qFatal("the loop refused the question");
    if (!finished.wait(10'000))
        qFatal("the turn did not finish");
    const auto result = finished.first().first().value<TurnResult>();
    if (result.requestId != requestId)
        qFatal("finished another turn");
    return result;
}

void tst_AgentLoop::multiIntentQuestionRunsToolsInParallel()
{
    startRuntime();
    QSignalSpy started(m_runtime->agentLoop(), &AgentLoop::toolCallStarted);
    const TurnResult turn = ask(QStringLiteral("Where is order A1001 and is SKU-200 in stock?"));
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(turn.model, QStringLiteral("offline-demo"));
    QCOMPARE(turn.toolRounds, 1);
    QCOMPARE(turn.toolCalls.size(), 2);
    QCOMPARE(turn.toolCalls[0].name, QStringLiteral("queryLogistics"));
    QCOMPARE(turn.toolCalls[1].name, QStringLiteral("queryInventory"));
    for (const ToolCallRecord &call : turn.toolCalls) {
        QVERIFY(call.result.success);
        QCOMPARE(call.attempts.size(), 1);
        QCOMPARE(call.attempts[0].outcome, AttemptOutcome::Succeeded);
    }
    // Both were started before either finished: they ran as one parallel round.
    QCOMPARE(started.size(), 2);
    QVERIFY(turn.answer.contains(QLatin1String("Shanghai Pudong Hub")));
    QVERIFY(turn.answer.contains(QLatin1String("SKU-200")));
    QVERIFY(!turn.isPartialSuccess());
}

void tst_AgentLoop::chineseLogisticsQuestion()
{
    startRuntime();
    const TurnResult turn = ask(QStringLiteral("查询订单 A1001 的物流位置"));
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(turn.toolCalls.size(), 1);
    QCOMPARE(turn.toolCalls[0].name, QStringLiteral("queryLogistics"));
    QCOMPARE(turn.toolCalls[0].arguments.value(QLatin1String("orderId")).toString(),
             QStringLiteral("A1001"));
    // The tool answered in the staff member's language, and so did the model.
    QCOMPARE(turn.toolCalls[0].result.message, QStringLiteral("物流查询成功"));
    QVERIFY(turn.answer.contains(QLatin1String("SF10010001")));
    QVERIFY(turn.answer.contains(QStringLiteral("订单")));
}

void tst_AgentLoop::partialSuccessKeepsTheSuccessfulResult()
{
    startRuntime(R"({"tools": {"queryLogistics": {"transientFailures": 99}}})");
    const TurnResult turn = ask(QStringLiteral("Where is order A1001 and is SKU-200 in stock?"));
    QCOMPARE(turn.status, TurnStatus::Completed);
    QVERIFY(turn.isPartialSuccess());
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::ToolUnavailable);
    QCOMPARE(turn.toolCalls[0].attempts.size(), 3);
    QVERIFY(turn.toolCalls[1].result.success);
    QVERIFY(turn.answer.contains(QLatin1String("SKU-200")));
    QVERIFY(turn.answer.contains(QLatin1String("temporarily unavailable")));
    // Nothing about the failed lookup is made up.
    QVERIFY(!turn.answer.contains(QLatin1String("Shanghai")));
    QVERIFY(!turn.answer.contains(QLatin1String("SF10010001")));
}

void tst_AgentLoop::invalidOrderIdIsReportedNotRun()
{
    startRuntime();
    // "a1001" is read as A1001 now (issue #24 §5); too few digits stay as written.
    const TurnResult turn = ask(QStringLiteral("where is order a12?"));
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(turn.toolCalls.size(), 1);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::InvalidArgument);
    QCOMPARE(turn.toolCalls[0].attempts.size(), 0);
}

void tst_AgentLoop::operationIdsComeFromTheApp()
{
    startRuntime();
    const SessionContext session = m_runtime->agentLoop()->session();
    QCOMPARE(session.userId, QStringLiteral("u-1001"));
    QCOMPARE(session.tenantId, QStringLiteral("t-acme"));
    const TurnResult turn = ask(QStringLiteral("A1001 的订单状态和物流"));
    QCOMPARE(turn.toolCalls.size(), 2);
    for (const ToolCallRecord &call : turn.toolCalls) {
        const QString expected = QStringLiteral("%1:%2:%3:%4:%5")
                                     .arg(session.tenantId, session.conversationId,
                                          turn.requestId, call.name)
                                     .arg(call.index);
        QCOMPARE(call.operationId, expected);
        QVERIFY(call.toolCallId.startsWith(QLatin1String("call_")));
    }
}

void tst_AgentLoop::attemptEventsReachTheCards()
{
    startRuntime(R"({"tools": {"queryLogistics": {"transientFailures": 2}}})");
    QSignalSpy updates(m_runtime->agentLoop(), &AgentLoop::toolCallUpdated);
    const TurnResult turn = ask(QStringLiteral("where is A1001"));
    QCOMPARE(turn.toolCalls.size(), 1);
    const ToolCallRecord &call = turn.toolCalls[0];
    QVERIFY(call.result.success);
    QCOMPARE(call.attempts.size(), 3);
    QCOMPARE(call.attempts[0].outcome, AttemptOutcome::TransientFailure);
    QCOMPARE(call.attempts[0].nextDelayMs, 5);
    QCOMPARE(call.attempts[1].outcome, AttemptOutcome::TransientFailure);
    QCOMPARE(call.attempts[1].nextDelayMs, 10);
    QCOMPARE(call.attempts[2].outcome, AttemptOutcome::Succeeded);
    // running, then three starts and three ends
    QCOMPARE(updates.size(), 7);
    const auto last = updates.last().at(1).value<ToolCallRecord>();
    QCOMPARE(last.attempts.size(), 3);
}

void tst_AgentLoop::cancellationReachesRunningTools()
{
    RetryPolicy slow = fastPolicy();
    slow.attemptTimeout = std::chrono::milliseconds(60'000);
    startRuntime(R"({"tools": {"queryLogistics": {"hang": true}}})", slow);
    AgentLoop *loop = m_runtime->agentLoop();
    ToolExecutor *executor = RuntimeTestSeam::executor(*m_runtime);
    QSignalSpy started(loop, &AgentLoop::toolCallUpdated);
    QSignalSpy finished(loop, &AgentLoop::turnFinished);
    loop->ask(QStringLiteral("where is A1001"));
    QVERIFY(started.wait(5'000)); // the hung attempt is running
    QElapsedTimer running;
    running.start();
    QCOMPARE(executor->activeCalls(), 1);
    QTRY_VERIFY(running.elapsed() >= 50); // long enough for "0 ms" to be visibly wrong
    const qint64 cancelledAfterMs = running.elapsed();
    loop->cancel();
    // Over once its final checkpoint is on disk.
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 5'000);
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.status, TurnStatus::Cancelled);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::Cancelled);
    // The attempt it cut short is on the record with its outcome and time (not "0 ms").
    const ToolCallRecord &call = turn.toolCalls[0];
    QCOMPARE(call.attempts.size(), 1);
    QCOMPARE(call.attempts[0].outcome, AttemptOutcome::Cancelled);
    QVERIFY(call.attempts[0].made);
    QVERIFY2(call.attempts[0].durationMs >= cancelledAfterMs - 1,
             qPrintable(QStringLiteral("%1 < %2").arg(call.attempts[0].durationMs)
                            .arg(cancelledAfterMs)));
    QVERIFY(call.totalMs >= call.attempts[0].startedMs + call.attempts[0].durationMs);
    const QJsonObject attempt = turn.toJson().value(QLatin1String("toolCalls")).toArray()
                                    .at(0).toObject().value(QLatin1String("attempts"))
                                    .toArray().at(0).toObject();
    QCOMPARE(attempt.value(QLatin1String("outcome")).toString(), QStringLiteral("cancelled"));
    QCOMPARE(attempt.value(QLatin1String("ms")).toInteger(), call.attempts[0].durationMs);
    QVERIFY(!loop->isBusy());
    // The hung body saw its token and gave its thread back.
    QTRY_COMPARE_WITH_TIMEOUT(executor->activeCalls(), 0, 5'000);
    QTRY_COMPARE_WITH_TIMEOUT(executor->abandonedBodies(), 0, 5'000);
    // and the loop takes the next question
    QVERIFY(!loop->ask(QStringLiteral("is SKU-100 in stock")).isEmpty());
    QVERIFY(finished.wait(5'000));
    QCOMPARE(finished.last().first().value<TurnResult>().status, TurnStatus::Completed);
}

void tst_AgentLoop::aFailingModelFailsTheTurn()
{
    // Without the offline fallback: with it, the un-faulted offline model would answer (the
    // next test).
    startRuntime(R"({"model": {"unavailable": true}})", {}, {}, false);
    const TurnResult turn = ask(QStringLiteral("where is A1001"));
    QCOMPARE(turn.status, TurnStatus::Failed);
    QVERIFY(turn.toolCalls.isEmpty());
    QVERIFY(turn.answer.contains(QLatin1String("temporarily unavailable")));
}

// The faulted offline model stands in for a provider: its quota is gone, and the un-faulted
// offline model after it answers, with no network at all.
void tst_AgentLoop::aFaultedOfflineModelFallsBackToTheOfflineModel()
{
    startRuntime(R"({"model": {"quotaExhausted": true}})");
    const TurnResult turn = ask(QStringLiteral("where is A1001"));
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(turn.toolCalls.size(), 1);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::Ok);
    QVERIFY(turn.fallbackHops >= 1);
    QCOMPARE(turn.modelRetryCount, 0); // a quota is never retried
    QCOMPARE(turn.counters().value(QLatin1String("fallback_model_count")).toInt(),
             turn.fallbackHops);
    // The primary link has a breaker of its own.
    QVERIFY(RuntimeTestSeam::breakers(*m_runtime)->find(QStringLiteral("model:offline")));
}

// The fault panel's change applies to the next turn, without a restart.
void tst_AgentLoop::faultsChangeBetweenTurns()
{
    startRuntime({}, {}, {}, false);
    QVERIFY(!m_runtime->faults()->hasActiveFaults());
    const TurnResult healthy = ask(QStringLiteral("where is A1001"));
    QCOMPARE(healthy.status, TurnStatus::Completed);
    QCOMPARE(healthy.toolCalls.size(), 1);
    QCOMPARE(healthy.toolCalls[0].result.code, ResultCode::Ok);

    QSignalSpy changed(m_runtime->faults(), &FaultControl::faultsChanged);
    QString error;
    auto plan = FaultPlan::fromJson(R"({"backend": {"accessDenied": true}})", &error,
                                    m_runtime->faults()->knownTools());
    QVERIFY2(plan, qPrintable(error));
    m_runtime->faults()->setPlan(*plan);
    QCOMPARE(changed.size(), 1);
    QVERIFY(m_runtime->faults()->hasActiveFaults());
    const TurnResult denied = ask(QStringLiteral("where is A1001"));
    QCOMPARE(denied.toolCalls.size(), 1);
    QCOMPARE(denied.toolCalls[0].result.code, ResultCode::ToolAccessDenied);

    // Now the model: two 429s, each retried after its Retry-After, then the answer.
    plan = FaultPlan::fromJson(R"({"model": {"rateLimited": 2, "retryAfterMs": 20}})", &error);
    QVERIFY2(plan, qPrintable(error));
    m_runtime->faults()->setPlan(*plan);
    const TurnResult limited = ask(QStringLiteral("where is A1001"));
    QCOMPARE(limited.status, TurnStatus::Completed);
    QCOMPARE(limited.toolCalls.size(), 1);
    QCOMPARE(limited.toolCalls[0].result.code, ResultCode::Ok);
    QCOMPARE(limited.modelRetryCount, 2 * limited.modelCalls);
    QCOMPARE(limited.fallbackHops, 0);

    m_runtime->faults()->clear();
    QCOMPARE(changed.size(), 3);
    QVERIFY(!m_runtime->faults()->hasActiveFaults());
    const TurnResult again = ask(QStringLiteral("where is A1001"));
    QCOMPARE(again.toolCalls.size(), 1);
    QCOMPARE(again.toolCalls[0].result.code, ResultCode::Ok);
    QCOMPARE(again.modelRetryCount, 0);
}

void tst_AgentLoop::conversationContinuesAcrossTurns()
{
    startRuntime();
    const TurnResult first = ask(QStringLiteral("where is A1001"));
    const TurnResult second = ask(QStringLiteral("and is SKU-300 in stock?"));
    QCOMPARE(first.status, TurnStatus::Completed);
    QCOMPARE(second.status, TurnStatus::Completed);
    QVERIFY(first.requestId != second.requestId);
    QCOMPARE(second.toolCalls.size(), 1);
    QCOMPARE(second.toolCalls[0].name, QStringLiteral("queryInventory"));
    QCOMPARE(second.toolCalls[0].result.data.toObject().value(QLatin1String("status")).toString(),
             QStringLiteral("OUT_OF_STOCK"));
}

void tst_AgentLoop::theTurnDeadlineStopsEverything()
{
    RetryPolicy slow = fastPolicy();
    slow.attemptTimeout = std::chrono::milliseconds(60'000);
    startRuntime(R"({"tools": {"queryLogistics": {"hang": true}}})", slow);
    AgentLoop *loop = m_runtime->agentLoop();
    loop->setTurnLimits({std::chrono::milliseconds(300), 8});
    QElapsedTimer clock;
    clock.start();
    const TurnResult turn = ask(QStringLiteral("Where is order A1001 and is SKU-200 in stock?"));
    QVERIFY(clock.elapsed() >= 300);
    QVERIFY2(clock.elapsed() < 5'000, "the deadline did not stop the turn");
    QCOMPARE(turn.status, TurnStatus::Failed);
    QVERIFY(turn.answer.contains(QLatin1String("longer than 0.3 s")));
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::ToolTimeout);
    // The attempt the deadline stopped is recorded with its time: stopped by the loop's
    // deadline (DeadlineReached) or, if the executor's own copy of it fired first, TimedOut.
    const ToolCallRecord &stopped = turn.toolCalls[0];
    QCOMPARE(stopped.attempts.size(), 1);
    QVERIFY2(stopped.attempts[0].outcome == AttemptOutcome::DeadlineReached
                 || stopped.attempts[0].outcome == AttemptOutcome::TimedOut,
             qPrintable(attemptOutcomeName(stopped.attempts[0].outcome)));
    // It ran until the stop: its time is not "0 ms", and it ends where the call ended. (How
    // long after the turn's start the call began depends on the machine's load.)
    const AttemptRecord &attempt = stopped.attempts[0];
    QVERIFY2(attempt.durationMs > 0 && attempt.startedMs + attempt.durationMs
                                           >= stopped.totalMs - 5,
             qPrintable(QStringLiteral("%1 + %2 of %3 ms").arg(attempt.startedMs)
                            .arg(attempt.durationMs).arg(stopped.totalMs)));
    QVERIFY(stopped.totalMs >= attempt.durationMs);
    QVERIFY(turn.toolCalls[1].result.success); // finished before the deadline: kept
    QTRY_COMPARE_WITH_TIMEOUT(RuntimeTestSeam::executor(*m_runtime)->activeCalls(), 0, 5'000);
}

void tst_AgentLoop::attemptsAreCountedPerLayer()
{
    startRuntime(R"({"tools": {"queryLogistics": {"transientFailures": 2}}})");
    const TurnResult turn = ask(QStringLiteral("Where is order A1001 and is SKU-200 in stock?"));
    QCOMPARE(turn.modelCalls, 2);
    QCOMPARE(turn.modelAttempts, 2);
    QCOMPARE(turn.modelRetries(), 0);
    QCOMPARE(turn.toolAttempts(), 4);
    QCOMPARE(turn.toolRetries(), 2);
    const QJsonObject json = turn.toJson();
    QCOMPARE(json.value(QLatin1String("attemptsByLayer")).toObject(),
             (QJsonObject{{QStringLiteral("model"), 2}, {QStringLiteral("tool"), 4}}));
    QCOMPARE(json.value(QLatin1String("counters")).toObject()
                 .value(QLatin1String("tool_retry_count")).toInt(), 2);
}

void tst_AgentLoop::aFailingRouteOpensOnlyItsOwnBreaker_data()
{
    QTest::addColumn<bool>("sim");
    QTest::newRow("embedded store, fault plan") << false;
    QTest::newRow("support-sim, logistics answers 503") << true;
}

// One breaker per backend route (DESIGN.md; README's logistics-down demo): once logistics'
// breaker is open, logistics fails fast and says so, while inventory and createTicket on the
// same backend still run and succeed.
void tst_AgentLoop::aFailingRouteOpensOnlyItsOwnBreaker()
{
    QFETCH(bool, sim);
    if (sim && threadSanitized)
        QSKIP(childProcessUnderTsan);
    Testing::SupportSimProcess simulator;
    if (sim) {
        QString error;
        QVERIFY2(simulator.start({QStringLiteral("--data-dir"),
                                  m_dir->filePath(QStringLiteral("sim"))}, &error),
                 qPrintable(error));
        QVERIFY2(simulator.putFaults(R"({"routes":{"logistics":{"status":503}}})", &error),
                 qPrintable(error));
        startRuntime({}, {}, simulator.baseUrl().toString());
    } else {
        startRuntime(R"({"tools": {"queryLogistics": {"transientFailures": 99}}})");
    }
    CircuitBreakerRegistry *breakers = RuntimeTestSeam::breakers(*m_runtime);
    QSignalSpy changes(breakers, &CircuitBreakerRegistry::stateChanged);
    // Default window: at least 10 calls, half of them failed. Three turns make 9 failures.
    for (int turn = 0; turn < 3; ++turn)
        QCOMPARE(ask(QStringLiteral("where is A1001")).toolCalls[0].attempts.size(), 3);
    QCOMPARE(changes.size(), 0);

    const TurnResult opening = ask(QStringLiteral("where is A1001"));
    QCOMPARE(opening.breakerOpens, 1);
    QCOMPARE(changes.size(), 1);
    const QString logistics = changes.first().at(0).toString();
    QVERIFY2(logistics.startsWith(QLatin1String("logistics:")), qPrintable(logistics));
    QCOMPARE(breakers->openCount(), 1);
    // The attempt that opened it failed; the retry after it was refused by the breaker.
    const ToolCallRecord &call = opening.toolCalls[0];
    QCOMPARE(call.result.code, ResultCode::ToolUnavailable);
    QCOMPARE(call.attempts.last().outcome, AttemptOutcome::CircuitOpen);
    QCOMPARE(call.attemptsMade(), 1);
    QVERIFY(call.circuitCooldownLeftMs > 0);

    // Logistics now fails fast, and says why: circuit open, with the cool-down left.
    const TurnResult fast = ask(QStringLiteral("where is A1001"));
    QCOMPARE(fast.status, TurnStatus::Completed);
    QCOMPARE(fast.toolCalls[0].result.code, ResultCode::ToolUnavailable);
    QCOMPARE(fast.toolCalls[0].attempts.size(), 0);
    const qint64 cooldown = breakers->defaults().openCooldown.count();
    QVERIFY(fast.toolCalls[0].circuitCooldownLeftMs > 0);
    QVERIFY(fast.toolCalls[0].circuitCooldownLeftMs <= cooldown);
    const QJsonObject fastCall =
        fast.toJson().value(QLatin1String("toolCalls")).toArray().at(0).toObject();
    QCOMPARE(fastCall.value(QLatin1String("reason")).toString(), QStringLiteral("circuit_open"));
    QCOMPARE(fastCall.value(QLatin1String("circuitCooldownLeftMs")).toInteger(),
             fast.toolCalls[0].circuitCooldownLeftMs);
    QVERIFY(fast.answer.contains(QLatin1String("temporarily unavailable")));
    QCOMPARE(fast.toJson().value(QLatin1String("counters")).toObject()
                 .value(QLatin1String("circuit_breaker_open_count")).toInt(), 0);

    // The other routes of the same backend still answer.
    const TurnResult stock = ask(QStringLiteral("is SKU-100 in stock?"));
    QCOMPARE(stock.toolCalls.size(), 1);
    QCOMPARE(stock.toolCalls[0].name, QStringLiteral("queryInventory"));
    QVERIFY(stock.toolCalls[0].result.success);
    QCOMPARE(stock.toolCalls[0].attempts.size(), 1);
    QCOMPARE(stock.toolCalls[0].circuitCooldownLeftMs, qint64(-1));
    QVERIFY(!stock.toJson().value(QLatin1String("toolCalls")).toArray().at(0).toObject()
                 .contains(QLatin1String("reason")));

    AgentLoop *loop = m_runtime->agentLoop();
    connect(loop, &AgentLoop::confirmationRequested, this,
            [loop](const QString &, const ToolCallRecord &write) {
                loop->confirm(write.operationId, true);
            });
    const TurnResult ticket =
        ask(QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken"));
    loop->disconnect(this);
    QCOMPARE(ticket.toolCalls.size(), 1);
    QCOMPARE(ticket.toolCalls[0].name, QStringLiteral("createTicket"));
    QVERIFY2(ticket.toolCalls[0].result.success,
             qPrintable(ticket.toolCalls[0].result.codeName()));
    QCOMPARE(ticket.toolCalls[0].attemptsMade(), 1);

    // Only logistics' breaker ever opened.
    QCOMPARE(changes.size(), 1);
    QCOMPARE(breakers->openCount(), 1);
    for (const QString &dependency : breakers->dependencies()) {
        if (dependency != logistics) {
            QCOMPARE(breakers->find(dependency)->state(), CircuitBreaker::State::Closed);
            QCOMPARE(breakers->find(dependency)->rejectedCount(), 0);
        }
    }
    QVERIFY(breakers->dependencies().size() >= 3); // logistics, inventory, tickets
    if (sim)
        QVERIFY(simulator.stop());
}

void tst_AgentLoop::malformedArgumentsAndUnknownToolsDoNotRun()
{
    startRuntime();
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("queryLogistics"),
                                QStringLiteral("{\"orderId\": \"A1001\"")},
                               {QStringLiteral("c2"), QStringLiteral("refundEverything"),
                                QStringLiteral("{}")},
                               {QStringLiteral("c3"), QStringLiteral("queryInventory"),
                                QStringLiteral("[\"SKU-100\"]")},
                               {QStringLiteral("c4"), QStringLiteral("queryInventory"),
                                QStringLiteral("{\"sku\":\"SKU-100\"}")}})};
    AgentLoop *loop = m_runtime->agentLoop();
    loop->setModel(&model);
    const TurnResult turn = ask(QStringLiteral("anything"));
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(turn.toolCalls.size(), 4);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::InvalidArgument);
    QCOMPARE(turn.toolCalls[0].attempts.size(), 0);
    QCOMPARE(turn.toolCalls[0].rawArguments, QStringLiteral("{\"orderId\": \"A1001\""));
    QCOMPARE(turn.toolCalls[1].result.code, ResultCode::UnknownTool);
    QCOMPARE(turn.toolCalls[2].result.code, ResultCode::InvalidArgument);
    QVERIFY(turn.toolCalls[3].result.success);
    // The model got one tool message per call, answering the model's ids, in order.
    QCOMPARE(model.requests.size(), 2);
    const QList<ChatMessage> &messages = model.requests[1].messages;
    QStringList answered;
    for (const ChatMessage &message : messages) {
        if (message.role == ChatMessage::Role::Tool)
            answered << message.toolCallId;
    }
    QCOMPARE(answered, (QStringList{QStringLiteral("c1"), QStringLiteral("c2"),
                                    QStringLiteral("c3"), QStringLiteral("c4")}));
}

void tst_AgentLoop::aBugInAToolFailsTheTurnWithAnIncident()
{
    ToolRegistry registry;
    registry.add(std::make_shared<ThrowingTool>());
    ToolExecutor executor;
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("queryOrderStatus"),
                                QStringLiteral("{}")}}),
                    ChatResponse{}};
    AgentLoop loop({.model = &model, .tools = &registry, .executor = &executor});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(QStringLiteral("status of A1001"));
    QVERIFY(finished.wait(5'000));
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.status, TurnStatus::Failed);
    QVERIFY(turn.incidentId.startsWith(QLatin1String("INC-")));
    QVERIFY(turn.answer.contains(turn.incidentId));
    QCOMPARE(turn.toolCalls[0].attempts.size(), 1); // never retried
    // The model was not asked again, and nothing internal reached the answer or the export.
    QCOMPARE(model.requests.size(), 1);
    const QString exported = QString::fromUtf8(QJsonDocument(turn.toJson()).toJson());
    for (const char *secret : {"SELECT", "10.0.0.5", "refused", "runtime_error"})
        QVERIFY2(!exported.contains(QLatin1String(secret)), secret);
}

void tst_AgentLoop::writesRunOnlyAfterConfirmation_data()
{
    QTest::addColumn<QString>("answer"); // approve, decline, cancel
    QTest::addColumn<ResultCode::Code>("code");
    QTest::addColumn<int>("runs");
    QTest::newRow("approved") << "approve" << ResultCode::Ok << 1;
    QTest::newRow("declined") << "decline" << ResultCode::ConfirmationDeclined << 0;
    QTest::newRow("turn cancelled while waiting") << "cancel" << ResultCode::Cancelled << 0;
}

void tst_AgentLoop::writesRunOnlyAfterConfirmation()
{
    QFETCH(QString, answer);
    QFETCH(ResultCode::Code, code);
    QFETCH(int, runs);
    ToolRegistry registry;
    auto tool = std::make_shared<RecordingWriteTool>();
    registry.add(tool);
    ToolExecutor executor;
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                QStringLiteral("{\"orderId\":\"A1001\"}")}})};
    const std::unique_ptr<IdempotencyLedger> ledger = openTestLedger(m_dir->path());
    AgentLoop loop(
        {.model = &model, .tools = &registry, .executor = &executor, .ledger = ledger.get()});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    QSignalSpy asked(&loop, &AgentLoop::confirmationRequested);
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(QStringLiteral("create a ticket for A1001"));
    QVERIFY(asked.wait(5'000));
    const auto pending = asked.first().at(1).value<ToolCallRecord>();
    QCOMPARE(pending.state, ToolCallRecord::State::AwaitingConfirmation);
    QCOMPARE(
        pending.arguments, (QJsonObject{{QStringLiteral("orderId"), QStringLiteral("A1001")}}));
    // Nothing runs while the staff member reads the card.
    QVERIFY(!finished.wait(100));
    QCOMPARE(tool->runs.load(), 0);

    if (answer == QLatin1String("cancel"))
        loop.cancel();
    else
        loop.confirm(pending.operationId, answer == QLatin1String("approve"));
    QVERIFY(finished.size() == 1 || finished.wait(5'000));
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.toolCalls[0].result.code, code);
    QCOMPARE(tool->runs.load(), runs);
    // A late or repeated answer changes nothing.
    loop.confirm(pending.operationId, true);
    QCOMPARE(tool->runs.load(), runs);
}

void tst_AgentLoop::theTurnDeadlineWaitsForTheStaffMember()
{
    ToolRegistry registry;
    auto tool = std::make_shared<RecordingWriteTool>();
    registry.add(tool);
    ToolExecutor executor;
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                QStringLiteral("{\"orderId\":\"A1001\"}")}})};
    const std::unique_ptr<IdempotencyLedger> ledger = openTestLedger(m_dir->path());
    AgentLoop loop(
        {.model = &model, .tools = &registry, .executor = &executor, .ledger = ledger.get()});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    loop.setTurnLimits({std::chrono::milliseconds(200), 8});
    QSignalSpy asked(&loop, &AgentLoop::confirmationRequested);
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(QStringLiteral("create a ticket for A1001"));
    QVERIFY(asked.wait(5'000));
    // Reading the card takes longer than the whole turn may: the turn must still be there.
    QVERIFY(!finished.wait(500));
    loop.confirm(asked.first().at(1).value<ToolCallRecord>().operationId, true);
    QVERIFY(finished.wait(5'000));
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::Ok);
    QCOMPARE(tool->runs.load(), 1);
}

void tst_AgentLoop::theLedgerDecidesWhetherAWriteRuns_data()
{
    QTest::addColumn<QString>("earlier"); // what the ledger holds for the operation already
    QTest::addColumn<ResultCode::Code>("code");
    QTest::addColumn<int>("runs");
    QTest::addColumn<int>("hits");
    QTest::addColumn<int>("conflicts");
    QTest::newRow("new operation") << "" << ResultCode::Ok << 1 << 0 << 0;
    QTest::newRow("succeeded before") << "succeeded" << ResultCode::Ok << 0 << 1 << 0;
    QTest::newRow("still processing")
        << "processing" << ResultCode::OperationInProgress << 0 << 0 << 0;
    QTest::newRow("other arguments")
        << "other" << ResultCode::IdempotencyConflict << 0 << 0 << 1;
    // The consoles of a team share the ledger: a newer one may have settled the operation
    // with a code this one does not know. Not run again; kept and reported as it was given.
    QTest::newRow("settled by a newer console")
        << "newer" << ResultCode::Unrecognized << 0 << 1 << 0;
}

void tst_AgentLoop::theLedgerDecidesWhetherAWriteRuns()
{
    QFETCH(QString, earlier);
    QFETCH(ResultCode::Code, code);
    QFETCH(int, runs);
    QFETCH(int, hits);
    QFETCH(int, conflicts);
    ToolRegistry registry;
    auto tool = std::make_shared<RecordingWriteTool>();
    registry.add(tool);
    ToolExecutor executor;
    ScriptedModel model;
    const QJsonObject arguments{{QStringLiteral("orderId"), QStringLiteral("A1001")}};
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                QStringLiteral("{\"orderId\":\"A1001\"}")}})};
    const std::unique_ptr<IdempotencyLedger> ledger = openTestLedger(m_dir->path());
    AgentLoop loop(
        {.model = &model, .tools = &registry, .executor = &executor, .ledger = ledger.get()});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    QSignalSpy asked(&loop, &AgentLoop::confirmationRequested);
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(QStringLiteral("create a ticket for A1001"));
    QVERIFY(asked.wait(5'000));
    const QString operationId = asked.first().at(1).value<ToolCallRecord>().operationId;

    // What an earlier run of the same operation (another console, a crashed process) left.
    const QByteArray hash = earlier == QLatin1String("other")
        ? requestHash(QJsonObject{{QStringLiteral("orderId"), QStringLiteral("A9999")}})
        : requestHash(arguments);
    const ToolResult stored = ToolResult::ok(QStringLiteral("created earlier"),
                                             QJsonObject{{QStringLiteral("ticketId"),
                                                          QStringLiteral("T-000042")}});
    const QJsonObject newer{{QStringLiteral("success"), false},
                            {QStringLiteral("code"), QStringLiteral("TICKET_QUOTA_EXCEEDED")},
                            {QStringLiteral("message"), QStringLiteral("Quota exceeded")},
                            {QStringLiteral("errors"), QJsonArray{}}};
    if (!earlier.isEmpty()) {
        QFuture<LedgerClaim> claim = ledger->begin(operationId, QStringLiteral("createTicket"),
                                                   hash);
        claim.waitForFinished();
        QCOMPARE(claim.result().outcome, LedgerClaim::Outcome::Claimed);
        if (earlier == QLatin1String("succeeded") || earlier == QLatin1String("newer")) {
            const bool succeeded = earlier == QLatin1String("succeeded");
            QFuture<LedgerCompletion> done = ledger->complete(
                operationId, succeeded ? LedgerStatus::Succeeded : LedgerStatus::FailedFinal,
                succeeded ? stored.toJson() : newer);
            done.waitForFinished();
            QVERIFY(done.result().completed());
        }
    }

    loop.confirm(operationId, true);
    QVERIFY(finished.wait(5'000));
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.toolCalls[0].result.code, code);
    QCOMPARE(tool->runs.load(), runs);
    QCOMPARE(turn.idempotencyHits, hits);
    QCOMPARE(turn.idempotencyConflicts, conflicts);
    if (earlier == QLatin1String("succeeded")) // the stored result, as it was
        QCOMPARE(turn.toolCalls[0].result.data.toObject().value(QLatin1String("ticketId"))
                     .toString(),
                 QStringLiteral("T-000042"));
    if (earlier == QLatin1String("newer")) { // byte for byte, and told as not answered
        QCOMPARE(turn.toolCalls[0].result.toJson(), newer);
        QCOMPARE(turn.toJson().value(QLatin1String("toolCalls")).toArray().at(0).toObject()
                     .value(QLatin1String("code")).toString(),
                 QStringLiteral("TICKET_QUOTA_EXCEEDED"));
        QCOMPARE(turn.outcome(), TurnOutcome::Unanswered);
    }
    if (earlier.isEmpty()) { // the new operation is recorded as succeeded
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                QFuture<LedgerLookup> row = ledger->lookup(operationId);
                row.waitForFinished();
                return row.result().row && row.result().row->status == LedgerStatus::Succeeded;
            }(),
            5'000);
    }
}

void tst_AgentLoop::anInvalidWriteIsNotOfferedForConfirmation()
{
    ToolRegistry registry;
    auto tool = std::make_shared<RecordingWriteTool>();
    registry.add(tool);
    ToolExecutor executor;
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                QStringLiteral("{\"orderId\":42}")}})};
    AgentLoop loop({.model = &model, .tools = &registry, .executor = &executor});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    QSignalSpy asked(&loop, &AgentLoop::confirmationRequested);
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(QStringLiteral("create a ticket"));
    QVERIFY(finished.wait(5'000));
    QCOMPARE(asked.size(), 0);
    QCOMPARE(finished.first().first().value<TurnResult>().toolCalls[0].result.code,
             ResultCode::InvalidArgument);
    QCOMPARE(tool->runs.load(), 0);
}

void tst_AgentLoop::toolRoundsAreCapped()
{
    startRuntime();
    ScriptedModel model;
    for (int round = 0; round < 7; ++round) {
        model.script.append(toolCalls({{QStringLiteral("c%1").arg(round),
                                        QStringLiteral("queryInventory"),
                                        QStringLiteral("{\"sku\":\"SKU-100\"}")}}));
    }
    m_runtime->agentLoop()->setModel(&model);
    const TurnResult turn = ask(QStringLiteral("loop forever"));
    QCOMPARE(turn.toolRounds, AgentLoop::maxToolRounds);
    QCOMPARE(turn.toolCalls.size(), AgentLoop::maxToolRounds);
    QCOMPARE(turn.status, TurnStatus::Failed);
    // The last call offered no tools, so a well-behaved model would have had to answer.
    QCOMPARE(model.requests.size(), AgentLoop::maxToolRounds + 1);
    QVERIFY(model.requests.last().tools.isEmpty());
    QVERIFY(!model.requests.first().tools.isEmpty());
}

void tst_AgentLoop::aWriteThatMayHaveBeenMadeIsNotReportedAsNotMade_data()
{
    QTest::addColumn<QString>("retry"); // what becomes of the retry after the timed-out attempt
    QTest::newRow("refused by the open breaker") << "breaker";
    QTest::newRow("fails before it can ask") << "transient";
}

// Found by the soak (tests/soak): the first attempt of a write timed out after sending (the
// backend may have committed it), and its retry never learned the key's status. The call must
// end EXECUTION_STATUS_UNKNOWN, not TOOL_UNAVAILABLE: the ticket may well exist.
void tst_AgentLoop::aWriteThatMayHaveBeenMadeIsNotReportedAsNotMade()
{
    QFETCH(QString, retry);
    ToolRegistry registry;
    auto tool = std::make_shared<FunctionTool>(
        QStringLiteral("createTicket"), true, [](const AttemptContext &context) {
            if (context.attempt == 1) { // sent, then silent past the attempt timeout
                context.cancellation.waitUntilCancelled();
                return AttemptResult::transient(QStringLiteral("cancelled after sending"));
            }
            return AttemptResult::transient(QStringLiteral("503 before the status query"));
        });
    registry.add(tool);
    RetryPolicy policy = fastPolicy();
    policy.attemptTimeout = std::chrono::milliseconds(50);
    policy.maxRetries = 1;
    ToolExecutor executor;
    CircuitBreaker::Options breakerOptions;
    breakerOptions.windowSize = 1;
    breakerOptions.minimumCalls = 1; // the timed-out attempt opens it
    CircuitBreaker breaker(QStringLiteral("tickets"), breakerOptions);
    ScriptedModel model;
    ChatResponse answer;
    answer.content = QStringLiteral("done");
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                QStringLiteral("{\"orderId\":\"A1001\"}")}}),
                    answer};
    const std::unique_ptr<IdempotencyLedger> ledger = openTestLedger(m_dir->path());
    AgentLoop::ToolBreakers breakers;
    if (retry == QLatin1String("breaker"))
        breakers = [&breaker](const QString &) { return &breaker; };
    AgentLoop loop({.model = &model,
                    .tools = &registry,
                    .executor = &executor,
                    .ledger = ledger.get(),
                    .toolBreakers = breakers,
                    .toolPolicies = [&policy](const QString &) { return policy; }});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    connect(&loop, &AgentLoop::confirmationRequested, this,
            [&loop](const QString &, const ToolCallRecord &write) {
                loop.confirm(write.operationId, true);
            });
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(QStringLiteral("create a ticket for A1001"));
    QVERIFY(finished.wait(5'000));
    const auto turn = finished.first().first().value<TurnResult>();
    const ToolCallRecord &call = turn.toolCalls[0];
    QCOMPARE(call.attempts.first().outcome, AttemptOutcome::TimedOut);
    QCOMPARE(call.attempts.last().outcome, retry == QLatin1String("breaker")
                                               ? AttemptOutcome::CircuitOpen
                                               : AttemptOutcome::TransientFailure);
    QCOMPARE(call.result.code, ResultCode::ExecutionStatusUnknown);
    QCOMPARE(turn.unknownExecutionStatus, 1);
    // Retryable: whoever claims it next asks the backend first.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            QFuture<LedgerLookup> row = ledger->lookup(call.operationId);
            row.waitForFinished();
            return row.result().row
                && row.result().row->status == LedgerStatus::FailedRetryable;
        }(),
        5'000);
}

// The tool itself answers that nobody knows whether the ticket was made (its answer was lost and
// the status query could not tell): the attempt says so in the turn and in --json's
// "status_unknown", never "business_failure" (issue #24 §6).
void tst_AgentLoop::aWriteAnsweredUnknownIsNotABusinessAnswer()
{
    ToolRegistry registry;
    registry.add(std::make_shared<FunctionTool>(
        QStringLiteral("createTicket"), true, [](const AttemptContext &) {
            return AttemptResult::completed(
                ToolResult::failure(ResultCode::ExecutionStatusUnknown, Language::English));
        }));
    ToolExecutor executor;
    ScriptedModel model;
    ChatResponse answer;
    answer.content = QStringLiteral("done");
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                QStringLiteral("{\"orderId\":\"A1001\"}")}}),
                    answer};
    const std::unique_ptr<IdempotencyLedger> ledger = openTestLedger(m_dir->path());
    AgentLoop loop({.model = &model,
                    .tools = &registry,
                    .executor = &executor,
                    .ledger = ledger.get(),
                    .toolPolicies = [](const QString &) { return fastPolicy(); }});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    connect(&loop, &AgentLoop::confirmationRequested, this,
            [&loop](const QString &, const ToolCallRecord &write) {
                loop.confirm(write.operationId, true);
            });
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(QStringLiteral("create a ticket for A1001"));
    QVERIFY(finished.wait(5'000));
    const auto turn = finished.first().first().value<TurnResult>();
    const ToolCallRecord &call = turn.toolCalls[0];
    QCOMPARE(call.result.code, ResultCode::ExecutionStatusUnknown);
    QCOMPARE(call.attempts.size(), 1);
    QCOMPARE(call.attempts[0].outcome, AttemptOutcome::StatusUnknown);
    QCOMPARE(turn.unknownExecutionStatus, 1);
    const QJsonObject attempt = turn.toJson()
                                    .value(u"toolCalls").toArray().at(0).toObject()
                                    .value(u"attempts").toArray().at(0).toObject();
    QCOMPARE(attempt.value(u"outcome").toString(), QStringLiteral("status_unknown"));
    // Read back (a checkpoint, an export) as the same outcome.
    QCOMPARE(attemptOutcomeFromName(u"status_unknown"), AttemptOutcome::StatusUnknown);
}

namespace {

// System prompt, three earlier turns (the second with a tool call and its result), and the
// current turn's question.
QList<ChatMessage> fourTurns()
{
    ChatMessage call;
    call.role = ChatMessage::Role::Assistant;
    call.toolCalls = {{QStringLiteral("c1"), QStringLiteral("queryOrderStatus"),
                       QStringLiteral("{\"orderId\":\"A1001\"}")}};
    ChatMessage result;
    result.role = ChatMessage::Role::Tool;
    result.toolCallId = QStringLiteral("c1");
    result.toolName = QStringLiteral("queryOrderStatus");
    result.content = QString(300, QLatin1Char('r'));
    ChatMessage answer;
    answer.role = ChatMessage::Role::Assistant;
    answer.content = QString(100, QLatin1Char('a'));
    return {ChatMessage::system(QString(500, QLatin1Char('s'))),
            ChatMessage::user(QString(100, QLatin1Char('1'))), answer,
            ChatMessage::user(QString(100, QLatin1Char('2'))), call, result, answer,
            ChatMessage::user(QString(100, QLatin1Char('3'))), answer,
            ChatMessage::user(QString(100, QLatin1Char('4')))};
}

} // namespace

// Issue #24 §4: the system prompt and the current turn always go; earlier turns go whole,
// newest first, while they fit; a tool result never goes without its call.
void tst_AgentLoop::theWindowKeepsWholeTurnsNewestFirst()
{
    const QList<ChatMessage> all = fourTurns();
    const auto chars = [&all](qsizetype from, qsizetype to) {
        qsizetype total = 0;
        for (qsizetype i = from; i < to; ++i)
            total += ConversationWindow::charsOf(all.at(i));
        return total;
    };
    const qsizetype system = chars(0, 1), current = chars(9, 10), third = chars(7, 9);
    const qsizetype second = chars(3, 7);
    QCOMPARE(second, 100 + (2 + 16 + 19) + (2 + 16 + 300) + 100); // text, the call, its result

    ConversationWindow window = ConversationWindow::of(all, 0);
    QCOMPARE(window.messages, all);
    QCOMPARE(window.turnsLeftOut, 0);
    window = ConversationWindow::of(all, 100'000);
    QCOMPARE(window.messages, all);
    QCOMPARE(window.turnsLeftOut, 0);

    // Room for the third turn only: the second (with its tool round) would not fit whole.
    window = ConversationWindow::of(all, int(system + current + third + second - 1));
    QCOMPARE(window.turnsLeftOut, 2);
    QCOMPARE(window.messages, (QList<ChatMessage>{all[0], all[7], all[8], all[9]}));

    // Room for the second and third: the first is left out, the tool round kept whole.
    window = ConversationWindow::of(all, int(system + current + third + second));
    QCOMPARE(window.turnsLeftOut, 1);
    QCOMPARE(window.messages.size(), all.size() - 2);
    QCOMPARE(window.messages.at(1).content, QString(100, QLatin1Char('2')));
    QCOMPARE(window.messages.at(3).role, ChatMessage::Role::Tool);
    QCOMPARE(window.messages.at(2).toolCalls.at(0).id, window.messages.at(3).toolCallId);

    // Less than the system prompt and the question: both still go, nothing else.
    window = ConversationWindow::of(all, 10);
    QCOMPARE(window.turnsLeftOut, 3);
    QCOMPARE(window.messages, (QList<ChatMessage>{all[0], all[9]}));
}

// Through the loop: the model gets the bounded conversation, the turn's result says how many
// turns it did not see (in --json too), and the next turn's request is bounded again.
void tst_AgentLoop::aLongConversationSendsOnlyWhatFits()
{
    ToolRegistry registry;
    ToolExecutor executor;
    ScriptedModel model;
    for (int i = 0; i < 6; ++i) {
        ChatResponse answer;
        answer.content = QString(300, QLatin1Char('a'));
        model.script.append(answer);
    }
    AgentLoop loop({.model = &model, .tools = &registry, .executor = &executor});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    QList<TurnResult> turns;
    AgentLoop::TurnLimits limits = loop.turnLimits();
    for (int i = 0; i < 6; ++i) {
        loop.ask(QStringLiteral("question %1 ").arg(i) + QString(280, QLatin1Char('q')));
        QVERIFY(finished.wait(5'000));
        turns.append(finished.takeFirst().first().value<TurnResult>());
        if (i == 0) { // the system prompt as sent, and room for the question and two turns
            const ChatMessage &system = model.requests.first().messages.first();
            QCOMPARE(system.role, ChatMessage::Role::System);
            limits.conversationChars = int(ConversationWindow::charsOf(system)) + 1500;
            loop.setTurnLimits(limits);
        }
    }
    QCOMPARE(model.requests.size(), 6);
    // Each earlier turn costs about 590 characters: two fit beside the question.
    QCOMPARE(turns[0].turnsLeftOut, 0);
    QCOMPARE(turns[2].turnsLeftOut, 0);
    QCOMPARE(turns[3].turnsLeftOut, 1);
    QCOMPARE(turns[5].turnsLeftOut, 3);
    const QList<ChatMessage> &sent = model.requests.last().messages;
    QCOMPARE(sent.first().role, ChatMessage::Role::System);
    QVERIFY(sent.at(1).content.startsWith(QStringLiteral("question 3 ")));
    QVERIFY(sent.last().content.startsWith(QStringLiteral("question 5 ")));
    qsizetype chars = 0;
    for (const ChatMessage &message : sent)
        chars += ConversationWindow::charsOf(message);
    QVERIFY(chars <= limits.conversationChars);
    QCOMPARE(turns[5].toJson().value(u"turnsLeftOut").toInt(), 3);
    QVERIFY(!turns[0].toJson().contains(u"turnsLeftOut"));
    QCOMPARE(TurnResult::fromJson(turns[5].toJson(), nullptr)->turnsLeftOut, 3);
}

// PostgreSQL stops while a ticket is being made (in the tool's body: its claim is in, its
// answer not yet recorded). The turn still tells the ticket it made; the ledger keeps the
// completion; once the server is back the same request reads the stored ticket and the tool
// is not run again (issue #40 §6: it answered OPERATION_IN_PROGRESS for ever).
void tst_AgentLoop::aWriteWhoseLedgerStopsMidWriteIsRecordedWhenItIsBack()
{
    if (threadSanitized)
        QSKIP(childProcessUnderTsan); // the cluster's script is a child process
    ThrowawayCluster cluster;
    QVERIFY(cluster.start());
    QTemporaryDir data;
    QVERIFY(data.isValid());
    LedgerOptions ledgerOptions;
    ledgerOptions.owner = QStringLiteral("console-a");
    LedgerOpening opening = openLedger(cluster.url(), data.path(), ledgerOptions);
    QVERIFY(opening.ledger);
    QFuture<LedgerOpenResult> opened = opening.ledger->open();
    opened.waitForFinished(); // the ledger's own thread
    QVERIFY(opened.result().ready());

    ToolRegistry registry;
    const auto ticket = std::make_shared<FunctionTool>(
        QStringLiteral("createTicket"), true, [&cluster](const AttemptContext &) {
            cluster.stop(); // the ticket is made as the ledger's server goes
            return AttemptResult::completed(ToolResult::ok(
                QStringLiteral("made"), QJsonObject{{QStringLiteral("ticketId"), "T-7"}}));
        });
    registry.add(ticket);
    // Stopping the cluster takes the body a second or more on a loaded machine: one attempt,
    // with time for it (a retry would make the ticket twice, this tool asks no backend).
    RetryPolicy policy;
    policy.attemptTimeout = std::chrono::milliseconds(20'000);
    policy.maxRetries = 0;
    ToolExecutor executor;
    ScriptedModel model;
    ChatResponse answer;
    answer.content = QStringLiteral("done");
    const auto script = [&model, &answer] {
        model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                    QStringLiteral("{\"orderId\":\"A1001\"}")}}),
                        answer};
    };
    AgentLoop loop({.model = &model,
                    .tools = &registry,
                    .executor = &executor,
                    .ledger = opening.ledger.get(),
                    .toolPolicies = [&policy](const QString &) { return policy; }});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), QStringLiteral("c-1")});
    connect(&loop, &AgentLoop::confirmationRequested, this,
            [&loop](const QString &, const ToolCallRecord &write) {
                loop.confirm(write.operationId, true);
            });
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    script();
    loop.ask(QStringLiteral("create a ticket for A1001"), QStringLiteral("r-1"));
    QVERIFY(finished.wait(30'000));
    const auto first = finished.takeFirst().first().value<TurnResult>();
    QCOMPARE(first.toolCalls[0].result.code, ResultCode::Ok); // it was made, and said so
    QCOMPARE(ticket->runs.load(), 1);

    QVERIFY(cluster.start());
    script();
    loop.ask(QStringLiteral("create a ticket for A1001"), QStringLiteral("r-1"));
    QVERIFY(finished.wait(30'000));
    const auto replay = finished.takeFirst().first().value<TurnResult>();
    QCOMPARE(replay.toolCalls[0].result.code, ResultCode::Ok);
    QCOMPARE(replay.toolCalls[0].result.data.toObject().value(u"ticketId").toString(),
             QStringLiteral("T-7"));
    QCOMPARE(ticket->runs.load(), 1); // answered from the ledger, never made again
    QFuture<LedgerLookup> row = opening.ledger->lookup(first.toolCalls[0].operationId);
    row.waitForFinished();
    QCOMPARE(row.result().row->status, LedgerStatus::Succeeded);
}

QTEST_GUILESS_MAIN(tst_AgentLoop)
#include "tst_agentloop.moc"
