// The console window on the offscreen platform over the real core: real store, real executor,
// the offline demo model, fault plans from files. No mocks.
#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/runtimetestseam.h"
#include "core/turn/turnresult.h"
#include "core/resilience/retrypolicy.h"
#include "core/resilience/toolexecutor.h"
#include "core/support/supportfailures.h"
#include "ui/transcript/answertext.h"
#include "ui/diagnostics/diagnosticsdock.h"
#include "ui/window/consolewindow.h"
#include "ui/common/noticebanner.h"
#include "ui/transcript/questioninput.h"
#include "ui/common/statuschip.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/toolcalltext.h"
#include "ui/transcript/transcriptview.h"

#include "transcriptwait.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocument>
#include <QTimer>
#include <QVBoxLayout>

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

// Nested layouts settle over several event-loop passes (a card posts a layout request to its
// turn, the turn to the transcript column, ...); a screenshot waits until none is pending.
void settleLayouts()
{
    for (int pass = 0; pass < 16; ++pass)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
}

QString saveScreenshot(QWidget *window, const QString &fileName)
{
    Testing::waitUntilShown(window);
    settleLayouts();
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
    void aTimedOutLookupIsNotAnsweredInGreen();
    void callsOverTheBoundShareOneLine();
    void shiftEnterInsertsNewlineAndDoesNotSend();
    void cancelStopsTheRunningTurn();
    void logisticsDownLeavesTheOtherToolsAnswering();
    void cardsNameEveryOutcomeTruly_data();
    void cardsNameEveryOutcomeTruly();
    void aHalfOpenRefusalPromisesNoCoolDown();
    void aCodeNobodyHereKnowsIsShownAsGiven_data();
    void aCodeNobodyHereKnowsIsShownAsGiven();
    void failedRuntimeShowsErrorBanner();
    void turnsLeftOutOfTheRequestAreSaid();

private:
    // Starts a console on a fresh data directory and waits until its runtime is ready.
    std::unique_ptr<Console> startConsole(RuntimeOptions options,
                                          const QByteArray &faultPlan = {});
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
    const bool settled = QTest::qWaitFor(
        [&] { return !ready.isEmpty() || !failed.isEmpty(); }, turnTimeoutMs);
    if (!settled || ready.isEmpty()) {
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
    // The transcript shows the finished turn at the next turns of the event loop.
    if (!Testing::waitUntilShown(console.window.get())) {
        qWarning("the window did not show the finished turn");
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

    // What the transcript shows each time a piece of the answer arrives.
    QStringList deltas;
    QStringList shownWhileStreaming;
    QObject streamWatcher; // ends the connection before the locals it captures go away
    connect(console->loop(), &AgentLoop::answerDelta, &streamWatcher,
            [&](const QString &requestId, const QString &text) {
                deltas.append(text);
                shownWhileStreaming.append(console->transcript()->answerText(requestId));
                QVERIFY(console->transcript()->turnStatusText(requestId).isEmpty());
            });

    bool ok = false;
    const TurnResult result = askAndWait(*console, multiIntentQuestion, &ok);
    QVERIFY(ok);
    QCOMPARE(turnStatusName(result.status), turnStatusName(TurnStatus::Completed));

    // The answer streamed in piece by piece, and the window showed each piece as it came.
    QVERIFY2(deltas.size() >= 2, qPrintable(deltas.join(QLatin1Char('|'))));
    for (qsizetype i = 0; i < deltas.size(); ++i)
        QCOMPARE(shownWhileStreaming.at(i), deltas.mid(0, i + 1).join(QString()));

    const QStringList turns = console->transcript()->requestIds();
    QCOMPARE(turns, QStringList{result.requestId});
    QCOMPARE(console->transcript()->questionText(result.requestId), multiIntentQuestion);
    const QString answer = console->transcript()->answerText(result.requestId);
    QVERIFY(!answer.isEmpty());
    QCOMPARE(answer, result.answer);
    bool answerShown = false;
    // The answer is rendered from Markdown: two lookups make a list (#41 §4), shown as one.
    QVERIFY2(answer.startsWith(QLatin1String("- ")), qPrintable(answer));
    QTextDocument rendered;
    rendered.setMarkdown(answer, QTextDocument::MarkdownDialectGitHub);
    for (const AnswerText *shown : window->findChildren<AnswerText *>()) {
        answerShown = answerShown
            || (shown->isVisible() && shown->plainText() == rendered.toPlainText());
    }
    QVERIFY2(answerShown, qPrintable(answer));
    QCOMPARE(console->transcript()->turnStatusText(result.requestId), QStringLiteral("Answered"));

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
    // The policy moved from the status bar to the diagnostics dock.
    QVERIFY2(window->diagnosticsDock()->policyText().contains(QStringLiteral("worst case")),
             qPrintable(window->diagnosticsDock()->policyText()));
    // The staff layout keeps the engineers' dock closed; its shortcut opens it (#41 §4).
    QVERIFY(!window->diagnosticsDock()->isVisible());
    QTest::keySequence(window, QKeySequence(QStringLiteral("Ctrl+Shift+D")));
    QTRY_VERIFY(window->diagnosticsDock()->isVisible());

    console->input()->setFocus();
    QVERIFY(!saveScreenshot(window, QStringLiteral("consolewindow-multi-intent.png")).isEmpty());
}

// Before: a turn whose only lookup timed out showed a green "Completed".
void tst_ConsoleWindow::aTimedOutLookupIsNotAnsweredInGreen()
{
    RuntimeOptions options;
    options.toolPolicy = shortToolPolicy();
    const std::unique_ptr<Console> console =
        startConsole(options, R"({"seed": 7, "tools": {"queryLogistics": {"hang": true}}})");
    QVERIFY(console);
    bool ok = false;
    const TurnResult result = askAndWait(*console, QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QCOMPARE(turnStatusName(result.status), turnStatusName(TurnStatus::Completed));
    QCOMPARE(turnOutcomeName(result.outcome()), turnOutcomeName(TurnOutcome::Unanswered));
    QCOMPARE(console->transcript()->turnStatusText(result.requestId),
             QStringLiteral("Not answered"));
    const auto chips = console->window->findChildren<StatusChip *>();
    const auto chip = std::find_if(chips.cbegin(), chips.cend(), [](const StatusChip *c) {
        return c->text() == QLatin1String("Not answered");
    });
    QVERIFY(chip != chips.cend());
    QCOMPARE((*chip)->tone(), Tone::Danger);
    QVERIFY(!saveScreenshot(console->window.get(),
                            QStringLiteral("consolewindow-not-answered.png")).isEmpty());
}

// A question naming 40 orders: 16 cards, and one line for the 24 calls the bound refused.
void tst_ConsoleWindow::callsOverTheBoundShareOneLine()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    QStringList orders;
    for (int i = 0; i < 40; ++i)
        orders << QStringLiteral("A%1").arg(1001 + i);
    bool ok = false;
    const TurnResult result = askAndWait(
        *console, QStringLiteral("Status of orders ") + orders.join(QLatin1Char(' ')), &ok);
    QVERIFY(ok);
    QCOMPARE(result.toolCallsOverLimit(), 24);
    QCOMPARE(console->transcript()->toolCallCards(result.requestId).size(), 16);
    QCOMPARE(console->transcript()->notRunText(result.requestId),
             QStringLiteral("24 lookups not run: too many asked for at once"));
    QCOMPARE(console->transcript()->turnStatusText(result.requestId),
             QStringLiteral("Partly answered"));
    QVERIFY(console->transcript()->answerText(result.requestId)
                .contains(QStringLiteral("24 more lookups were not run")));
    // The footer counts the calls that ran.
    QVERIFY2(console->transcript()->footerText(result.requestId).contains(
                 QStringLiteral("16 tool calls")),
             qPrintable(console->transcript()->footerText(result.requestId)));

    // A question over the bound on its length is not sent, and nothing typed is lost.
    const QString tooLong = QStringLiteral("Where is order A1001?").leftJustified(4001, u'.');
    console->input()->setPlainText(tooLong);
    QTest::keyClick(console->input(), Qt::Key_Return);
    QVERIFY(!console->window->isTurnRunning());
    QCOMPARE(console->transcript()->requestIds().size(), 1);
    QCOMPARE(console->input()->toPlainText(), tooLong);
    QVERIFY(console->window->noticeBanner()->isVisible());
    QVERIFY2(console->window->noticeBanner()->text().contains(QStringLiteral("too long")),
             qPrintable(console->window->noticeBanner()->text()));
    // Shortened, it is sent, and the notice goes.
    console->input()->setPlainText(QStringLiteral("Where is order A1001?"));
    ok = false;
    QSignalSpy finished(console->loop(), &AgentLoop::turnFinished);
    QTest::keyClick(console->input(), Qt::Key_Return);
    QVERIFY(finished.wait(turnTimeoutMs));
    QVERIFY(!console->window->noticeBanner()->isVisible());
    QVERIFY(!saveScreenshot(console->window.get(),
                            QStringLiteral("consolewindow-too-many-calls.png")).isEmpty());
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
             QStringLiteral("Partly answered"));

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
    // The footer counts the attempts of the layer that retried.
    const QString footer = console->transcript()->footerText(result.requestId);
    QVERIFY2(footer.contains(QStringLiteral("tools: 4 attempts")), qPrintable(footer));
    QVERIFY2(!footer.contains(QStringLiteral("model:")), qPrintable(footer));

    const QString answer = console->transcript()->answerText(result.requestId);
    QVERIFY2(answer.contains(QStringLiteral("logistics"), Qt::CaseInsensitive)
                 && answer.contains(QStringLiteral("temporarily unavailable"),
                                    Qt::CaseInsensitive),
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

    // The GUI thread keeps ticking while the tool hangs on the pool. (The longest gap between
    // ticks is reported, not asserted: on a shared 2-core machine it measures the machine's
    // load as much as the window. A window that waited on the hanging tool would not tick at
    // all until Cancel.)
    int ticks = 0;
    QElapsedTimer sinceTick;
    qint64 longestGapMs = 0;
    const char *step = "asking";
    const char *longestGapStep = "";
    QTimer heartbeat;
    heartbeat.setInterval(10);
    connect(&heartbeat, &QTimer::timeout, this, [&] {
        ++ticks;
        const qint64 gap = sinceTick.restart();
        if (gap > longestGapMs) {
            longestGapMs = gap;
            longestGapStep = step;
        }
    });

    QSignalSpy finished(console->loop(), &AgentLoop::turnFinished);
    QTest::keyClicks(console->input(), QStringLiteral("Where is order A1001?"));
    QTest::keyClick(console->input(), Qt::Key_Return);
    QVERIFY(window->isTurnRunning());
    sinceTick.start();
    heartbeat.start();

    step = "waiting for the logistics card";
    QCOMPARE(transcript->requestIds().size(), 1);
    const QString requestId = transcript->requestIds().first();
    const QString logistics = QStringLiteral("queryLogistics");
    QTRY_VERIFY_WITH_TIMEOUT(cardNamed(transcript->toolCallCards(requestId), logistics),
                             turnTimeoutMs);
    ToolCallCard *card = cardNamed(transcript->toolCallCards(requestId), logistics);
    QCOMPARE(card->statusText(), QStringLiteral("Running…"));
    step = "ticking while the tool hangs";
    const int ticksBefore = ticks;
    QTRY_VERIFY_WITH_TIMEOUT(ticks >= ticksBefore + 5, turnTimeoutMs);
    QCOMPARE(card->statusText(), QStringLiteral("Running…"));
    QVERIFY(window->cancelButton()->isEnabled());
    QVERIFY(!window->sendButton()->isEnabled());
    QVERIFY(finished.isEmpty());

    // The window stays responsive: it takes typing while the turn runs.
    step = "typing a draft";
    QTest::keyClicks(console->input(), QStringLiteral("draft"));
    QCOMPARE(console->input()->toPlainText(), QStringLiteral("draft"));
    console->input()->clear();

    QElapsedTimer cancelling;
    cancelling.start();
    step = "clicking Cancel";
    QTest::mouseClick(window->cancelButton(), Qt::LeftButton);
    step = "waiting for the turn to end";
    QVERIFY(finished.size() == 1 || finished.wait(turnTimeoutMs));
    heartbeat.stop();
    QVERIFY2(cancelling.elapsed() < 10000, "cancel did not reach the hanging tool");
    qInfo("longest GUI-thread gap during the turn: %lld ms while %s", longestGapMs,
          longestGapStep);

    const TurnResult result = finished.first().first().value<TurnResult>();
    QCOMPARE(turnStatusName(result.status), turnStatusName(TurnStatus::Cancelled));
    QCOMPARE(transcript->turnStatusText(requestId), QStringLiteral("Cancelled"));
    QCOMPARE(card->statusText(), QStringLiteral("Cancelled"));
    // The attempt Cancel cut short is on the card with its time, not "1 attempt · 0 ms".
    QCOMPARE(result.toolCalls[0].attempts.size(), 1);
    const qint64 attemptMs = result.toolCalls[0].attempts[0].durationMs;
    QVERIFY2(attemptMs >= 50, qPrintable(QString::number(attemptMs))); // it ticked 5 x 10 ms
    QCOMPARE(card->attemptSummaryText(),
             QStringLiteral("1 attempt · %1").arg(ToolCallText::duration(result.toolCalls[0]
                                                                             .totalMs)));
    QCOMPARE(card->timelineText(), QStringLiteral("#1 cancelled after %1 ms").arg(attemptMs));
    card->setExpanded(true);
    QVERIFY(!saveScreenshot(window, QStringLiteral("consolewindow-cancelled.png")).isEmpty());
    card->setExpanded(false);
    QVERIFY(!window->isTurnRunning());
    QVERIFY(!window->cancelButton()->isEnabled());
    // The cancellation reached the hanging tool body: nothing is left running on the pool.
    const ToolExecutor *executor = RuntimeTestSeam::executor(*console->runtime);
    QTRY_COMPARE_WITH_TIMEOUT(executor->activeCalls(), 0, turnTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(executor->abandonedBodies(), 0, turnTimeoutMs);

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

// README's demo (resources/faults/logistics-down.json): with the logistics route down, its
// breaker opens and its card says "Circuit open"; inventory on the same backend still answers.
void tst_ConsoleWindow::logisticsDownLeavesTheOtherToolsAnswering()
{
    RuntimeOptions options;
    options.toolPolicy = shortToolPolicy();
    const std::unique_ptr<Console> console = startConsole(
        options, R"({"seed": 7, "tools": {"queryLogistics": {"transientFailures": 99}}})");
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    StatusChip *breakerChip = window->findChild<StatusChip *>(QStringLiteral("breakerChip"));
    QVERIFY(breakerChip);
    QVERIFY(!breakerChip->isVisible());

    // Ten failed logistics attempts (three per question) open the logistics breaker.
    bool ok = false;
    for (int turn = 0; turn < 4; ++turn) {
        askAndWait(*console, QStringLiteral("Where is order A1001?"), &ok);
        QVERIFY(ok);
    }
    QVERIFY(breakerChip->isVisible());
    QCOMPARE(breakerChip->text(), QStringLiteral("Circuit open: Logistics \u00B7 embedded store"));

    const TurnResult refused = askAndWait(*console, multiIntentQuestion, &ok);
    QVERIFY(ok);
    const QList<ToolCallCard *> cards = console->transcript()->toolCallCards(refused.requestId);
    ToolCallCard *logistics = cardNamed(cards, QStringLiteral("queryLogistics"));
    ToolCallCard *inventory = cardNamed(cards, QStringLiteral("queryInventory"));
    QVERIFY(logistics && inventory);
    QCOMPARE(logistics->statusText(), QStringLiteral("Circuit open"));
    QCOMPARE(logistics->attemptSummaryText(), QStringLiteral("not attempted · circuit open"));
    const qint64 left = refused.toolCalls[0].circuitCooldownLeftMs;
    QVERIFY(left > 0);
    QCOMPARE(logistics->timelineText(),
             QStringLiteral("Not attempted: circuit open (the service is known to be down); "
                            "cool-down %1 left").arg(ToolCallText::duration(left)));
    QCOMPARE(inventory->statusText(), QStringLiteral("OK"));
    QCOMPARE(inventory->attemptSummaryText().left(12), QStringLiteral("1 attempt · "));
    QCOMPARE(console->transcript()->turnStatusText(refused.requestId),
             QStringLiteral("Partly answered"));
    QVERIFY(breakerChip->isVisible()); // inventory's success did not close logistics'

    QTest::mouseClick(logistics, Qt::LeftButton);
    QVERIFY(!saveScreenshot(window, QStringLiteral("consolewindow-circuit-open.png")).isEmpty());
}

void tst_ConsoleWindow::cardsNameEveryOutcomeTruly_data()
{
    QTest::addColumn<ResultCode::Code>("code");
    QTest::addColumn<QString>("status");
    QTest::addColumn<QString>("timeline");
    QTest::newRow("not found") << SupportCode::LogisticsNotFound << QStringLiteral("Not found")
                               << QStringLiteral("#1 answered in 35 ms, nothing matched");
    QTest::newRow("unknown write") << ResultCode::ExecutionStatusUnknown
                                   << QStringLiteral("Outcome unknown")
                                   << QStringLiteral("#1 ended after 35 ms with its outcome "
                                                     "unknown (it may have been done)");
    QTest::newRow("in progress") << ResultCode::OperationInProgress
                                 << QStringLiteral("In progress")
                                 << QStringLiteral("#1 answered in 35 ms: already in progress, "
                                                   "not run again");
    QTest::newRow("conflict") << ResultCode::IdempotencyConflict << QStringLiteral("Conflict")
                              << QStringLiteral("#1 refused after 35 ms: same key used with "
                                                "other arguments");
    QTest::newRow("declined") << ResultCode::ConfirmationDeclined << QStringLiteral("Declined")
                              << QStringLiteral("#1 declined by the staff member");
    QTest::newRow("invalid") << ResultCode::InvalidArgument << QStringLiteral("Invalid")
                             << QStringLiteral("#1 arguments refused after 35 ms");
}

// Every code's card, for a call whose one attempt ended with that answer: only a miss may say
// "nothing matched" or "not found" (issue #8: an unknown ticket write read as nothing matched).
// A half-open breaker whose trial call is out refuses with no cool-down left: the card must
// not promise "0 ms left".
void tst_ConsoleWindow::aHalfOpenRefusalPromisesNoCoolDown()
{
    ToolCallRecord call;
    call.name = QStringLiteral("queryLogistics");
    call.state = ToolCallRecord::State::Finished;
    call.result = ToolResult::failure(ResultCode::ToolUnavailable, Language::English);
    call.circuitCooldownLeftMs = 0;
    QCOMPARE(ToolCallText::timeline(call),
             QStringList{QStringLiteral("Not attempted: circuit half-open (a trial call is "
                                        "testing the service)")});
    call.circuitCooldownLeftMs = 4200;
    QVERIFY(ToolCallText::timeline(call).constFirst().endsWith(
        QStringLiteral("cool-down 4.2 s left")));
}

void tst_ConsoleWindow::cardsNameEveryOutcomeTruly()
{
    QFETCH(ResultCode::Code, code);
    QFETCH(QString, status);
    QFETCH(QString, timeline);
    ToolCallRecord call;
    call.name = QStringLiteral("createTicket");
    call.operationId = QStringLiteral("t-1:c-1:r-1:createTicket:0");
    call.arguments = {{QStringLiteral("orderId"), QStringLiteral("A1001")}};
    call.state = ToolCallRecord::State::Finished;
    call.result = ToolResult::failure(code, Language::English);
    call.attempts = {{1, 0, 35, AttemptOutcome::BusinessFailure, -1}};
    call.totalMs = 35;

    QWidget column;
    auto *layout = new QVBoxLayout(&column);
    auto *card = new ToolCallCard;
    layout->addWidget(card);
    card->setToolCall(call);
    card->setExpanded(true);
    column.resize(560, 200);
    column.show();
    QVERIFY(QTest::qWaitForWindowExposed(&column));
    QCOMPARE(card->statusText(), status);
    QCOMPARE(card->timelineText(), timeline);
    const bool miss = code == SupportCode::LogisticsNotFound;
    QCOMPARE(card->timelineText().contains(QLatin1String("nothing matched")), miss);
    QCOMPARE(card->statusText().contains(QLatin1String("not found"), Qt::CaseInsensitive), miss);
    QVERIFY(!saveScreenshot(&column, QStringLiteral("toolcallcard-%1.png")
                                                  .arg(ResultCode::wireName(code).toLower()))
                 .isEmpty());
}

// A code read from a newer console's ledger row or a newer backend: the card shows it as
// given, coloured and worded as the failure table's rows for such codes say (only a name that
// says nothing was found reads as a miss).
void tst_ConsoleWindow::aCodeNobodyHereKnowsIsShownAsGiven_data()
{
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("status");
    QTest::addColumn<int>("tone");
    QTest::addColumn<QString>("timeline");
    QTest::newRow("a failure")
        << "TICKET_QUOTA_EXCEEDED" << "TICKET_QUOTA_EXCEEDED" << int(Tone::Danger)
        << "#1 answered in 35 ms without a result (TICKET_QUOTA_EXCEEDED)";
    QTest::newRow("a miss") << "WAREHOUSE_NOT_FOUND" << "Not found" << int(Tone::Neutral)
                            << "#1 answered in 35 ms, nothing matched";
}

void tst_ConsoleWindow::aCodeNobodyHereKnowsIsShownAsGiven()
{
    QFETCH(QString, code);
    QFETCH(QString, status);
    QFETCH(int, tone);
    QFETCH(QString, timeline);
    ToolCallRecord call;
    call.name = QStringLiteral("createTicket");
    call.state = ToolCallRecord::State::Finished;
    call.result = ToolResult::fromJson({{QStringLiteral("success"), false},
                                        {QStringLiteral("code"), code},
                                        {QStringLiteral("message"), QStringLiteral("Refused")}});
    call.attempts = {{1, 0, 35, AttemptOutcome::BusinessFailure, -1}};
    call.totalMs = 35;
    QCOMPARE(call.result.codeName(), code);
    QCOMPARE(ToolCallText::statusOf(call).text, status);
    QCOMPARE(int(ToolCallText::statusOf(call).tone), tone);
    QCOMPARE(ToolCallText::timeline(call), QStringList{timeline});
}

void tst_ConsoleWindow::failedRuntimeShowsErrorBanner()
{
    QTemporaryDir dataDir;
    QVERIFY(dataDir.isValid());
    QFile plan(dataDir.filePath(QStringLiteral("faults.json")));
    QVERIFY(plan.open(QIODevice::WriteOnly));
    plan.write(R"({"tools": {"queryLogistics": {"noSuchFault": true}}})");
    plan.close();
    RuntimeOptions options;
    options.dataDirectory = dataDir.path();
    options.faultPlanFile = plan.fileName();

    AgentRuntime runtime(options);
    ConsoleWindow window(&runtime);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    NoticeBanner *banner = window.noticeBanner();
    QVERIFY(banner->isVisible());
    QCOMPARE(banner->tone(), Tone::Info);
    QVERIFY2(banner->text().startsWith(QStringLiteral("Preparing the store…")),
             qPrintable(banner->text()));

    QSignalSpy failed(&runtime, &AgentRuntime::failed);
    runtime.start();
    QVERIFY(failed.wait(turnTimeoutMs));
    const QString reason = failed.first().first().toString();
    QVERIFY(!reason.isEmpty());
    QVERIFY(banner->isVisible());
    QCOMPARE(banner->tone(), Tone::Danger);
    QVERIFY2(banner->text().contains(reason), qPrintable(banner->text()));

    // Nothing can be sent, but nothing typed is lost either.
    QTest::keyClicks(window.questionInput(), QStringLiteral("Where is order A1001?"));
    QTest::keyClick(window.questionInput(), Qt::Key_Return);
    QVERIFY(!window.isTurnRunning());
    QVERIFY(!window.sendButton()->isEnabled());
    QCOMPARE(window.questionInput()->toPlainText(), QStringLiteral("Where is order A1001?"));
    QVERIFY(window.transcript()->requestIds().isEmpty());
    QVERIFY(!saveScreenshot(&window, QStringLiteral("consolewindow-startup-failure.png"))
                 .isEmpty());
}

// Issue #24 §4: with the smallest conversation budget, a long conversation's later turns send
// the model only the latest turns, and their footers say how many were left out; the first
// turns, sent whole, say nothing.
void tst_ConsoleWindow::turnsLeftOutOfTheRequestAreSaid()
{
    RuntimeOptions options;
    options.model.contextChars = ModelOptions::minContextChars;
    const std::unique_ptr<Console> console = startConsole(options);
    QVERIFY(console);
    QList<TurnResult> turns;
    for (int i = 0; i < 5; ++i) {
        bool ok = false;
        turns.append(askAndWait(*console,
                                QStringLiteral("Where is order A100%1? ").arg(i + 1)
                                    + QString(300, QLatin1Char('.')),
                                &ok));
        QVERIFY(ok);
    }
    QCOMPARE(turns.first().turnsLeftOut, 0);
    QVERIFY(!console->transcript()->footerText(turns.first().requestId).contains(u"not sent"));
    const TurnResult &last = turns.last();
    QVERIFY2(last.turnsLeftOut >= 2, qPrintable(QString::number(last.turnsLeftOut)));
    const QString footer = console->transcript()->footerText(last.requestId);
    QVERIFY2(footer.endsWith(QStringLiteral("%1 earlier turns not sent to the model")
                                 .arg(last.turnsLeftOut)),
             qPrintable(footer));
    QVERIFY(!saveScreenshot(console->window.get(),
                            QStringLiteral("consolewindow-turns-left-out.png")).isEmpty());
}

QTEST_MAIN(tst_ConsoleWindow)
#include "tst_consolewindow.moc"
