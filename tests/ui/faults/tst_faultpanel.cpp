// The fault panel over a real runtime on a temporary data directory, offscreen: a fault set
// in the panel changes the next turn without a restart, the window's title and badge say
// faults are in force, and one click clears them. No mocks.
#include "panelfiles.h"
#include "consoletestsupport.h"

#include "ui/faults/faultpanel.h"
#include "ui/faults/scenariopanel.h"
#include "ui/window/consolelanguage.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>

using namespace AgentConsole;
using namespace AgentConsole::UiTest;

class tst_FaultPanel final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aFaultSetInThePanelChangesTheNextTurn();
    void aFaultFileIsShownFieldByField();
    void theLoadButtonsDialogLeavesTheLoopToTheWindow();
    void aScenarioStartedWhileAFileIsReadKeepsItsFaults();
    void aRefusedFileLeavesThePlanInForce();
    void aCustomPolicyIsFlaggedLikeAFault();
    void everyTargetOffersItsFaults();
    void aValueCoreRefusesStaysWithItsReason();
    void theSimSectionIsCheckedAndItsFateSaid();
    void aModelFaultChangesTheNextTurn();
    void itsButtonsShowWholeAtItsDefaultWidth();
    void theFormIsCoresFields();
};

void tst_FaultPanel::initTestCase()
{
    registerTypes();
}

// Logistics answers; the panel sets it hanging; the next turn's logistics card times out;
// Clear all faults and it answers again. The same runtime throughout: no restart.
void tst_FaultPanel::aFaultSetInThePanelChangesTheNextTurn()
{
    RuntimeOptions options;
    options.toolPolicy = shortToolPolicy();
    const std::unique_ptr<Console> console = startConsole(options);
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    FaultPanel *panel = window->faultPanel();
    QVERIFY(panel);
    // Opened from the keyboard (Faults > Fault panel), with the keyboard in its list.
    QVERIFY(!panel->isVisible());
    QTest::keySequence(window, QKeySequence(QStringLiteral("Ctrl+Shift+F")));
    QVERIFY(panel->isVisible());
    QTRY_VERIFY(panel->findChild<QListWidget *>(QStringLiteral("faultTargets"))->hasFocus());
    QVERIFY(!window->windowTitle().contains(QStringLiteral("FAULTS")));
    QVERIFY(!window->faultChip()->isVisible());

    bool ok = false;
    TurnResult before = askAndWait(*console, QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    ToolCallCard *card = cardNamed(
        console->transcript()->toolCallCards(before.requestId), QStringLiteral("queryLogistics"));
    QVERIFY(card);
    QCOMPARE(card->statusText(), QStringLiteral("OK"));

    // The tool is chosen and its fault switched on with the keyboard, as a tester would.
    QVERIFY(panel->selectTarget(QStringLiteral("tool:queryLogistics")));
    auto *hang = qobject_cast<QCheckBox *>(panel->fieldEditor(QStringLiteral("hang")));
    QVERIFY(hang);
    QVERIFY(hang->isVisibleTo(panel));
    hang->setFocus();
    QTest::keyClick(hang, Qt::Key_Space);
    QVERIFY(hang->isChecked());
    QVERIFY2(panel->fieldProblem(QStringLiteral("hang")).isEmpty(),
        qPrintable(panel->fieldProblem(QStringLiteral("hang"))));
    QVERIFY(console->faults()->hasActiveFaults());
    QVERIFY(console->faults()->plan().faultFor(QStringLiteral("queryLogistics"))->hang);
    QCOMPARE(window->windowTitle(), QStringLiteral("Lin Wei (u-1001) \u00b7 t-acme \u2014 FAULTS ACTIVE"));
    QVERIFY(window->faultChip()->isVisible());
    QCOMPARE(window->faultChip()->text(), QStringLiteral("1 fault"));
    QCOMPARE(window->faultChip()->tone(), Tone::Warning);

    // A second fault on another tool: the badge counts both.
    QVERIFY(panel->selectTarget(QStringLiteral("tool:queryInventory")));
    auto *latency = qobject_cast<QSpinBox *>(panel->fieldEditor(QStringLiteral("latencyMs")));
    QVERIFY(latency);
    latency->setValue(50);
    QCOMPARE(
        console->faults()->plan().faultFor(QStringLiteral("queryInventory"))->latencyMs, 50);
    QCOMPARE(window->faultChip()->text(), QStringLiteral("2 faults"));
    const auto *targets = panel->findChild<QListWidget *>(QStringLiteral("faultTargets"));
    QVERIFY(targets);
    QVERIFY(targets->item(1)->text().contains(QStringLiteral("1 fault")));

    TurnResult during = askAndWait(*console, QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    card = cardNamed(
        console->transcript()->toolCallCards(during.requestId), QStringLiteral("queryLogistics"));
    QVERIFY(card);
    QVERIFY(callNamed(during, QStringLiteral("queryLogistics")));
    QCOMPARE(callNamed(during, QStringLiteral("queryLogistics"))->result.code,
        ResultCode::ToolTimeout);
    QCOMPARE(card->statusText(), QStringLiteral("Timed out"));
    QVERIFY(panel->selectTarget(QStringLiteral("tool:queryLogistics")));
    QVERIFY(!saveScreenshot(window, QStringLiteral("faultpanel-active-faults.png")).isEmpty());

    // One click clears every fault; the panel, the title and the badge follow.
    auto *clear = panel->findChild<QPushButton *>(QStringLiteral("clearAllFaultsButton"));
    QVERIFY(clear);
    QTest::mouseClick(clear, Qt::LeftButton);
    QVERIFY(!console->faults()->hasActiveFaults());
    QCOMPARE(window->windowTitle(),
             QStringLiteral("Lin Wei (u-1001) \u00b7 t-acme"));
    QVERIFY(!window->faultChip()->isVisible());
    QVERIFY(!hang->isChecked());
    QVERIFY(!targets->item(1)->text().contains(QStringLiteral("fault")));

    TurnResult after = askAndWait(*console, QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QVERIFY(callNamed(after, QStringLiteral("queryLogistics")));
    QCOMPARE(
        callNamed(after, QStringLiteral("queryLogistics"))->result.code, ResultCode::Ok);
}

// "Load…" opens its file dialog and returns; it runs no event loop of its own inside the
// panel's slot (a zero timer set before the click would fire inside it). The file chosen is
// read on a pool thread and put in force.
void tst_FaultPanel::theLoadButtonsDialogLeavesTheLoopToTheWindow()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    FaultPanel *panel = console->window->faultPanel();
    panel->show();
    auto *load = panel->findChild<QPushButton *>(QStringLiteral("loadFaultFileButton"));
    QVERIFY(load);
    QVERIFY(Testing::clickReturnsWithoutALoop(load));
    auto *dialog = panel->findChild<QFileDialog *>();
    QVERIFY(dialog);
    QVERIFY(dialog->isVisible());
    QSignalSpy answered(panel, &FaultPanel::faultFileAnswered);
    dialog->selectFile(sourceFile("resources/faults/logistics-flaky.json"));
    static_cast<QDialog *>(dialog)->accept(); // QFileDialog::accept, as the Open button
    QVERIFY(answered.wait(20000));
    QCOMPARE(answered.first().first().toBool(), true);
    QVERIFY(console->faults()->plan().faultFor(QStringLiteral("queryLogistics")));
}

// A scenario that starts while a fault file is being read holds the faults until it ends: the
// file comes back afterwards and is not put in force; the panel says why.
void tst_FaultPanel::aScenarioStartedWhileAFileIsReadKeepsItsFaults()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    FaultPanel *panel = console->window->faultPanel();
    panel->show();
    ScenarioPanel *scenarios = console->window->scenarioPanel();
    QSignalSpy answered(panel, &FaultPanel::faultFileAnswered);
    QSignalSpy finished(scenarios, &ScenarioPanel::finished);
    panel->loadFaultFile(sourceFile("resources/faults/logistics-flaky.json"));
    // The file's answer comes through the event loop, which has not run yet.
    QVERIFY(scenarios->runScenario(QStringLiteral("all-good")));
    QVERIFY(!panel->widget()->isEnabled());
    QVERIFY(answered.wait(20000));
    QCOMPARE(answered.first().first().toBool(), false);
    QVERIFY2(panel->noticeText().contains(QStringLiteral("scenario is running")),
             qPrintable(panel->noticeText()));
    QVERIFY(!console->faults()->plan().faultFor(QStringLiteral("queryLogistics")));
    QVERIFY(finished.wait(20000));
    QCOMPARE(finished.first().first().toBool(), true);
    QVERIFY(!console->faults()->hasActiveFaults());
}

// A shipped fault file: its faults appear in the fields, its description above them.
void tst_FaultPanel::aFaultFileIsShownFieldByField()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    FaultPanel *panel = console->window->faultPanel();
    panel->show();
    QCOMPARE(Testing::loadFaultFile(panel, sourceFile("resources/faults/logistics-flaky.json")),
             std::optional<bool>(true));
    QVERIFY(panel->noticeText().isEmpty());
    const std::optional<ToolFault> fault
        = console->faults()->plan().faultFor(QStringLiteral("queryLogistics"));
    QVERIFY(fault);
    QCOMPARE(fault->transientFailures, 2);

    QVERIFY(panel->selectTarget(QStringLiteral("tool:queryLogistics")));
    QCOMPARE(
        qobject_cast<QSpinBox *>(panel->fieldEditor(QStringLiteral("transientFailures")))->value(),
        2);
    QCOMPARE(
        qobject_cast<QSpinBox *>(panel->fieldEditor(QStringLiteral("latencyMs")))->value(), 150);
    QCOMPARE(qobject_cast<QSpinBox *>(panel->findChild<QSpinBox *>(QStringLiteral("faultSeed")))
                 ->value(),
        7);
    const auto *description = panel->findChild<QLabel *>(QStringLiteral("faultPlanDescription"));
    QVERIFY(description->text().contains(QStringLiteral("retries win")));
    QCOMPARE(console->window->faultChip()->text(), QStringLiteral("2 faults"));
    QVERIFY(console->window->windowTitle().contains(QStringLiteral("FAULTS ACTIVE")));

    // An edit on top of the file keeps the file's other faults.
    auto *failures
        = qobject_cast<QSpinBox *>(panel->fieldEditor(QStringLiteral("transientFailures")));
    failures->setValue(1);
    QCOMPARE(console->faults()->plan()
                 .faultFor(QStringLiteral("queryLogistics"))
                 ->transientFailures,
        1);
    QCOMPARE(
        console->faults()->plan().faultFor(QStringLiteral("queryLogistics"))->latencyMs, 150);

    // The window's Faults menu clears them too.
    auto *clear = console->window->findChild<QAction *>(QStringLiteral("clearAllFaultsAction"));
    QVERIFY(clear);
    clear->trigger();
    QVERIFY(!console->faults()->hasActiveFaults());
    QCOMPARE(
        qobject_cast<QSpinBox *>(panel->fieldEditor(QStringLiteral("transientFailures")))->value(),
        0);
}

// A file core refuses is named with the reason, and the plan in force stays as it was.
void tst_FaultPanel::aRefusedFileLeavesThePlanInForce()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    FaultPanel *panel = console->window->faultPanel();
    panel->show();
    QVERIFY(panel->selectTarget(QStringLiteral("tool:queryOrderStatus")));
    auto *notFound = qobject_cast<QCheckBox *>(panel->fieldEditor(QStringLiteral("notFound")));
    QVERIFY(notFound);
    notFound->click();
    QVERIFY(console->faults()->plan().faultFor(QStringLiteral("queryOrderStatus"))->notFound);

    const QString bad = console->dataDir.filePath(QStringLiteral("typo.json"));
    QVERIFY(writeFile(bad, R"({"tools": {"queryLogistic": {"hang": true}}})"));
    QCOMPARE(Testing::loadFaultFile(panel, bad), std::optional<bool>(false));
    QVERIFY2(panel->noticeText().contains(QStringLiteral("no such tool")),
        qPrintable(panel->noticeText()));
    QVERIFY(console->faults()->plan().faultFor(QStringLiteral("queryOrderStatus"))->notFound);
    QVERIFY(!console->faults()->plan().faultFor(QStringLiteral("queryLogistics")));
    QVERIFY(notFound->isChecked());
    QCOMPARE(console->window->faultChip()->text(), QStringLiteral("1 fault"));
}

// A tool whose retry policy is not the default is flagged like a fault; the panel offers to
// reset it.
void tst_FaultPanel::aCustomPolicyIsFlaggedLikeAFault()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    FaultPanel *panel = window->faultPanel();
    panel->show();
    auto *reset = panel->findChild<QPushButton *>(QStringLiteral("resetPoliciesButton"));
    QVERIFY(reset);
    QVERIFY(!reset->isVisible());

    RetryPolicy policy = console->policies()->defaultPolicy();
    policy.maxRetries = 0;
    QString error;
    QVERIFY2(console->policies()->setPolicy(QStringLiteral("queryInventory"), policy, &error),
        qPrintable(error));
    QCOMPARE(window->windowTitle(), QStringLiteral("Lin Wei (u-1001) \u00b7 t-acme \u2014 CUSTOM RETRY POLICY"));
    QCOMPARE(window->faultChip()->text(), QStringLiteral("1 custom policy"));
    QVERIFY(window->faultChip()->toolTip().contains(QStringLiteral("Check stock")));
    QVERIFY(reset->isVisible());
    QVERIFY(panel->findChild<QLabel *>(QStringLiteral("customPolicyNote"))
                ->text()
                .contains(QStringLiteral("Check stock")));

    QVERIFY(panel->selectTarget(QStringLiteral("model:primary")));
    auto *unavailable
        = qobject_cast<QCheckBox *>(panel->fieldEditor(QStringLiteral("unavailable")));
    QVERIFY(unavailable);
    unavailable->click();
    QVERIFY(console->faults()->plan().modelFault()->unavailable);
    QCOMPARE(window->windowTitle(),
        QStringLiteral("Lin Wei (u-1001) \u00b7 t-acme \u2014 FAULTS ACTIVE, CUSTOM RETRY POLICY"));
    QCOMPARE(window->faultChip()->text(), QStringLiteral("1 fault \u00b7 1 custom policy"));

    QTest::mouseClick(reset, Qt::LeftButton);
    QVERIFY(console->policies()->toolsWithCustomPolicy().isEmpty());
    QVERIFY(!reset->isVisible());
    QCOMPARE(window->windowTitle(), QStringLiteral("Lin Wei (u-1001) \u00b7 t-acme \u2014 FAULTS ACTIVE"));
    QCOMPARE(window->faultChip()->text(), QStringLiteral("1 fault"));
}

// Every tool, the backend and both providers are there, each with its own faults: a write
// fault only for the tool that writes, model faults only for the providers.
void tst_FaultPanel::everyTargetOffersItsFaults()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    FaultPanel *panel = console->window->faultPanel();
    panel->show();
    QCOMPARE(panel->targets(),
        (QStringList{QStringLiteral("tool:queryOrderStatus"),
            QStringLiteral("tool:queryLogistics"), QStringLiteral("tool:queryInventory"),
            QStringLiteral("tool:listOrderTickets"), QStringLiteral("tool:createTicket"),
            QStringLiteral("backend"),
            QStringLiteral("model:primary"), QStringLiteral("model:secondary")}));
    const QStringList toolKeys{QStringLiteral("latencyMs"), QStringLiteral("hang"),
        QStringLiteral("transientFailures"), QStringLiteral("permanentFailure"),
        QStringLiteral("permanentStatus"), QStringLiteral("accessDenied"),
        QStringLiteral("notFound"), QStringLiteral("failureProbability"),
        QStringLiteral("internalError")};
    const QStringList modelKeys{QStringLiteral("unavailable"), QStringLiteral("rateLimited"),
        QStringLiteral("retryAfterMs"), QStringLiteral("quotaExhausted"),
        QStringLiteral("malformedResponse"), QStringLiteral("streamStall"),
        QStringLiteral("malformedToolArguments"), QStringLiteral("unknownTool"),
        QStringLiteral("toolCallBurst")};
    for (const QString &target : panel->targets()) {
        QVERIFY(panel->selectTarget(target));
        const bool model = target.startsWith(QLatin1String("model:"));
        for (const QString &key : toolKeys) {
            if (key != QLatin1String("latencyMs"))
                QCOMPARE(panel->fieldEditor(key) != nullptr, !model);
        }
        for (const QString &key : modelKeys)
            QCOMPARE(panel->fieldEditor(key) != nullptr, model);
        QVERIFY(panel->fieldEditor(QStringLiteral("latencyMs")));
        QCOMPARE(panel->fieldEditor(QStringLiteral("commitThenLoseAnswer")) != nullptr,
            target == QLatin1String("tool:createTicket") || target == QLatin1String("backend"));
        // Every shown field has a name a screen reader can say.
        QVERIFY(!panel->fieldEditor(QStringLiteral("latencyMs"))->accessibleName().isEmpty());
    }
    // The HTTP status of a rejection means something only while the rejection is on.
    QVERIFY(panel->selectTarget(QStringLiteral("tool:createTicket")));
    QWidget *status = panel->fieldEditor(QStringLiteral("permanentStatus"));
    QVERIFY(!status->isEnabled());
    qobject_cast<QCheckBox *>(panel->fieldEditor(QStringLiteral("permanentFailure")))->click();
    QVERIFY(status->isEnabled());
}

// Core's bound on a model's rate limiting is 1000 attempts: 5000 is refused next to its field,
// the field keeps it, and the plan in force is unchanged. Corrected, it applies.
void tst_FaultPanel::aValueCoreRefusesStaysWithItsReason()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    FaultPanel *panel = console->window->faultPanel();
    panel->show();
    QVERIFY(panel->selectTarget(QStringLiteral("model:primary")));
    auto *latency = qobject_cast<QSpinBox *>(panel->fieldEditor(QStringLiteral("latencyMs")));
    latency->setValue(300);
    const FaultPlan before = console->faults()->plan();
    QCOMPARE(before.modelFault()->latencyMs, 300);

    auto *limited = qobject_cast<QSpinBox *>(panel->fieldEditor(QStringLiteral("rateLimited")));
    QVERIFY(limited);
    auto *retryAfter
        = qobject_cast<QSpinBox *>(panel->fieldEditor(QStringLiteral("retryAfterMs")));
    QVERIFY(retryAfter);
    QVERIFY(!retryAfter->isEnabled()); // only with rate limiting
    limited->setFocus();
    limited->selectAll();
    QTest::keyClicks(limited, QStringLiteral("5000"));
    QTest::keyClick(limited, Qt::Key_Return);
    QCOMPARE(limited->value(), 5000);
    QVERIFY2(panel->fieldProblem(QStringLiteral("rateLimited"))
                 .contains(QStringLiteral("models.primary.rateLimited: expected a whole number "
                                          "from 0 to 1000")),
        qPrintable(panel->fieldProblem(QStringLiteral("rateLimited"))));
    QCOMPARE(console->faults()->plan(), before);
    QVERIFY(!saveScreenshot(console->window.get(), QStringLiteral("faultpanel-refused.png"))
                 .isEmpty());

    limited->selectAll();
    QTest::keyClicks(limited, QStringLiteral("2"));
    QTest::keyClick(limited, Qt::Key_Return);
    QVERIFY(panel->fieldProblem(QStringLiteral("rateLimited")).isEmpty());
    QVERIFY(retryAfter->isEnabled());
    retryAfter->setValue(250);
    const std::optional<ModelFault> fault = console->faults()->plan().modelFault();
    QVERIFY(fault);
    QCOMPARE(fault->rateLimited, 2);
    QCOMPARE(fault->retryAfterMs, 250);
    QCOMPARE(fault->latencyMs, 300);
    QCOMPARE(console->window->faultChip()->text(), QStringLiteral("2 faults"));

    // The secondary provider is its own target.
    QVERIFY(panel->selectTarget(QStringLiteral("model:secondary")));
    qobject_cast<QCheckBox *>(panel->fieldEditor(QStringLiteral("quotaExhausted")))->click();
    QVERIFY(
        console->faults()->plan().modelFault(FaultPlan::Provider::Secondary)->quotaExhausted);
    QCOMPARE(panel->plan().value(QStringLiteral("models")).toObject().keys(),
        (QStringList{QStringLiteral("primary"), QStringLiteral("secondary")}));
}

// support-sim's section: core checks its shape and key names before anything is sent; on the
// embedded store the runtime says it cannot be put in force, and the panel says so.
void tst_FaultPanel::theSimSectionIsCheckedAndItsFateSaid()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    FaultPanel *panel = console->window->faultPanel();
    panel->show();
    auto *edit = panel->findChild<QPlainTextEdit *>(QStringLiteral("simFaults"));
    auto *send = panel->findChild<QPushButton *>(QStringLiteral("applySimFaultsButton"));
    QVERIFY(edit && send);

    edit->setPlainText(QStringLiteral("{\"routes\": "));
    QTest::mouseClick(send, Qt::LeftButton);
    QVERIFY2(panel->simProblem().contains(QStringLiteral("not a JSON object")),
        qPrintable(panel->simProblem()));
    edit->setPlainText(QStringLiteral(R"({"routes": {"logistics": {"statsu": 503}}})"));
    QTest::mouseClick(send, Qt::LeftButton);
    QVERIFY2(panel->simProblem().contains(QStringLiteral("sim.routes.logistics.statsu")),
        qPrintable(panel->simProblem()));
    QVERIFY(!console->faults()->plan().hasSimFaults());
    QCOMPARE(edit->toPlainText(), QStringLiteral(R"({"routes": {"logistics": {"statsu": 503}}})"));

    QSignalSpy refused(console->faults(), &FaultControl::faultsRefused);
    edit->setPlainText(
        QStringLiteral(R"({"routes": {"logistics": {"status": 503, "times": 2}}})"));
    QTest::mouseClick(send, Qt::LeftButton);
    QVERIFY2(panel->simProblem().isEmpty(), qPrintable(panel->simProblem()));
    QVERIFY(console->faults()->plan().hasSimFaults());
    QCOMPARE(console->window->faultChip()->text(), QStringLiteral("1 fault"));
    QTRY_VERIFY_WITH_TIMEOUT(!refused.isEmpty(), 5000);
    QVERIFY2(panel->noticeText().contains(QStringLiteral("not in force")),
        qPrintable(panel->noticeText()));
    QVERIFY(panel->noticeText().contains(refused.first().first().toString()));

    QTest::mouseClick(
        panel->findChild<QPushButton *>(QStringLiteral("clearAllFaultsButton")), Qt::LeftButton);
    QVERIFY(edit->toPlainText().isEmpty());
    QVERIFY(!console->faults()->hasActiveFaults());
}

// The model's faults apply live too: with "calls an unknown tool" on, the next turn's call is
// answered UNKNOWN_TOOL; off again, the lookup runs.
void tst_FaultPanel::aModelFaultChangesTheNextTurn()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    FaultPanel *panel = console->window->faultPanel();
    panel->show();
    QVERIFY(panel->selectTarget(QStringLiteral("model:primary")));
    auto *unknown = qobject_cast<QCheckBox *>(panel->fieldEditor(QStringLiteral("unknownTool")));
    QVERIFY(unknown);
    unknown->click();
    QVERIFY(console->faults()->plan().modelFault()->unknownTool);

    bool ok = false;
    const TurnResult during = askAndWait(*console, QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QCOMPARE(during.toolCalls.size(), 1);
    QCOMPARE(during.toolCalls.first().result.code, ResultCode::UnknownTool);
    QVERIFY(!callNamed(during, QStringLiteral("queryLogistics")));

    unknown->click();
    QVERIFY(!console->faults()->hasActiveFaults());
    const TurnResult after = askAndWait(*console, QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QVERIFY(callNamed(after, QStringLiteral("queryLogistics")));
    QCOMPARE(
        callNamed(after, QStringLiteral("queryLogistics"))->result.code, ResultCode::Ok);
}

// Opened in a window of its default size, every button of the panel is seen whole, in both
// languages, without scrolling sideways (issue #24 §6: they were cut off).
void tst_FaultPanel::itsButtonsShowWholeAtItsDefaultWidth()
{
    for (const QString &language : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
        ConsoleLanguage::install(language);
        const std::unique_ptr<Console> console = startConsole({});
        QVERIFY(console);
        ConsoleWindow *window = console->window.get();
        FaultPanel *panel = window->faultPanel();
        QTest::keySequence(window, QKeySequence(QStringLiteral("Ctrl+Shift+F")));
        QVERIFY(panel->isVisible());
        const QString flaky = QStringLiteral(AGENT_CONSOLE_SOURCE_DIR
                                             "/resources/faults/logistics-flaky.json");
        QCOMPARE(Testing::loadFaultFile(panel, flaky), std::optional<bool>(true));
        QTRY_VERIFY(panel->widget()->width() > 0);
        QCoreApplication::processEvents();
        QVERIFY(!saveScreenshot(window, QStringLiteral("faultpanel-default-%1.png").arg(language))
                     .isEmpty());
        auto *scroll = qobject_cast<QScrollArea *>(panel->widget());
        QVERIFY(scroll);
        QCOMPARE(scroll->horizontalScrollBar()->maximum(), 0);
        for (QPushButton *button : panel->findChildren<QPushButton *>()) {
            if (!button->isVisibleTo(panel))
                continue;
            const QRect inViewport(button->mapTo(scroll->viewport(), QPoint(0, 0)),
                                   button->size());
            QVERIFY2(inViewport.left() >= 0 && inViewport.right() < scroll->viewport()->width(),
                     qPrintable(language + QLatin1Char(' ') + button->text()));
            QVERIFY2(button->width() >= button->sizeHint().width(),
                     qPrintable(language + QLatin1Char(' ') + button->text()));
        }
    }
    ConsoleLanguage::install(QStringLiteral("en"));
}

namespace {

// The value a field's editor holds now, as the plan in force has it at `path`.
QJsonValue inForce(const Console &console, const QStringList &path, const char *key)
{
    QJsonObject object = console.faults()->plan().toJson();
    for (const QString &step : path)
        object = object.value(step).toObject();
    return object.value(QLatin1String(key));
}

const FaultField *coreField(const char *key, FaultField::Scope scope)
{
    for (const FaultField &field : FaultPlan::fields()) {
        if (qstrcmp(field.key, key) == 0 && field.scope == scope)
            return &field;
    }
    return nullptr;
}

// Turns a field on with its editor, as a tester would: a qualifier's editor waits for it.
void switchOn(FaultPanel *panel, const FaultField &field)
{
    QWidget *editor = panel->fieldEditor(QLatin1String(field.key));
    if (auto *box = qobject_cast<QCheckBox *>(editor))
        box->setChecked(true);
    else if (auto *spin = qobject_cast<QSpinBox *>(editor))
        spin->setValue(int(field.min) + 1);
}

} // namespace

// The form is core's fields in the panel's words (FaultPlan::fields()): each has its editor
// on the targets it belongs to, the panel has words for no other, and each editor takes all
// of core's range while a value past it is typed whole and refused beside its field with
// core's reason. A bound, a key or a choice written again in the panel fails here once core's
// changes.
void tst_FaultPanel::theFormIsCoresFields()
{
    QCOMPARE(FaultPanel::fieldsWithoutWords(), QStringList());
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    FaultPanel *panel = console->window->faultPanel();
    panel->show();
    for (const FaultField &field : FaultPlan::fields()) {
        const QString key = QLatin1String(field.key);
        const bool model = field.scope == FaultField::Scope::Model;
        const QString tool = field.scope == FaultField::Scope::WriteTool
            ? QStringLiteral("createTicket")
            : QStringLiteral("queryLogistics");
        const QStringList path = model
            ? QStringList{QStringLiteral("models"), QStringLiteral("primary")}
            : QStringList{QStringLiteral("tools"), tool};
        QVERIFY(panel->selectTarget(model ? QStringLiteral("model:primary")
                                          : QStringLiteral("tool:") + tool));
        QWidget *editor = panel->fieldEditor(key);
        QVERIFY2(editor, qPrintable(key));
        QVERIFY2(!editor->accessibleName().isEmpty() && !editor->toolTip().isEmpty(),
                 qPrintable(key));
        if (field.qualifies) {
            QVERIFY(!editor->isEnabled());
            const FaultField *qualified = coreField(field.qualifies, field.scope);
            QVERIFY(qualified);
            switchOn(panel, *qualified);
            QVERIFY2(editor->isEnabled(), qPrintable(key));
        }
        switch (field.kind) {
        case FaultField::Kind::Flag: {
            auto *box = qobject_cast<QCheckBox *>(editor);
            QVERIFY2(box, qPrintable(key));
            box->setChecked(true);
            QCOMPARE(inForce(*console, path, field.key), QJsonValue(true));
            break;
        }
        case FaultField::Kind::Millis:
        case FaultField::Kind::Count: {
            auto *spin = qobject_cast<QSpinBox *>(editor);
            QVERIFY2(spin, qPrintable(key));
            QVERIFY2(spin->minimum() <= field.min && spin->maximum() > field.max,
                     qPrintable(key));
            const FaultPlan before = console->faults()->plan();
            spin->setValue(int(field.max) + 1);
            QCOMPARE(spin->value(), int(field.max) + 1);
            QCOMPARE(panel->fieldProblem(key),
                     QStringLiteral("Not applied: fault plan: %1.%2: expected a whole number "
                                    "from %3 to %4")
                         .arg(path.join(QLatin1Char('.')), key)
                         .arg(qint64(field.min))
                         .arg(qint64(field.max)));
            QCOMPARE(console->faults()->plan(), before);
            spin->setValue(int(field.max));
            QVERIFY2(panel->fieldProblem(key).isEmpty(), qPrintable(panel->fieldProblem(key)));
            QCOMPARE(inForce(*console, path, field.key).toDouble(), field.max);
            break;
        }
        case FaultField::Kind::Probability: {
            auto *spin = qobject_cast<QDoubleSpinBox *>(editor);
            QVERIFY2(spin, qPrintable(key));
            QCOMPARE(spin->minimum(), field.min);
            QCOMPARE(spin->maximum(), field.max);
            spin->setValue(field.max);
            QCOMPARE(inForce(*console, path, field.key).toDouble(), field.max);
            break;
        }
        case FaultField::Kind::HttpStatus: {
            auto *combo = qobject_cast<QComboBox *>(editor);
            QVERIFY2(combo, qPrintable(key));
            QList<int> offered;
            for (int index = 0; index < combo->count(); ++index)
                offered.append(combo->itemData(index).toInt());
            QCOMPARE(offered, field.choices);
            combo->setCurrentIndex(combo->count() - 1);
            QCOMPARE(inForce(*console, path, field.key).toInt(), field.choices.last());
            break;
        }
        }
        panel->clearAllFaults();
        QVERIFY(!console->faults()->hasActiveFaults());
    }
}

QTEST_MAIN(tst_FaultPanel)
#include "tst_faultpanel.moc"
