// ScenarioRunner on a real runtime (the window's way), and agent-cli --scenario (the
// headless way): a run leaves the faults and policies as it found them, a crash turn kills a
// real child agent-cli on the same data directory and resumes its turn here, a wrong
// expectation exits 4 saying what differed.
#include "clirun.h"
#include "sanitizerbuild.h"

#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/runtimetestseam.h"
#include "core/console/toolpolicies.h"
#include "core/console/turnrecovery.h"
#include "core/history/conversationhistory.h"
#include "core/resilience/circuitbreaker.h"
#include "core/scenarios/scenario.h"
#include "core/scenarios/scenariorunner.h"

#include <QFile>
#include <algorithm>
#include <QJsonArray>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int timeoutMs = 30'000;

CliRun runCli(const QStringList &arguments)
{
    QProcess process;
    process.start(QStringLiteral(AGENT_CLI_PATH), arguments);
    CliRun run;
    if (!process.waitForFinished(120'000)) {
        process.kill();
        process.waitForFinished();
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

Scenario builtIn(const QString &name)
{
    QString error;
    const std::optional<Scenario> scenario = ScenarioCatalogue::find(name, &error);
    if (!scenario)
        qFatal("%s", qPrintable(error));
    return *scenario;
}

} // namespace

class tst_ScenarioRunner : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        RuntimeOptions options;
        options.dataDirectory = m_dir.path();
        m_runtime = std::make_unique<AgentRuntime>(options);
        QSignalSpy ready(m_runtime.get(), &AgentRuntime::ready);
        m_runtime->start();
        QVERIFY(ready.wait(timeoutMs));
    }
    void cleanup() { m_runtime.reset(); }

    void restoresFaultsAndPolicies()
    {
        // What the window had set before the scenario.
        QString error;
        const auto own = FaultPlan::fromJson(
            R"({"tools": {"queryInventory": {"latencyMs": 5}}})", &error,
            m_runtime->faults()->knownTools());
        QVERIFY2(own, qPrintable(error));
        m_runtime->faults()->setPlan(*own);
        RetryPolicy custom = RetryPolicy::defaults();
        custom.maxRetries = 4;
        QVERIFY(
            m_runtime->policies()->setPolicy(QStringLiteral("queryOrderStatus"), custom, &error));
        const QString conversationBefore = m_runtime->agentLoop()->session().conversationId;

        ScenarioRunner runner(m_runtime.get());
        QSignalSpy finished(&runner, &ScenarioRunner::finished);
        QSignalSpy turns(&runner, &ScenarioRunner::turnStarted);
        QVERIFY2(
            runner.start(builtIn(QStringLiteral("slow-past-timeout")), &error), qPrintable(error));
        QVERIFY(runner.isRunning());
        QString busy;
        QVERIFY(!runner.start(builtIn(QStringLiteral("all-good")), &busy));
        QCOMPARE(busy, QStringLiteral("a scenario is running"));
        // While it runs, its faults and policy are in force, not the window's.
        QVERIFY(m_runtime->faults()->plan().faultFor(QStringLiteral("queryLogistics")));
        QCOMPARE(m_runtime->policies()->policy(QStringLiteral("queryLogistics"))
                     .attemptTimeout.count(),
            300);
        QCOMPARE(m_runtime->policies()->policy(QStringLiteral("queryOrderStatus")),
            m_runtime->policies()->defaultPolicy());

        QVERIFY(finished.wait(timeoutMs));
        QCOMPARE(finished.size(), 1);
        QCOMPARE(turns.size(), 1);
        const auto verdict = finished.at(0).at(0).value<ScenarioVerdict>();
        QVERIFY2(verdict.matched, qPrintable(verdict.differenceLines().join(QLatin1Char('\n'))));
        QCOMPARE(verdict.turns.size(), 1);
        QCOMPARE(verdict.turns.at(0).toolCalls.at(0).result.code, ResultCode::ToolTimeout);
        QVERIFY(verdict.restored.contains(QStringLiteral("restored")));
        QVERIFY(verdict.restored.contains(QStringLiteral("model chain")));
        QVERIFY(!runner.isRunning());
        // Left as it was found.
        QVERIFY(m_runtime->faults()->plan() == *own);
        QCOMPARE(m_runtime->policies()->policy(QStringLiteral("queryOrderStatus")), custom);
        QCOMPARE(m_runtime->policies()->policy(QStringLiteral("queryLogistics")),
            m_runtime->policies()->defaultPolicy());
        QCOMPARE(m_runtime->policies()->toolsWithCustomPolicy(),
            QStringList{QStringLiteral("queryOrderStatus")});
        // The staff member's conversation goes on where it was; the run had its own.
        QCOMPARE(m_runtime->agentLoop()->session().conversationId, conversationBefore);
        QVERIFY(verdict.turns.at(0).conversationId != conversationBefore);
        QVERIFY(!m_runtime->agentLoop()->session().userId.isEmpty());
        QVERIFY(m_runtime->agentLoop()->session().scenario.isEmpty());
    }

    // Issue #41 §2: a scenario never mixes into the staff member's conversation. Its turns
    // are marked, the conversation asked before goes on with its messages (the model keeps
    // its context), the history lists the run apart and can hide it, and the breakers it
    // tripped are as the run found them.
    void aScenarioRunsApartAndLeavesTheBreakersAsItFoundThem()
    {
        AgentLoop *loop = m_runtime->agentLoop();
        QSignalSpy turnDone(loop, &AgentLoop::turnFinished);
        QVERIFY(!loop->ask(QStringLiteral("Where is order A1004 right now?")).isEmpty());
        QVERIFY(turnDone.wait(timeoutMs));
        const auto before = turnDone.takeFirst().first().value<TurnResult>();
        QVERIFY(before.scenario.isEmpty());
        const QString conversation = loop->session().conversationId;
        const QList<ChatMessage> messages = loop->conversationMessages();
        QVERIFY(messages.size() >= 2);
        const CircuitBreakerRegistry::Snapshot breakersBefore
            = RuntimeTestSeam::breakers(*m_runtime)->snapshot();

        // This one opens the logistics breaker.
        ScenarioRunner runner(m_runtime.get());
        QSignalSpy finished(&runner, &ScenarioRunner::finished);
        QString error;
        const Scenario opens = builtIn(QStringLiteral("down-breaker-opens"));
        QVERIFY2(runner.start(opens, &error), qPrintable(error));
        QCOMPARE(runner.setAsideConversation(), conversation);
        QVERIFY(finished.wait(timeoutMs * 2));
        const auto verdict = finished.first().first().value<ScenarioVerdict>();
        QVERIFY2(verdict.matched, qPrintable(verdict.differenceLines().join(QLatin1Char('\n'))));
        QVERIFY(RuntimeTestSeam::breakers(*m_runtime)->openCount() == breakersBefore.openCount);
        for (const TurnResult &turn : verdict.turns) {
            QCOMPARE(turn.scenario, opens.title);
            QVERIFY(turn.conversationId != conversation);
        }
        // Every breaker as it was: closed, its window and counts as before the run.
        for (const QString &dependency : RuntimeTestSeam::breakers(*m_runtime)->dependencies()) {
            const CircuitBreaker *breaker = RuntimeTestSeam::breakers(*m_runtime)->find(dependency);
            QCOMPARE(breaker->state(), CircuitBreaker::State::Closed);
            QCOMPARE(breaker->openCount(),
                     breakersBefore.breakers.value(dependency).openCount);
            QCOMPARE(breaker->windowCalls(),
                     int(breakersBefore.breakers.value(dependency).windowFailed.size()));
        }
        QCOMPARE(loop->session().conversationId, conversation);
        QCOMPARE(loop->conversationMessages().size(), messages.size());

        // The staff member's next question is in their conversation, with its context.
        turnDone.clear(); // the run's own turns
        QVERIFY(!loop->ask(QStringLiteral("and A1001?")).isEmpty());
        QVERIFY(turnDone.wait(timeoutMs));
        const auto after = turnDone.takeFirst().first().value<TurnResult>();
        QCOMPARE(after.conversationId, conversation);
        QVERIFY(after.scenario.isEmpty());
        QVERIFY(after.toolCalls.size() >= 1);
        QVERIFY2(after.toolCalls.at(0).result.success,
                 qPrintable(after.toolCalls.at(0).result.codeName()));

        // The history lists both, the run marked; hidden on request. (The suite's data
        // directory holds the other cases' conversations too.)
        const QString run = verdict.turns.at(0).conversationId;
        ConversationHistory history(m_runtime->recovery()->journal(), loop->session().userId,
                                    loop->session().tenantId);
        QSignalSpy listed(&history, &ConversationHistory::listed);
        const auto listing = [&] {
            history.list();
            QHash<QString, ConversationSummary> byId;
            if (!listed.wait(timeoutMs))
                return byId;
            for (const ConversationSummary &summary :
                 listed.takeFirst().first().value<ConversationPage>().conversations)
                byId.insert(summary.conversationId, summary);
            return byId;
        };
        auto shown = listing();
        QVERIFY(shown.contains(conversation) && shown.contains(run));
        QVERIFY(shown.value(conversation).scenario.isEmpty());
        QCOMPARE(shown.value(conversation).turns, 2);
        QCOMPARE(shown.value(run).scenario, opens.title);
        history.setHidingScenarios(true);
        shown = listing();
        QVERIFY(shown.contains(conversation));
        QVERIFY(!shown.contains(run));
        for (const ConversationSummary &summary : std::as_const(shown))
            QVERIFY(summary.scenario.isEmpty());
    }

    // Every shipped scenario, one after the other on one console, forwards and backwards,
    // asked in English and in Chinese (issue #41 §7: a Chinese window asks each turn's
    // questionZh, and the same calls, codes and attempts must come of it): each gives the
    // verdict it gives on a fresh start (✓, tst_scenariopanel), whatever ran before it.
    void shippedScenariosInSequenceMatchAsOnAFreshStart_data()
    {
        QTest::addColumn<bool>("reversed");
        QTest::addColumn<bool>("chinese");
        QTest::newRow("catalogue order") << false << false;
        QTest::newRow("reversed") << true << false;
        QTest::newRow("catalogue order, in Chinese") << false << true;
        QTest::newRow("reversed, in Chinese") << true << true;
    }
    void shippedScenariosInSequenceMatchAsOnAFreshStart()
    {
        if (threadSanitized)
            QSKIP(childProcessUnderTsan); // crash turns start agent-cli
        QFETCH(bool, reversed);
        QFETCH(bool, chinese);
        const Language language = chinese ? Language::Chinese : Language::English;
        QList<Scenario> catalogue = ScenarioCatalogue::builtIn();
        if (reversed)
            std::reverse(catalogue.begin(), catalogue.end());
        ScenarioRunner runner(m_runtime.get());
        runner.setCliPath(QStringLiteral(AGENT_CLI_PATH));
        runner.setLanguage(language);
        QStringList failed;
        QString previous = QStringLiteral("(fresh start)");
        for (const Scenario &scenario : std::as_const(catalogue)) {
            QSignalSpy finished(&runner, &ScenarioRunner::finished);
            QSignalSpy started(&runner, &ScenarioRunner::turnStarted);
            QString error;
            QVERIFY2(runner.start(scenario, &error), qPrintable(scenario.name + error));
            QVERIFY2(finished.wait(120'000), qPrintable(scenario.name));
            const auto verdict = finished.first().first().value<ScenarioVerdict>();
            if (!verdict.matched)
                failed.append(scenario.name + QStringLiteral(" after ") + previous
                              + QStringLiteral(": ")
                              + verdict.differenceLines().join(QStringLiteral("; ")));
            previous = scenario.name;
            QVERIFY(!m_runtime->faults()->hasActiveFaults());
            // Every turn was asked in the run's language, a crash turn's child too (its
            // resumed turn keeps the question the child was asked).
            QCOMPARE(started.size(), scenario.turns.size());
            for (int i = 0; i < started.size(); ++i) {
                const QString asked = started.at(i).at(1).toString();
                QCOMPARE(asked, scenario.turns.at(i).questionIn(language));
                QCOMPARE(languageOf(asked), language);
            }
            for (const TurnResult &turn : verdict.turns)
                QVERIFY2(languageOf(turn.question) == language, qPrintable(turn.question));
        }
        QVERIFY2(failed.isEmpty(), qPrintable(failed.join(QLatin1Char('\n'))));
    }

    // A real child agent-cli on this runtime's data directory is killed at write-committed;
    // the runtime takes its lock back, finds the interrupted turn and resumes it: one ticket.
    void crashTurnResumesHere()
    {
        ScenarioRunner runner(m_runtime.get());
        runner.setCliPath(QStringLiteral(AGENT_CLI_PATH));
        QSignalSpy finished(&runner, &ScenarioRunner::finished);
        QString error;
        QVERIFY2(runner.start(builtIn(QStringLiteral("crash-during-write")), &error),
            qPrintable(error));
        QVERIFY(finished.wait(timeoutMs));
        const auto verdict = finished.at(0).at(0).value<ScenarioVerdict>();
        QVERIFY2(verdict.matched, qPrintable(verdict.differenceLines().join(QLatin1Char('\n'))));
        QCOMPARE(verdict.turns.size(), 1);
        QCOMPARE(verdict.turns.at(0).restarts, 1);
        QCOMPARE(verdict.notes.size(), 1);
        QVERIFY2(verdict.notes.at(0).contains(QStringLiteral("reached the kill point "
                                                             "write-committed")),
            qPrintable(verdict.notes.at(0)));
        QVERIFY(!m_runtime->recovery()->isDataDirectoryLent());
        QVERIFY(m_runtime->recovery()->interruptedTurns().isEmpty());
        // The lock is this process's again: a second process is refused.
        const CliRun second = runCli(
            {QStringLiteral("--data-dir"), m_dir.path(), QStringLiteral("Where is order A1001?")});
        QCOMPARE(second.exitCode, 2);
        QVERIFY2(second.err.contains("another Agent Console process"), second.err.constData());
    }

    void childThatNeverReachesItsPointIsReported()
    {
        ScenarioRunner runner(m_runtime.get());
        runner.setCliPath(QStringLiteral(AGENT_CLI_PATH));
        QSignalSpy finished(&runner, &ScenarioRunner::finished);
        Scenario scenario = builtIn(QStringLiteral("crash-during-write"));
        // A lookup never writes: the child answers and exits without reaching the point.
        scenario.turns[0].question = QStringLiteral("Where is order A1001?");
        QString error;
        QVERIFY(runner.start(scenario, &error));
        QVERIFY(finished.wait(timeoutMs));
        const auto verdict = finished.at(0).at(0).value<ScenarioVerdict>();
        QVERIFY(!verdict.matched);
        QCOMPARE(verdict.differences.size(), 1);
        QCOMPARE(verdict.differences.at(0).kind, ScenarioDifference::Kind::TurnNotRun);
        QCOMPARE(verdict.differences.at(0).turn, 1);
        QVERIFY2(verdict.differences.at(0).line.startsWith(QStringLiteral(
                     "turn 1: the child agent-cli exited with 0 before reaching the kill "
                     "point write-committed")),
            qPrintable(verdict.differences.at(0).line));
        QVERIFY(!m_runtime->recovery()->isDataDirectoryLent());
    }

    // The window closes mid-run: the child goes, the faults are put back, and the runtime
    // holds its data directory again.
    void destroyedMidCrashTurn()
    {
        auto runner = std::make_unique<ScenarioRunner>(m_runtime.get());
        runner->setCliPath(QStringLiteral(AGENT_CLI_PATH));
        QSignalSpy started(runner.get(), &ScenarioRunner::turnStarted);
        QString error;
        QVERIFY(runner->start(builtIn(QStringLiteral("crash-during-write")), &error));
        QVERIFY(started.wait(timeoutMs));
        QVERIFY(m_runtime->recovery()->isDataDirectoryLent());
        runner.reset();
        QTRY_VERIFY_WITH_TIMEOUT(!m_runtime->recovery()->isDataDirectoryLent(), timeoutMs);
        QVERIFY(!m_runtime->faults()->hasActiveFaults());
    }

    // Issue #24 §3: consoles draw their own jitter seeds, but a scenario keeps a fixed one:
    // a tool it sets no policy for waits the same backoffs on two consoles seeded apart, and
    // each console has its own seed back afterwards.
    void aScenarioWaitsTheSameOnEveryConsole()
    {
        Scenario scenario = builtIn(QStringLiteral("flaky-then-ok"));
        scenario.policies.clear(); // the flaky tool runs under the console's default policy
        QList<QList<qint64>> waits;
        for (const std::uint64_t seed : {0x1111ULL, 0x2222ULL}) {
            QTemporaryDir dir;
            QVERIFY(dir.isValid());
            RuntimeOptions options;
            options.dataDirectory = dir.path();
            options.jitterSeed = seed;
            AgentRuntime runtime(options);
            QSignalSpy ready(&runtime, &AgentRuntime::ready);
            runtime.start();
            QVERIFY(ready.wait(timeoutMs));
            ScenarioRunner runner(&runtime);
            QSignalSpy finished(&runner, &ScenarioRunner::finished);
            QString error;
            QVERIFY2(runner.start(scenario, &error), qPrintable(error));
            QCOMPARE(runtime.policies()->jitterSeed(), Scenario::jitterSeed);
            QCOMPARE(runtime.policies()->defaultPolicy().jitter, JitterMode::Full);
            QVERIFY(finished.wait(timeoutMs));
            const auto verdict = finished.at(0).at(0).value<ScenarioVerdict>();
            QVERIFY2(verdict.matched, qPrintable(verdict.differenceLines().join(QLatin1Char('\n'))));
            QList<qint64> delays;
            for (const ToolCallRecord &call : verdict.turns.at(0).toolCalls) {
                for (const AttemptRecord &attempt : call.attempts)
                    delays.append(attempt.nextDelayMs);
            }
            QVERIFY(std::any_of(delays.cbegin(), delays.cend(), [](qint64 d) { return d >= 0; }));
            waits.append(delays);
            QCOMPARE(runtime.policies()->jitterSeed(), seed); // the console's own again
            QCOMPARE(runtime.policies()->defaultPolicy().jitterSeed, seed);
        }
        QCOMPARE(waits.at(0), waits.at(1));
    }

    void cancelEndsTheRun()
    {
        ScenarioRunner runner(m_runtime.get());
        QSignalSpy finished(&runner, &ScenarioRunner::finished);
        QSignalSpy started(&runner, &ScenarioRunner::turnStarted);
        QString error;
        QVERIFY(runner.start(builtIn(QStringLiteral("write-outcome-unknown")), &error));
        QVERIFY(started.wait(timeoutMs));
        runner.cancel();
        QVERIFY(finished.wait(timeoutMs));
        QCOMPARE(finished.size(), 1);
        const auto verdict = finished.at(0).at(0).value<ScenarioVerdict>();
        QVERIFY(!verdict.matched);
        QVERIFY(verdict.differenceLines().contains(QStringLiteral("the run was cancelled")));
        QCOMPARE(verdict.differences.last().kind, ScenarioDifference::Kind::Cancelled);
        QVERIFY(!m_runtime->faults()->hasActiveFaults());
        QVERIFY(m_runtime->policies()->toolsWithCustomPolicy().isEmpty());
        QVERIFY(!m_runtime->agentLoop()->isBusy());
    }

    void cliWrongExpectationExits4()
    {
        QTemporaryDir dir;
        QFile source(QStringLiteral(":/agentconsole/scenarios/flaky-then-ok.json"));
        QVERIFY(source.open(QIODevice::ReadOnly));
        QByteArray json = source.readAll();
        json.replace(R"("code": "OK", "attempts": 3)", R"("code": "TOOL_TIMEOUT", "attempts": 3)");
        const QString path = dir.filePath(QStringLiteral("flaky-wrong.json"));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(json);
        out.close();

        CliRun run = runCli({QStringLiteral("--scenario"), path});
        QCOMPARE(run.exitCode, 4);
        const QByteArray difference
            = "turn 1, call 1 queryLogistics: expected TOOL_TIMEOUT after 3 attempts, got OK "
              "after 3";
        QVERIFY2(run.out.contains(difference), run.out.constData());
        QVERIFY2(run.err.contains(difference), run.err.constData());

        run = runCli({QStringLiteral("--scenario"), path, QStringLiteral("--json")});
        QCOMPARE(run.exitCode, 4);
        const QList<QJsonObject> lines = run.turns();
        QCOMPARE(lines.size(), 2);
        QCOMPARE(
            lines.at(0).value(QStringLiteral("outcome")).toString(), QStringLiteral("answered"));
        const QJsonObject verdict = lines.at(1).value(QStringLiteral("verdict")).toObject();
        QCOMPARE(verdict.value(QStringLiteral("matched")).toBool(true), false);
        QCOMPARE(verdict.value(QStringLiteral("differences")).toArray().at(0).toString(),
            QString::fromUtf8(difference));
    }

    void cliListsAndRefuses()
    {
        CliRun run = runCli({QStringLiteral("--list-scenarios")});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.err.isEmpty()); // every shipped scenario parses
        QCOMPARE(run.out.count('\n'), ScenarioCatalogue::builtIn().size());
        QVERIFY(run.out.contains("crash-during-write\t"));

        run = runCli({QStringLiteral("--scenario"), QStringLiteral("no-such")});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.err.contains("no scenario named 'no-such'"));

        // The questions' language: en or zh, and only for a scenario.
        run = runCli({QStringLiteral("--scenario"), QStringLiteral("all-good"),
                      QStringLiteral("--scenario-language"), QStringLiteral("fr")});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("--scenario-language: use en or zh"), run.err.constData());
        run = runCli({QStringLiteral("--scenario-language"), QStringLiteral("zh"),
                      QStringLiteral("Where is order A1001?")});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("--scenario-language goes with --scenario"),
                 run.err.constData());

        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bad.json"));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(R"({"title": "t", "summary": "s", "question": "Where is order A1001?",
                      "expect": {"outcome": "answered", "maxMs": 100, "tickets": "one"}})");
        out.close();
        run = runCli({QStringLiteral("--scenario"), path});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("expect.tickets: expected a whole number"), run.err.constData());
    }

private:
    QTemporaryDir m_dir;
    std::unique_ptr<AgentRuntime> m_runtime;
};

QTEST_GUILESS_MAIN(tst_ScenarioRunner)
#include "tst_scenariorunner.moc"
