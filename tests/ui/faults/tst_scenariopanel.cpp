// The scenarios panel and menu over a real runtime on a temporary data directory, offscreen:
// a shipped scenario chosen from the menu runs in the transcript and ends with ✓; one whose
// expectation is not met ends with ✗ and says what differed. No mocks.
#include "panelfiles.h"
#include "consoletestsupport.h"

#include "core/scenarios/scenario.h"
#include "core/scenarios/scenariorunner.h"
#include "ui/faults/faultpanel.h"
#include "ui/faults/scenariopanel.h"
#include "ui/history/historysidebar.h"

#include <QFileDialog>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>

using namespace AgentConsole;
using namespace AgentConsole::UiTest;

class tst_ScenarioPanel final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void theCatalogueIsListed();
    void aShippedScenarioEndsWithACheck();
    void everyShippedScenarioMatchesFromTheWindow_data();
    void everyShippedScenarioMatchesFromTheWindow();
    void aScenarioThatDiffersSaysWhat();
    void stopEndsTheScenarioAndRestoresTheFaults();
    void aRefusedScenarioFileSaysWhy();
    void theOpenButtonsDialogLeavesTheLoopToTheWindow();
};

void tst_ScenarioPanel::initTestCase()
{
    registerTypes();
    qRegisterMetaType<AgentConsole::ScenarioVerdict>();
}

void tst_ScenarioPanel::theCatalogueIsListed()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ScenarioPanel *panel = console->window->scenarioPanel();
    QVERIFY(panel);
    QVERIFY(panel->noticeText().isEmpty());
    const QStringList names = panel->scenarioNames();
    QVERIFY2(names.size() >= 15, qPrintable(names.join(QLatin1Char(' '))));
    QVERIFY(names.contains(QStringLiteral("flaky-then-ok")));
    // Titles in the list, the selected one's summary under it; a menu entry per scenario.
    auto *list = panel->findChild<QListWidget *>(QStringLiteral("scenarioList"));
    QCOMPARE(list->count(), names.size());
    const int flaky = int(names.indexOf(QStringLiteral("flaky-then-ok")));
    QCOMPARE(list->item(flaky)->text(), panel->scenarioTitle(QStringLiteral("flaky-then-ok")));
    list->setCurrentRow(flaky);
    QVERIFY(panel->findChild<QLabel *>(QStringLiteral("scenarioSummary"))
                ->text()
                .contains(QStringLiteral("third attempt")));
    for (const QString &name : names) {
        QVERIFY2(console->window->findChild<QAction *>(QStringLiteral("scenario_") + name),
            qPrintable(name));
    }
}

void tst_ScenarioPanel::aShippedScenarioEndsWithACheck()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    ScenarioPanel *panel = window->scenarioPanel();
    QSignalSpy finished(panel, &ScenarioPanel::finished);
    // The staff member's own conversation first: the run must not mix into it (#41 §2).
    bool asked = false;
    const TurnResult own = askAndWait(*console, QStringLiteral("Where is order A1004?"), &asked);
    QVERIFY(asked);
    auto *runner = panel->findChild<ScenarioRunner *>();
    QVERIFY(runner);
    QSignalSpy runTurns(runner, &ScenarioRunner::turnFinished);

    auto *action = window->findChild<QAction *>(QStringLiteral("scenario_flaky-then-ok"));
    QVERIFY(action);
    action->trigger();
    QVERIFY2(panel->noticeText().isEmpty(), qPrintable(panel->noticeText()));
    QVERIFY(panel->isVisible());
    QVERIFY(panel->isRunning());
    QCOMPARE(panel->runningScenario(), panel->scenarioTitle(QStringLiteral("flaky-then-ok")));
    QCOMPARE(panel->stateText(), QStringLiteral("Running\u2026"));
    // The scenario's faults are in force, and said so, while it runs; the window asks
    // nothing meanwhile and its Cancel stops the scenario.
    QCOMPARE(window->windowTitle(),
        QStringLiteral("Lin Wei (u-1001) \u00b7 t-acme \u2014 "
                       "SCENARIO: Flaky, then OK on attempt 3, FAULTS ACTIVE"));
    QVERIFY(window->isScenarioRunning());
    QVERIFY(window->cancelButton()->isEnabled());
    QTest::keyClicks(console->input(), QStringLiteral("Where is order A1002?"));
    QVERIFY(!window->sendButton()->isEnabled());

    // While it runs, its turn is on screen alone, marked, beside the staff member's
    // conversation in History.
    QVERIFY(runTurns.wait(kTurnTimeoutMs));
    QStringList turns = console->transcript()->requestIds();
    QCOMPARE(turns.size(), 1);
    QVERIFY(turns.first() != own.requestId);
    QVERIFY2(window->noticeBanner()->text().contains(QStringLiteral("Scenario run")),
             qPrintable(window->noticeBanner()->text()));
    ToolCallCard *card = cardNamed(
        console->transcript()->toolCallCards(turns.first()), QStringLiteral("queryLogistics"));
    QVERIFY(card);
    QCOMPARE(card->statusText(), QStringLiteral("OK"));
    QVERIFY2(card->attemptSummaryText().startsWith(QStringLiteral("3 attempts")),
        qPrintable(card->attemptSummaryText()));
    QVERIFY(finished.size() == 1 || finished.wait(kTurnTimeoutMs));
    QCOMPARE(finished.first().first().toBool(), true);
    QVERIFY(!panel->isRunning());
    QCOMPARE(panel->lastMatched(), std::optional<bool>(true));
    QCOMPARE(panel->stateText(), QStringLiteral("\u2713 As expected"));
    const auto *list = panel->findChild<QListWidget *>(QStringLiteral("scenarioList"));
    QCOMPARE(list->currentItem()->data(Qt::UserRole).toString(), QStringLiteral("flaky-then-ok"));
    // The staff member's conversation is back on screen as it was, and the loop goes on in
    // it; History lists the run apart, marked.
    QTRY_COMPARE(console->transcript()->requestIds(), QStringList{own.requestId});
    QCOMPARE(console->loop()->session().conversationId, own.conversationId);
    QVERIFY2(window->noticeBanner()->text().contains(QStringLiteral("Scenario run finished")),
             qPrintable(window->noticeBanner()->text()));
    QVERIFY(window->noticeBanner()->isVisibleTo(window));
    QTRY_COMPARE(window->historySidebar()->rowTexts().size(), 2);
    QVERIFY2(window->historySidebar()->rowTexts().first().startsWith(
                 QStringLiteral("Scenario run: ")),
             qPrintable(window->historySidebar()->rowTexts().join(u'\n')));
    // The run beside the conversation: History lists both, the conversation is back.
    QVERIFY(!saveScreenshot(window, QStringLiteral("scenario-run-apart.png")).isEmpty());
    // What was in force before is back; the text typed meanwhile is still in the box.
    QVERIFY(!console->runtime->hasActiveFaults());
    QCOMPARE(window->windowTitle(),
             QStringLiteral("Lin Wei (u-1001) \u00b7 t-acme"));
    QVERIFY(window->sendButton()->isEnabled());
    QCOMPARE(console->input()->toPlainText(), QStringLiteral("Where is order A1002?"));
    QVERIFY(!saveScreenshot(window, QStringLiteral("scenario-matched.png")).isEmpty());
}

void tst_ScenarioPanel::everyShippedScenarioMatchesFromTheWindow_data()
{
    QTest::addColumn<QString>("name");
    for (const Scenario &scenario : ScenarioCatalogue::builtIn())
        QTest::newRow(qPrintable(scenario.name)) << scenario.name;
}

// The whole catalogue, as a tester runs it: the scenario chosen in the panel's list with the
// keyboard and started with Enter, on a fresh console each; every one ends with ✓. A crash
// turn's child is the agent-cli of this build.
void tst_ScenarioPanel::everyShippedScenarioMatchesFromTheWindow()
{
    QFETCH(QString, name);
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ScenarioPanel *panel = console->window->scenarioPanel();
    auto *runner = panel->findChild<ScenarioRunner *>();
    QVERIFY(runner);
    runner->setCliPath(QStringLiteral(AGENT_CLI_PATH));
    panel->show();
    auto *list = panel->findChild<QListWidget *>(QStringLiteral("scenarioList"));
    list->setFocus();
    list->setCurrentRow(int(panel->scenarioNames().indexOf(name)));
    QSignalSpy finished(panel, &ScenarioPanel::finished);
    QTest::keyClick(list, Qt::Key_Return);
    QVERIFY2(panel->isRunning() || !finished.isEmpty(), qPrintable(panel->noticeText()));
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
    QVERIFY(panel->lastMatched().has_value());
    QVERIFY2(*panel->lastMatched(), qPrintable(panel->resultText()));
    QCOMPARE(panel->stateText(),
        *panel->lastMatched() ? QStringLiteral("\u2713 As expected")
                              : QStringLiteral("\u2717 Not as expected"));
    QVERIFY(!console->runtime->hasActiveFaults());
    QVERIFY(console->runtime->toolsWithCustomPolicy().isEmpty());
    QVERIFY(!saveScreenshot(console->window.get(), QStringLiteral("scenario-%1.png").arg(name))
                 .isEmpty());
}

// The same faults, expecting the call to answer at once: ✗, naming the call and the attempts.
void tst_ScenarioPanel::aScenarioThatDiffersSaysWhat()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ScenarioPanel *panel = console->window->scenarioPanel();
    panel->show();
    const QString file = console->dataDir.filePath(QStringLiteral("too-hopeful.json"));
    QVERIFY(writeFile(file, R"({
        "title": "Too hopeful",
        "summary": "Expects the flaky logistics lookup to answer on its first attempt.",
        "faults": {"tools": {"queryLogistics": {"transientFailures": 2}}},
        "question": "Where is order A1001?",
        "expect": {
            "calls": [{"tool": "queryLogistics", "code": "OK", "attempts": 1}],
            "outcome": "answered",
            "maxMs": 5000
        }
    })"));
    QSignalSpy finished(panel, &ScenarioPanel::finished);
    QVERIFY2(Testing::runScenarioFile(panel, file) == std::optional<bool>(true),
             qPrintable(panel->noticeText()));
    QCOMPARE(panel->runningScenario(), QStringLiteral("Too hopeful"));
    QVERIFY(finished.wait(kTurnTimeoutMs));
    QCOMPARE(finished.first().first().toBool(), false);
    QCOMPARE(panel->stateText(), QStringLiteral("\u2717 Not as expected"));
    QVERIFY2(panel->resultText().contains(QStringLiteral("queryLogistics")),
        qPrintable(panel->resultText()));
    QVERIFY2(panel->resultText().contains(QStringLiteral("3")), qPrintable(panel->resultText()));
    QVERIFY(!console->runtime->hasActiveFaults());
    QVERIFY(!saveScreenshot(console->window.get(), QStringLiteral("scenario-not-matched.png"))
                 .isEmpty());
}

// Stop (or the window's Cancel) ends the run: the turn is cancelled, the verdict is ✗, and the
// faults in force before the scenario are back.
void tst_ScenarioPanel::stopEndsTheScenarioAndRestoresTheFaults()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    FaultPlan before;
    ToolFault slow;
    slow.latencyMs = 20;
    before.setFault(QStringLiteral("queryInventory"), slow);
    console->runtime->setFaultPlan(before);

    ScenarioPanel *panel = window->scenarioPanel();
    panel->show();
    QSignalSpy finished(panel, &ScenarioPanel::finished);
    QVERIFY2(
        panel->runScenario(QStringLiteral("slow-past-timeout")), qPrintable(panel->noticeText()));
    QVERIFY(console->runtime->faultPlan() != before);
    QVERIFY(!window->faultPanel()->widget()->isEnabled());
    auto *stop = panel->findChild<QPushButton *>(QStringLiteral("stopScenarioButton"));
    QVERIFY(stop->isEnabled());
    QTRY_VERIFY(console->loop()->isBusy());
    QTest::mouseClick(stop, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kTurnTimeoutMs);
    QCOMPARE(finished.first().first().toBool(), false);
    QCOMPARE(panel->stateText(), QStringLiteral("\u2717 Not as expected"));
    QCOMPARE(console->runtime->faultPlan(), before);
    QVERIFY(window->faultPanel()->widget()->isEnabled());
    QCOMPARE(window->windowTitle(), QStringLiteral("Lin Wei (u-1001) \u00b7 t-acme \u2014 FAULTS ACTIVE"));
    QVERIFY(!window->cancelButton()->isEnabled());
}

// "Open a scenario file…" opens its dialog and returns (a zero timer set before the click
// would fire inside an exec()'d one); the file chosen is read on a pool thread and runs.
void tst_ScenarioPanel::theOpenButtonsDialogLeavesTheLoopToTheWindow()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ScenarioPanel *panel = console->window->scenarioPanel();
    panel->show();
    auto *open = panel->findChild<QPushButton *>(QStringLiteral("openScenarioFileButton"));
    QVERIFY(open);
    QVERIFY(Testing::clickReturnsWithoutALoop(open));
    auto *dialog = panel->findChild<QFileDialog *>();
    QVERIFY(dialog);
    QVERIFY(dialog->isVisible());
    QSignalSpy answered(panel, &ScenarioPanel::scenarioFileAnswered);
    QSignalSpy finished(panel, &ScenarioPanel::finished);
    dialog->selectFile(QStringLiteral(AGENT_CONSOLE_SOURCE_DIR
                                      "/resources/scenarios/flaky-then-ok.json"));
    static_cast<QDialog *>(dialog)->accept(); // QFileDialog::accept, as the Open button
    QVERIFY(answered.wait(20000));
    QCOMPARE(answered.first().first().toBool(), true);
    QVERIFY(finished.wait(kTurnTimeoutMs));
    QCOMPARE(finished.first().first().toBool(), true);
}

void tst_ScenarioPanel::aRefusedScenarioFileSaysWhy()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ScenarioPanel *panel = console->window->scenarioPanel();
    panel->show();
    const QString file = console->dataDir.filePath(QStringLiteral("typo.json"));
    QVERIFY(writeFile(file, R"({"title": "Typo", "summary": "A tool that does not exist.",
        "faults": {"tools": {"queryLogistic": {"hang": true}}},
        "question": "Where is order A1001?", "expect": {"outcome": "answered", "maxMs": 100}})"));
    QCOMPARE(Testing::runScenarioFile(panel, file), std::optional<bool>(false));
    QVERIFY(!panel->isRunning());
    QVERIFY2(panel->noticeText().contains(QStringLiteral("queryLogistic")),
        qPrintable(panel->noticeText()));
    QVERIFY(!console->runtime->hasActiveFaults());
}

QTEST_MAIN(tst_ScenarioPanel)
#include "tst_scenariopanel.moc"
