// The window as a support agent meets it (issue #41 §4, §5), in English and Simplified Chinese
// at 1024×700 and 1600×1000: the first start (the staff layout, the examples), three ordinary
// turns that fit on one screen at the small size, a scenario run kept apart from the
// conversation, and the keyboard's focus on a card's button.
// Screenshots go to AGENT_CONSOLE_SCREENSHOT_DIR for people to look at.
#include "consolefixture.h"
#include "screenshots.h"

#include "ui/common/keyboardfocusring.h"
#include "ui/diagnostics/diagnosticsdock.h"
#include "ui/faults/scenariopanel.h"
#include "ui/history/historysidebar.h"
#include "core/scenarios/scenariorunner.h"
#include "ui/transcript/confirmationpanel.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/window/consolelanguage.h"

#include <QApplication>
#include <QClipboard>
#include <QGuiApplication>
#include <QListWidget>
#include <QPushButton>
#include <QToolButton>
#include <QSignalSpy>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

class tst_StaffScreens : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup();
    void aSupportAgentsScreens_data();
    void aSupportAgentsScreens();

private:
    std::unique_ptr<ConsoleFixture> m_console;
};

void tst_StaffScreens::cleanup()
{
    m_console.reset();
    ConsoleLanguage::install(QStringLiteral("en"));
}

void tst_StaffScreens::aSupportAgentsScreens_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QSize>("size");
    QTest::addColumn<QStringList>("questions");
    const QStringList english{QStringLiteral("Where is order A1001?"),
                              QStringLiteral("Is SKU-300 in stock?"),
                              QStringLiteral("What is the status of order A1002?")};
    const QStringList chinese{QStringLiteral("订单 A1001 到哪里了？"),
                              QStringLiteral("SKU-300 有货吗？"),
                              QStringLiteral("订单 A1002 的状态是什么？")};
    QTest::newRow("en 1024x700") << "en" << QSize(1024, 700) << english;
    QTest::newRow("en 1600x1000") << "en" << QSize(1600, 1000) << english;
    QTest::newRow("zh_CN 1024x700") << "zh_CN" << QSize(1024, 700) << chinese;
    QTest::newRow("zh_CN 1600x1000") << "zh_CN" << QSize(1600, 1000) << chinese;
}

void tst_StaffScreens::aSupportAgentsScreens()
{
    QFETCH(QString, language);
    QFETCH(QSize, size);
    QFETCH(QStringList, questions);
    ConsoleLanguage::install(language);
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    ConsoleWindow *window = m_console->window.get();
    window->resize(size);
    const QString tag = QStringLiteral("%1-%2x%3").arg(language).arg(size.width())
                            .arg(size.height());

    // The first start: the staff layout (no engineers' dock), examples that ask.
    QVERIFY(!window->diagnosticsDock()->isVisible());
    QCOMPARE(window->transcript()->exampleButtons().size(), 3);
    QVERIFY(!saveScreenshot(window, QStringLiteral("staff-first-start-%1.png").arg(tag))
                 .isEmpty());

    // Three ordinary turns: at the small size too they fit on one screen together.
    QStringList ids;
    for (const QString &question : questions) {
        bool ok = false;
        ids.append(m_console->askAndWait(question, &ok).requestId);
        QVERIFY(ok);
    }
    QVERIFY(!saveScreenshot(window, QStringLiteral("staff-three-turns-%1.png").arg(tag))
                 .isEmpty());
    TranscriptView *transcript = window->transcript();
    const QRect seen = transcript->viewport()->rect();
    for (const QString &id : std::as_const(ids)) {
        auto *turn = transcript->findChild<QWidget *>(QStringLiteral("turn-") + id);
        QVERIFY2(turn && turn->isVisible(), qPrintable(id));
        const QRect where(turn->mapTo(transcript->viewport(), QPoint(0, 0)), turn->size());
        QVERIFY2(seen.contains(where),
                 qPrintable(QStringLiteral("turn %1 at %2,%3 %4×%5 is not all on a %6 px screen")
                                .arg(id).arg(where.x()).arg(where.y()).arg(where.width())
                                .arg(where.height()).arg(seen.height())));
        // Each lookup says what it found on its card's first line.
        for (ToolCallCard *card : transcript->toolCallCards(id))
            QVERIFY2(!card->findingText().isEmpty(), qPrintable(card->titleText()));
    }
    // Copy puts one line staff can paste on the clipboard, and says so.
    ToolCallCard *first = transcript->toolCallCards(ids.first()).value(0);
    QVERIFY(first);
    QTest::mouseClick(first->copyButton(), Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), first->copyText());
    QVERIFY2(first->copyText().contains(first->findingText()), qPrintable(first->copyText()));
    QVERIFY(!first->copyText().contains(QLatin1String("queryLogistics")));
    QCOMPARE(first->copyButton()->text(),
             language == QLatin1String("en") ? QStringLiteral("Copied")
                                             : QStringLiteral("已复制"));

    // A scenario run beside the conversation: its turn alone on screen while it runs, marked;
    // then the conversation back, History listing both, the verdict in the panel.
    ScenarioPanel *scenarios = window->scenarioPanel();
    scenarios->show();
    auto *runner = scenarios->findChild<ScenarioRunner *>();
    QVERIFY(runner);
    QSignalSpy runTurns(runner, &ScenarioRunner::turnFinished);
    QSignalSpy verdict(scenarios, &ScenarioPanel::finished);
    QVERIFY2(scenarios->runScenario(QStringLiteral("flaky-then-ok")),
             qPrintable(scenarios->noticeText()));
    QVERIFY(runTurns.wait(20000));
    QVERIFY(!saveScreenshot(window, QStringLiteral("staff-scenario-running-%1.png").arg(tag))
                 .isEmpty());
    QVERIFY(verdict.size() == 1 || verdict.wait(20000));
    QCOMPARE(verdict.first().first().toBool(), true);
    QTRY_COMPARE(transcript->requestIds(), ids);
    QTRY_COMPARE(window->historySidebar()->rowTexts().size(), 2);
    // History points at the conversation on screen, not at the run.
    auto *historyList = window->historySidebar()->findChild<QListWidget *>(
        QStringLiteral("historyList"));
    QVERIFY(historyList);
    const QString scenarioMark = language == QLatin1String("en") ? QStringLiteral("Scenario run")
                                                                 : QStringLiteral("场景运行");
    QTRY_VERIFY(historyList->currentRow() >= 0);
    const QString selectedRow = window->historySidebar()->rowTexts().value(historyList->currentRow());
    QVERIFY2(!selectedRow.contains(scenarioMark), qPrintable(selectedRow));
    QVERIFY(!saveScreenshot(window, QStringLiteral("staff-scenario-apart-%1.png").arg(tag))
                 .isEmpty());
    window->findChild<QAction *>(QStringLiteral("staffLayoutAction"))->trigger();
    QVERIFY(!scenarios->isVisible());

    // The keyboard on a card's button: focus shown, Enter presses it.
    const QString ticket = m_console->loop()->ask(
        language == QLatin1String("en")
            ? QStringLiteral("Create an after-sales ticket for order A1003: the mug arrived broken")
            : QStringLiteral("为订单 A1003 创建售后工单：杯子到货时已破损"));
    QVERIFY(!ticket.isEmpty());
    ConfirmationPanel *panel = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (ToolCallCard *card : transcript->toolCallCards(ticket)) {
                if (card->confirmationPanel() && card->confirmationPanel()->isAwaitingAnswer())
                    panel = card->confirmationPanel();
            }
            return panel && panel->confirmButton()->isEnabled();
        }(),
        20000);
    // Tab from the question box goes back round to the card's buttons; the ring shows where.
    QApplication::setActiveWindow(window);
    QVERIFY(QTest::qWaitForWindowActive(window));
    window->questionInput()->setFocus(Qt::OtherFocusReason);
    for (int step = 0; step < 30 && !panel->confirmButton()->hasFocus(); ++step)
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Backtab, Qt::ShiftModifier);
    QVERIFY(panel->confirmButton()->hasFocus());
    QCOMPARE(KeyboardFocusRing::forApplication()->ringedWidget(), panel->confirmButton());
    QVERIFY(!saveScreenshot(window, QStringLiteral("staff-focus-on-card-%1.png").arg(tag))
                 .isEmpty());
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);
    QTest::keyClick(panel->confirmButton(), Qt::Key_Enter, Qt::KeypadModifier);
    QVERIFY(finished.wait(20000));
    QVERIFY(finished.first().first().value<TurnResult>().toolCalls.value(0).result.success);
}

QTEST_MAIN(tst_StaffScreens)
#include "tst_staffscreens.moc"
