// The console window on the offscreen platform over the real core: real store, real executor,
// the offline demo model, fault plans from files. No mocks.
#include "core/agent/agentloop.h"
#include "core/agent/agentruntime.h"
#include "core/agent/turnresult.h"
#include "core/resilience/retrypolicy.h"
#include "ui/mainwindow.h"
#include "ui/noticebanner.h"
#include "ui/questioninput.h"
#include "ui/statuschip.h"
#include "ui/toolcallcard.h"
#include "ui/transcriptview.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <memory>

using namespace AgentConsole;
using namespace std::chrono_literals;

namespace {

constexpr int turnTimeoutMs = 20000;
const QString multiIntentQuestion =
    QStringLiteral("Where is order A1001 and is SKU-200 in stock?");

// One console as a staff member would see it: its own data directory, runtime and window.
// The window goes before the runtime it points into.
struct Console
{
    QTemporaryDir dataDir;
    std::unique_ptr<AgentRuntime> runtime;
    std::unique_ptr<ConsoleWindow> window;

    AgentLoop *loop() const { return runtime->agentLoop(); }
    QuestionInput *input() const { return window->questionInput(); }
    TranscriptView *transcript() const { return window->transcript(); }
};

RetryPolicy shortToolPolicy()
{
    RetryPolicy policy;
    policy.attemptTimeout = 200ms;
    policy.initialDelay = 10ms;
    policy.maxDelay = 20ms;
    return policy;
}

QStringList names(const QList<ToolCallCard *> &cards)
{
    QStringList result;
    for (const ToolCallCard *card : cards)
        result.append(card->toolName());
    return result;
}

ToolCallCard *cardNamed(const QList<ToolCallCard *> &cards, const QString &name)
{
    for (ToolCallCard *card : cards) {
        if (card->toolName() == name)
            return card;
    }
    return nullptr;
}

QString saveScreenshot(QWidget *window, const QString &fileName)
{
    const QString path = QDir::current().absoluteFilePath(fileName);
    if (!window->grab().save(path))
        return {};
    qInfo("screenshot: %s", qPrintable(path));
    return path;
}

} // namespace

class tst_ConsoleWindow final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void multiIntentQuestionShowsAnswerAndOneCardPerTool();
    void failingToolGivesPartialSuccess();
    void shiftEnterInsertsNewlineAndDoesNotSend();
    void cancelStopsTheRunningTurn();

private:
    // Starts a console on a fresh data directory and waits until its runtime is ready.
    std::unique_ptr<Console> startConsole(RuntimeOptions options, const QByteArray &faultPlan = {});
    // Types `question` and presses Enter; returns the finished turn.
    TurnResult askAndWait(Console &console, const QString &question, bool *ok);
};

void tst_ConsoleWindow::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
    qRegisterMetaType<AgentConsole::ToolCallRecord>();
}

std::unique_ptr<Console> tst_ConsoleWindow::startConsole(RuntimeOptions options,
                                                         const QByteArray &faultPlan)
{
    auto console = std::make_unique<Console>();
    if (!console->dataDir.isValid()) {
        qWarning("no temporary directory");
        return {};
    }
    options.dataDirectory = console->dataDir.path();
    if (!faultPlan.isEmpty()) {
        QFile plan(console->dataDir.filePath(QStringLiteral("faults.json")));
        if (!plan.open(QIODevice::WriteOnly) || plan.write(faultPlan) != faultPlan.size()) {
            qWarning("cannot write the fault plan");
            return {};
        }
        options.faultPlanFile = plan.fileName();
    }
    console->runtime = std::make_unique<AgentRuntime>(options);
    console->window = std::make_unique<ConsoleWindow>(console->runtime.get());
    console->window->resize(1000, 760);
    console->window->show();
    if (!QTest::qWaitForWindowExposed(console->window.get()))
        return {};

    // Until the store is ready the window says so.
    if (!console->runtime->isReady()
        && !console->window->noticeBanner()->text().contains(QStringLiteral("Preparing"))) {
        qWarning("no \"Preparing the store\" notice: %s",
                 qPrintable(console->window->noticeBanner()->text()));
        return {};
    }

    QSignalSpy ready(console->runtime.get(), &AgentRuntime::ready);
    QSignalSpy failed(console->runtime.get(), &AgentRuntime::failed);
    console->runtime->start();
    if (!ready.wait(turnTimeoutMs) && ready.isEmpty()) {
        qWarning("runtime not ready: %s",
                 failed.isEmpty() ? "no signal" : qPrintable(failed.first().first().toString()));
        return {};
    }
    if (console->window->noticeBanner()->isVisible()) {
        qWarning("banner still shown after ready()");
        return {};
    }
    console->window->activateWindow();
    console->input()->setFocus();
    return console;
}

TurnResult tst_ConsoleWindow::askAndWait(Console &console, const QString &question, bool *ok)
{
    *ok = false;
    QSignalSpy finished(console.loop(), &AgentLoop::turnFinished);
    QTest::keyClicks(console.input(), question);
    QTest::keyClick(console.input(), Qt::Key_Return);
    if (!console.window->isTurnRunning() && finished.isEmpty()) {
        qWarning("Enter did not start a turn");
        return {};
    }
    if (finished.isEmpty() && !finished.wait(turnTimeoutMs)) {
        qWarning("the turn did not finish");
        return {};
    }
    *ok = true;
    return finished.first().first().value<TurnResult>();
}

void tst_ConsoleWindow::multiIntentQuestionShowsAnswerAndOneCardPerTool()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    QVERIFY(!window->sendButton()->isEnabled()); // nothing typed yet
    QVERIFY(!window->cancelButton()->isEnabled());

    bool ok = false;
    const TurnResult result = askAndWait(*console, multiIntentQuestion, &ok);
    QVERIFY(ok);
    QCOMPARE(turnStatusName(result.status), turnStatusName(TurnStatus::Completed));

    const QStringList turns = console->transcript()->requestIds();
    QCOMPARE(turns, QStringList{result.requestId});
    QCOMPARE(console->transcript()->questionText(result.requestId), multiIntentQuestion);
    const QString answer = console->transcript()->answerText(result.requestId);
    QVERIFY(!answer.isEmpty());
    QCOMPARE(answer, result.answer);
    QVERIFY2(window->findChildren<QLabel *>().size() > 0, "labels");
    bool answerShown = false;
    for (const QLabel *label : window->findChildren<QLabel *>())
        answerShown = answerShown || (label->isVisible() && label->text() == answer);
    QVERIFY2(answerShown, qPrintable(answer));
    QCOMPARE(console->transcript()->turnStatusText(result.requestId), QStringLiteral("Completed"));

    const QList<ToolCallCard *> cards = console->transcript()->toolCallCards(result.requestId);
    QStringList cardNames = names(cards);
    cardNames.sort();
    QCOMPARE(cardNames, (QStringList{QStringLiteral("queryInventory"),
                                     QStringLiteral("queryLogistics")}));
    for (ToolCallCard *card : cards) {
        QCOMPARE(card->statusText(), QStringLiteral("OK"));
        QVERIFY2(card->attemptSummaryText().startsWith(QStringLiteral("1 attempt · ")),
                 qPrintable(card->attemptSummaryText()));
        QVERIFY(card->isVisible());
    }
    ToolCallCard *logistics = cardNamed(cards, QStringLiteral("queryLogistics"));
    QVERIFY(logistics);
    QVERIFY2(logistics->argumentsText().contains(QStringLiteral("A1001")),
             qPrintable(logistics->argumentsText()));
    QVERIFY(cardNamed(cards, QStringLiteral("queryInventory"))
                ->argumentsText()
                .contains(QStringLiteral("SKU-200")));

    // Clicking a card shows its attempt timeline; clicking again hides it.
    QVERIFY(!logistics->isExpanded());
    QTest::mouseClick(logistics, Qt::LeftButton);
    QVERIFY(logistics->isExpanded());
    QVERIFY2(logistics->timelineText().startsWith(QStringLiteral("#1 succeeded in ")),
             qPrintable(logistics->timelineText()));
    QTest::mouseClick(logistics, Qt::LeftButton);
    QVERIFY(!logistics->isExpanded());

    // The turn is over: the input is empty again and Cancel is off.
    QVERIFY(console->input()->toPlainText().isEmpty());
    QVERIFY(!window->isTurnRunning());
    QVERIFY(!window->cancelButton()->isEnabled());
    QVERIFY(window->findChild<QLabel *>(QStringLiteral("policyLabel"))
                ->text()
                .contains(QStringLiteral("worst case")));

    QVERIFY(!saveScreenshot(window, QStringLiteral("consolewindow-multi-intent.png")).isEmpty());
}

void tst_ConsoleWindow::failingToolGivesPartialSuccess()
{
    RuntimeOptions options;
    options.toolPolicy = shortToolPolicy();
    const std::unique_ptr<Console> console = startConsole(
        options, R"({"seed": 7, "tools": {"queryLogistics": {"transientFailures": 99}}})");
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    QVERIFY(window->findChild<StatusChip *>(QStringLiteral("faultChip"))->isVisible());

    bool ok = false;
    const TurnResult result = askAndWait(*console, multiIntentQuestion, &ok);
    QVERIFY(ok);
    QCOMPARE(turnStatusName(result.status), turnStatusName(TurnStatus::Completed));
    QVERIFY(result.isPartialSuccess());
    QCOMPARE(console->transcript()->turnStatusText(result.requestId),
             QStringLiteral("Partial answer"));

    const QList<ToolCallCard *> cards = console->transcript()->toolCallCards(result.requestId);
    QCOMPARE(cards.size(), 2);
    ToolCallCard *logistics = cardNamed(cards, QStringLiteral("queryLogistics"));
    ToolCallCard *inventory = cardNamed(cards, QStringLiteral("queryInventory"));
    QVERIFY(logistics);
    QVERIFY(inventory);
    QCOMPARE(logistics->statusText(), QStringLiteral("Unavailable"));
    QVERIFY2(logistics->attemptSummaryText().startsWith(QStringLiteral("3 attempts · ")),
             qPrintable(logistics->attemptSummaryText()));
    QCOMPARE(inventory->statusText(), QStringLiteral("OK"));

    const QString answer = console->transcript()->answerText(result.requestId);
    QVERIFY2(answer.contains(QStringLiteral("temporarily unavailable"), Qt::CaseInsensitive),
             qPrintable(answer));

    // The timeline: three transient failures, a backoff after each but the last.
    QTest::mouseClick(logistics, Qt::LeftButton);
    QVERIFY(logistics->isExpanded());
    const QStringList timeline = logistics->timelineText().split(QLatin1Char('\n'));
    QCOMPARE(timeline.size(), 3);
    for (int i = 0; i < timeline.size(); ++i) {
        QVERIFY2(timeline.at(i).startsWith(QStringLiteral("#%1 failed (transient)").arg(i + 1)),
                 qPrintable(timeline.at(i)));
        QCOMPARE(timeline.at(i).contains(QStringLiteral("backoff")), i < 2);
    }

    QVERIFY(!saveScreenshot(window, QStringLiteral("consolewindow-partial-failure.png"))
                 .isEmpty());
}

void tst_ConsoleWindow::shiftEnterInsertsNewlineAndDoesNotSend()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    QuestionInput *input = console->input();
    QSignalSpy started(console->loop(), &AgentLoop::turnStarted);

    QTest::keyClicks(input, QStringLiteral("Where is order A1001?"));
    QTest::keyClick(input, Qt::Key_Return, Qt::ShiftModifier);
    QTest::keyClicks(input, QStringLiteral("Is SKU-200 in stock?"));
    const QString twoLines = QStringLiteral("Where is order A1001?\nIs SKU-200 in stock?");
    QCOMPARE(input->toPlainText(), twoLines);
    QVERIFY(!console->window->isTurnRunning());
    QVERIFY(console->transcript()->requestIds().isEmpty());
    QCOMPARE(started.size(), 0);
    QVERIFY(console->window->sendButton()->isEnabled());

    // Enter sends both lines as one question.
    QSignalSpy finished(console->loop(), &AgentLoop::turnFinished);
    QTest::keyClick(input, Qt::Key_Return);
    QVERIFY(console->window->isTurnRunning() || !finished.isEmpty());
    QVERIFY(finished.size() == 1 || finished.wait(turnTimeoutMs));
    const TurnResult result = finished.first().first().value<TurnResult>();
    QCOMPARE(result.question, twoLines);
    QCOMPARE(console->transcript()->questionText(result.requestId), twoLines);
    QVERIFY(input->toPlainText().isEmpty());
}

void tst_ConsoleWindow::cancelStopsTheRunningTurn()
{
    RuntimeOptions options;
    RetryPolicy slow = RetryPolicy::defaults();
    slow.attemptTimeout = 60s; // the hang would outlast the test; only Cancel can end it
    options.toolPolicy = slow;
    const std::unique_ptr<Console> console =
        startConsole(options, R"({"tools": {"queryLogistics": {"hang": true}}})");
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    TranscriptView *transcript = console->transcript();

    // The GUI thread keeps ticking while the tool hangs on the pool.
    QElapsedTimer sinceTick;
    qint64 longestGapMs = 0;
    QTimer heartbeat;
    heartbeat.setInterval(10);
    connect(&heartbeat, &QTimer::timeout, this, [&] {
        longestGapMs = std::max(longestGapMs, sinceTick.restart());
    });

    QSignalSpy finished(console->loop(), &AgentLoop::turnFinished);
    QTest::keyClicks(console->input(), QStringLiteral("Where is order A1001?"));
    QTest::keyClick(console->input(), Qt::Key_Return);
    QVERIFY(window->isTurnRunning());
    sinceTick.start();
    heartbeat.start();

    QTRY_VERIFY_WITH_TIMEOUT(!transcript->requestIds().isEmpty()
                                 && !transcript->toolCallCards(transcript->requestIds().first())
                                         .isEmpty(),
                             turnTimeoutMs);
    const QString requestId = transcript->requestIds().first();
    ToolCallCard *card = transcript->toolCallCards(requestId).first();
    QCOMPARE(card->toolName(), QStringLiteral("queryLogistics"));
    QCOMPARE(card->statusText(), QStringLiteral("Running…"));
    QVERIFY(window->cancelButton()->isEnabled());
    QVERIFY(!window->sendButton()->isEnabled());
    QVERIFY(finished.isEmpty());

    // The window stays responsive: it takes typing while the turn runs.
    QTest::keyClicks(console->input(), QStringLiteral("draft"));
    QCOMPARE(console->input()->toPlainText(), QStringLiteral("draft"));
    console->input()->clear();

    QElapsedTimer cancelling;
    cancelling.start();
    QTest::mouseClick(window->cancelButton(), Qt::LeftButton);
    QVERIFY(finished.size() == 1 || finished.wait(turnTimeoutMs));
    heartbeat.stop();
    QVERIFY2(cancelling.elapsed() < 10000, "cancel did not reach the hanging tool");
    QVERIFY2(longestGapMs < 500, qPrintable(QString::number(longestGapMs)));

    const TurnResult result = finished.first().first().value<TurnResult>();
    QCOMPARE(turnStatusName(result.status), turnStatusName(TurnStatus::Cancelled));
    QCOMPARE(transcript->turnStatusText(requestId), QStringLiteral("Cancelled"));
    QCOMPARE(card->statusText(), QStringLiteral("Cancelled"));
    QVERIFY(!window->isTurnRunning());
    QVERIFY(!window->cancelButton()->isEnabled());

    // New input is accepted and runs: inventory is not affected by the fault plan.
    bool ok = false;
    const TurnResult next = askAndWait(*console, QStringLiteral("Is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    QCOMPARE(turnStatusName(next.status), turnStatusName(TurnStatus::Completed));
    QCOMPARE(names(transcript->toolCallCards(next.requestId)),
             QStringList{QStringLiteral("queryInventory")});
    QCOMPARE(transcript->toolCallCards(next.requestId).first()->statusText(),
             QStringLiteral("OK"));
}

QTEST_MAIN(tst_ConsoleWindow)
#include "tst_consolewindow.moc"
