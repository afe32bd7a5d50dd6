// The painted attempt timeline under each tool card, over the real core: a real runtime with
// live fault plans and per-tool policies, and the real executor with a tool that answers
// with a Retry-After. Asserts what the widget exposes (its model of bars, gaps and markers),
// and saves screenshots.
#include "consolefixture.h"
#include "screenshots.h"

#include "core/resilience/toolexecutor.h"
#include "ui/transcript/attempttimeline.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/toolcalltext.h"
#include "ui/transcript/transcriptview.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QPushButton>
#include <QScreen>
#include <QVBoxLayout>

#include <atomic>
#include <vector>

using namespace AgentConsole;
using namespace AgentConsole::Testing;
using namespace std::chrono_literals;

namespace {

constexpr int timeoutMs = 20000;
const QString logistics = QStringLiteral("queryLogistics");

using Bar = AttemptTimeline::Bar;
using Gap = AttemptTimeline::Gap;
using Marker = AttemptTimeline::Marker;

QList<Marker> markersOf(const AttemptTimeline::Model &model, Marker::Kind kind)
{
    QList<Marker> found;
    for (const Marker &marker : model.markers) {
        if (marker.kind == kind)
            found.append(marker);
    }
    return found;
}

QStringList barTexts(const AttemptTimeline::Model &model)
{
    QStringList texts;
    for (const Bar &bar : model.bars)
        texts.append(bar.text);
    return texts;
}

ToolCallCard *firstCard(const ConsoleFixture &console, const QString &requestId)
{
    const QList<ToolCallCard *> cards = console.window->transcript()->toolCallCards(requestId);
    return cards.isEmpty() ? nullptr : cards.first();
}

// Every bar says its number and outcome in words, and the words are drawn somewhere: colour
// is never the only cue. Bars follow each other in time and stay on the axis.
void verifyReadable(const AttemptTimeline::Model &model)
{
    qint64 previousStart = -1;
    for (const Bar &bar : model.bars) {
        QVERIFY2(bar.text.startsWith(QString::number(bar.attempt) + QLatin1Char(' ')),
            qPrintable(bar.text));
        QVERIFY2(!bar.labelRect.isEmpty(), qPrintable(bar.text));
        QVERIFY(!bar.toolTip.isEmpty());
        QVERIFY(bar.rect.width() > 0);
        QVERIFY(bar.rect.left() >= model.axis.left() - 5); // a mark is centred on its time
        QVERIFY(bar.rect.right() <= model.axis.right() + 5);
        QVERIFY(bar.startMs >= previousStart);
        previousStart = bar.startMs;
    }
}

// A tool whose first `busy` attempts answer "busy, retry after `retryAfter`", then OK.
class BusyTool final : public ToolOperation
{
public:
    BusyTool(int busy, std::optional<std::chrono::milliseconds> retryAfter)
        : m_busy(busy)
        , m_retryAfter(retryAfter)
    { }
    QString name() const override { return QStringLiteral("queryInventory"); }
    std::optional<ToolResult> precheck(const QJsonObject &, const TrustedContext &) const override
    {
        return std::nullopt;
    }
    AttemptResult attempt(
        const QJsonObject &, const TrustedContext &, const AttemptContext &attempt) const override
    {
        if (attempt.attempt <= m_busy)
            return AttemptResult::transient(QStringLiteral("503 busy"), m_retryAfter);
        return AttemptResult::completed(
            ToolResult::ok(QStringLiteral("in stock"), QJsonObject{{"stock", 3}}));
    }

private:
    int m_busy;
    std::optional<std::chrono::milliseconds> m_retryAfter;
};

// The record the agent loop would make of an executor's outcome.
ToolCallRecord recordOf(const ToolCallOutcome &outcome, const RetryPolicy &policy)
{
    ToolCallRecord call;
    call.name = outcome.toolName;
    call.state = ToolCallRecord::State::Finished;
    call.result = outcome.result;
    call.attempts = outcome.attempts;
    call.totalMs = outcome.totalMs;
    call.attemptTimeoutMs = policy.attemptTimeout.count();
    call.worstCaseMs = policy.effectiveDeadline().count();
    call.turnDeadlineLeftMs = 60000;
    return call;
}

// A lookup whose first attempt timed out after 2 s and whose second has run since 2.2 s.
ToolCallRecord secondAttemptRunning()
{
    ToolCallRecord call;
    call.name = logistics;
    call.state = ToolCallRecord::State::Running;
    call.attemptTimeoutMs = 2000;
    call.worstCaseMs = 6600;
    call.turnDeadlineLeftMs = 60000;
    AttemptRecord first;
    first.attempt = 1;
    first.durationMs = 2000;
    first.outcome = AttemptOutcome::TimedOut;
    first.nextDelayMs = 200;
    call.attempts.append(first);
    call.runningAttempt = 2;
    call.runningAttemptStartedMs = 2200;
    return call;
}

} // namespace

class tst_AttemptTimeline final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void hangingLookupGrowsLiveThenShowsEveryTimeout();
    void retryAfterGapIsToldApartFromBackoff();
    void cancelledAttemptIsNamed();
    void backoffCutShortLeavesANotMadeMark();
    void narrowTimelineStillNamesEveryBar();
    void framesPaintOnlyWhatMoved();
    void labelsAreShapedOnceNotAtEveryPaint();
};

void tst_AttemptTimeline::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
    qRegisterMetaType<AgentConsole::ToolCallRecord>();
}

// The README's "slow past the timeout": every attempt hangs, so each times out; the card's
// timeline grows while the call runs, then shows three timeouts with two backoffs between them.
void tst_AttemptTimeline::hangingLookupGrowsLiveThenShowsEveryTimeout()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    QVERIFY(console.setFaults(R"({"tools": {"queryLogistics": {"hang": true}}})"));
    const RetryPolicy policy = shortPolicy(300, 40, 80);
    QVERIFY(console.setPolicy(logistics, policy));

    QSignalSpy finished(console.loop(), &AgentLoop::turnFinished);
    const QString requestId = console.ask(QStringLiteral("Where is order A1001?"));
    QVERIFY(!requestId.isEmpty());
    ToolCallCard *card = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((card = firstCard(console, requestId)), timeoutMs);
    AttemptTimeline *timeline = card->attemptTimeline();
    QVERIFY(timeline);

    // Live: the first attempt's bar grows with the clock, repainted by the widget's own
    // timer (at most 30 frames a second), and says it is running.
    QTRY_VERIFY_WITH_TIMEOUT(timeline->isVisible() && timeline->isAnimating(), timeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(
        !timeline->model().bars.isEmpty() && timeline->model().bars.last().running, timeoutMs);
    const AttemptTimeline::Model early = timeline->model();
    QCOMPARE(early.bars.last().text, QStringLiteral("1 running\u2026"));
    QCOMPARE(early.bars.last().tone, Tone::Info);
    QVERIFY(early.running);
    QCOMPARE(markersOf(early, Marker::Kind::AttemptTimeout).size(), 1);
    const int paintsBefore = timeline->paintCount();
    QElapsedTimer clock;
    clock.start();
    QTRY_VERIFY_WITH_TIMEOUT(
        timeline->model().bars.last().rect.width() > early.bars.last().rect.width() + 2,
        timeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(timeline->paintCount() >= paintsBefore + 3, timeoutMs);
    const qint64 elapsed = clock.elapsed();
    const int paints = timeline->paintCount() - paintsBefore;
    // The rate bound, with room for repaints the layout asks for.
    QVERIFY2(paints <= elapsed * AttemptTimeline::maxFramesPerSecond / 1000 + 6,
        qPrintable(QStringLiteral("%1 paints in %2 ms").arg(paints).arg(elapsed)));
    QVERIFY(
        !saveScreenshot(console.window.get(), QStringLiteral("timeline-live-hang.png")).isEmpty());

    QVERIFY(finished.wait(timeoutMs));
    const TurnResult result = finished.first().first().value<TurnResult>();
    QCOMPARE(result.toolCalls.size(), 1);
    const ToolCallRecord &call = result.toolCalls.first();
    QCOMPARE(call.attempts.size(), 3);

    // Over: the timer stops; three timeouts, in the timeout's colour, each with its words.
    QTRY_VERIFY_WITH_TIMEOUT(!timeline->isAnimating(), timeoutMs);
    const AttemptTimeline::Model model = timeline->model();
    QVERIFY(!model.running);
    QCOMPARE(barTexts(model),
        (QStringList{QStringLiteral("1 timeout"), QStringLiteral("2 timeout"),
            QStringLiteral("3 timeout")}));
    for (const Bar &bar : model.bars) {
        QCOMPARE(bar.outcome, AttemptOutcome::TimedOut);
        QCOMPARE(bar.tone, ToolCallText::statusOfCode(ResultCode::ToolTimeout).tone);
        QVERIFY(bar.made);
        QVERIFY2(bar.toolTip.contains(QStringLiteral("timed out after")), qPrintable(bar.toolTip));
    }
    verifyReadable(model);
    // Each bar is about as long as the timeout it hit: 300 ms of the axis.
    const qreal perMs = model.axis.width() / qreal(model.spanMs);
    for (const Bar &bar : model.bars)
        QVERIFY2(std::abs(bar.rect.width() - bar.durationMs * perMs) <= 1.5,
            qPrintable(QString::number(bar.rect.width())));
    // Two backoffs of the policy, 40 then 80 ms, between the bars.
    QCOMPARE(model.gaps.size(), 2);
    QCOMPARE(model.gaps.at(0).kind, Gap::Kind::Backoff);
    QCOMPARE(model.gaps.at(0).text, QStringLiteral("backoff 40 ms"));
    QCOMPARE(model.gaps.at(1).text, QStringLiteral("backoff 80 ms"));
    QVERIFY(model.gaps.at(0).rect.left() >= model.bars.at(0).rect.right() - 1);
    QVERIFY(model.gaps.at(0).rect.right() <= model.bars.at(1).rect.left() + 1);
    // Markers: each attempt's timeout, the policy's worst case, the turn's deadline.
    QCOMPARE(markersOf(model, Marker::Kind::AttemptTimeout).size(), 3);
    const QList<Marker> worst = markersOf(model, Marker::Kind::WorstCase);
    QCOMPARE(worst.size(), 1);
    QCOMPARE(worst.first().atMs, policy.effectiveDeadline().count());
    QCOMPARE(worst.first().text,
        QStringLiteral("worst case %1")
            .arg(ToolCallText::duration(policy.effectiveDeadline().count())));
    // The call ended at its worst case (the deadline cut the last attempt short), give or
    // take a late timer on a busy machine.
    QVERIFY(worst.first().atMs > model.bars.last().startMs);
    QVERIFY2(call.totalMs <= worst.first().atMs + 150, qPrintable(QString::number(call.totalMs)));
    const QList<Marker> deadline = markersOf(model, Marker::Kind::TurnDeadline);
    QCOMPARE(deadline.size(), 1);
    QVERIFY(deadline.first().beyond); // 60 s: far beyond a 1.1 s call
    QVERIFY2(deadline.first().text.startsWith(QStringLiteral("turn deadline ")),
        qPrintable(deadline.first().text));

    // Hovering a bar says its number, outcome and duration.
    const Bar &second = model.bars.at(1);
    const QString tip = timeline->toolTipAt(second.rect.center());
    QVERIFY2(
        tip.startsWith(QStringLiteral("Attempt 2: timed out after %1 ms").arg(second.durationMs)),
        qPrintable(tip));
    QVERIFY2(timeline->toolTipAt(model.gaps.at(0).rect.center())
                 .contains(QStringLiteral("Backoff of 40 ms before attempt 2")),
        qPrintable(timeline->toolTipAt(model.gaps.at(0).rect.center())));
    // The same facts for a screen reader.
    QVERIFY2(timeline->accessibleDescription().startsWith(
                 QStringLiteral("Attempt 1 timed out after %1 ms, backoff 40 ms.")
                     .arg(call.attempts.at(0).durationMs)),
        qPrintable(timeline->accessibleDescription()));
    QVERIFY(timeline->accessibleDescription().contains(QStringLiteral("Worst case")));
    QCOMPARE(timeline->accessibleName(), QStringLiteral("Attempt timeline of queryLogistics"));

    card->setExpanded(true);
    // The details' texts are given to their labels when the card opens (not on every attempt
    // of a closed card): open, they read what the card says.
    const auto *details = card->findChild<QWidget *>(QStringLiteral("toolCallDetails"));
    QVERIFY(details && details->isVisible());
    const auto *timelineDetails = details->findChild<QLabel *>(QStringLiteral("timelineDetails"));
    const auto *traceDetails = details->findChild<QLabel *>(QStringLiteral("traceDetails"));
    QVERIFY(timelineDetails && traceDetails);
    QVERIFY(!card->timelineText().isEmpty());
    QCOMPARE(timelineDetails->text(), card->timelineText());
    QCOMPARE(traceDetails->isVisibleTo(details), !traceDetails->text().isEmpty());
    QVERIFY(!saveScreenshot(console.window.get(), QStringLiteral("timeline-three-timeouts.png"))
                 .isEmpty());
}

// A server that asks to wait (Retry-After) is drawn apart from the policy's own backoff.
void tst_AttemptTimeline::retryAfterGapIsToldApartFromBackoff()
{
    ToolExecutor executor;
    RetryPolicy policy = shortPolicy(500, 20, 400);
    policy.retryAfterCap = 300ms;
    ToolCallRequest request;
    request.tool = std::make_shared<BusyTool>(1, 250ms);
    request.context = {QStringLiteral("u"), QStringLiteral("t"), {}, {}, Language::English};
    request.policy = policy;
    QFutureWatcher<ToolCallOutcome> watcher;
    QSignalSpy done(&watcher, &QFutureWatcher<ToolCallOutcome>::finished);
    watcher.setFuture(executor.execute(std::move(request)));
    QVERIFY(done.wait(timeoutMs));
    const ToolCallOutcome outcome = watcher.result();
    QVERIFY(outcome.result.success);
    QCOMPARE(outcome.attempts.size(), 2);
    // Core says the delay was the server's.
    QCOMPARE(outcome.attempts.at(0).retryAfterMs, 250);
    QCOMPARE(outcome.attempts.at(0).nextDelayMs, 250);
    QCOMPARE(outcome.attempts.at(1).retryAfterMs, -1);

    QWidget column;
    auto *layout = new QVBoxLayout(&column);
    auto *card = new ToolCallCard;
    layout->addWidget(card);
    ToolCallRecord call = recordOf(outcome, policy);
    card->setToolCall(call);
    card->setExpanded(true);
    column.resize(620, 220);
    column.show();
    QVERIFY(QTest::qWaitForWindowExposed(&column));
    AttemptTimeline *timeline = card->attemptTimeline();
    QVERIFY(timeline->isVisible());
    QVERIFY(!timeline->isAnimating());
    const AttemptTimeline::Model model = timeline->model();
    QCOMPARE(barTexts(model), (QStringList{QStringLiteral("1 failed"), QStringLiteral("2 ok")}));
    QCOMPARE(model.bars.at(1).tone, Tone::Success);
    QCOMPARE(model.gaps.size(), 1);
    QCOMPARE(model.gaps.first().kind, Gap::Kind::RetryAfter);
    QCOMPARE(model.gaps.first().text, QStringLiteral("Retry-After 250 ms"));
    QVERIFY(model.gaps.first().toolTip.contains(QStringLiteral("as the server asked")));
    QVERIFY(!model.gaps.first().labelRect.isEmpty()); // in the gap, or under it
    QCOMPARE(
        timeline->toolTipAt(model.gaps.first().labelRect.center()), model.gaps.first().toolTip);
    verifyReadable(model);
    QVERIFY2(card->timelineText().contains(QStringLiteral("(Retry-After)")),
        qPrintable(card->timelineText()));

    // The same call with the policy's backoff reads "backoff", not "Retry-After".
    call.attempts[0].retryAfterMs = -1;
    card->setToolCall(call);
    QCOMPARE(timeline->model().gaps.first().kind, Gap::Kind::Backoff);
    QCOMPARE(timeline->model().gaps.first().text, QStringLiteral("backoff 250 ms"));
    card->setToolCall(recordOf(outcome, policy));
    QVERIFY(!saveScreenshot(&column, QStringLiteral("timeline-retry-after.png")).isEmpty());
}

// Cancel while an attempt hangs: the attempt is on the timeline as cancelled, with its time.
void tst_AttemptTimeline::cancelledAttemptIsNamed()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    QVERIFY(console.setFaults(R"({"tools": {"queryLogistics": {"hang": true}}})"));
    QVERIFY(console.setPolicy(logistics, shortPolicy(5000, 40, 80)));
    QSignalSpy finished(console.loop(), &AgentLoop::turnFinished);
    const QString requestId = console.ask(QStringLiteral("Where is order A1001?"));
    QVERIFY(!requestId.isEmpty());
    ToolCallCard *card = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((card = firstCard(console, requestId)), timeoutMs);
    AttemptTimeline *timeline = card->attemptTimeline();
    QTRY_VERIFY_WITH_TIMEOUT(
        !timeline->model().bars.isEmpty() && timeline->model().bars.last().durationMs >= 100,
        timeoutMs);
    QTest::mouseClick(console.window->cancelButton(), Qt::LeftButton);
    QVERIFY(finished.wait(timeoutMs));
    QTRY_VERIFY_WITH_TIMEOUT(!timeline->isAnimating(), timeoutMs);
    const AttemptTimeline::Model model = timeline->model();
    QCOMPARE(barTexts(model), QStringList{QStringLiteral("1 cancelled")});
    QCOMPARE(model.bars.first().outcome, AttemptOutcome::Cancelled);
    QVERIFY(model.bars.first().durationMs >= 100);
    QVERIFY(model.gaps.isEmpty());
    QVERIFY2(model.bars.first().toolTip.startsWith(QStringLiteral("Attempt 1: cancelled after")),
        qPrintable(model.bars.first().toolTip));
    verifyReadable(model);
    QVERIFY(!saveScreenshot(card, QStringLiteral("timeline-cancelled.png")).isEmpty());
}

// Stopped while waiting out a backoff: the retry that was not made is a mark with its words.
void tst_AttemptTimeline::backoffCutShortLeavesANotMadeMark()
{
    ToolExecutor executor;
    const RetryPolicy policy = shortPolicy(500, 2000, 2000);
    ToolCallRequest request;
    request.tool = std::make_shared<BusyTool>(5, std::nullopt); // the policy's delay
    request.context = {QStringLiteral("u"), QStringLiteral("t"), {}, {}, Language::English};
    request.policy = policy;
    QSignalSpy attempts(&executor, &ToolExecutor::attemptFinished);
    QFuture<ToolCallOutcome> future = executor.execute(std::move(request));
    QVERIFY(attempts.wait(timeoutMs));
    const AttemptEvent first = attempts.first().first().value<AttemptEvent>();
    QCOMPARE(first.record.nextDelayMs, 2000);
    QCOMPARE(first.record.retryAfterMs, -1);
    const std::optional<ToolCallOutcome> outcome
        = executor.stop(first.callId, AttemptOutcome::Cancelled);
    QVERIFY(outcome);
    QCOMPARE(outcome->attempts.size(), 2);
    QVERIFY(!outcome->attempts.at(1).made);

    AttemptTimeline timeline;
    timeline.resize(560, timeline.sizeHint().height());
    timeline.setToolCall(recordOf(*outcome, policy));
    timeline.show();
    QVERIFY(QTest::qWaitForWindowExposed(&timeline));
    const AttemptTimeline::Model model = timeline.model();
    QCOMPARE(barTexts(model),
        (QStringList{QStringLiteral("1 failed"), QStringLiteral("2 not made: cancelled")}));
    QVERIFY(!model.bars.at(1).made);
    QCOMPARE(model.gaps.size(), 1);
    QCOMPARE(model.gaps.first().text, QStringLiteral("backoff 2.0 s"));
    QVERIFY(timeline.toolTipAt(model.bars.at(1).rect.center())
                .startsWith(QStringLiteral("Attempt 2: not made: cancelled during the backoff")));
    verifyReadable(model);
    QVERIFY(!saveScreenshot(&timeline, QStringLiteral("timeline-not-made.png")).isEmpty());
}

// A narrow card: labels that do not fit inside their bars go below, one after another, and
// none is lost while there is room for a few characters.
void tst_AttemptTimeline::narrowTimelineStillNamesEveryBar()
{
    ToolCallRecord call;
    call.name = logistics;
    call.state = ToolCallRecord::State::Finished;
    call.result = ToolResult::failure(ResultCode::ToolTimeout, Language::English);
    call.attemptTimeoutMs = 200;
    call.worstCaseMs = 660;
    call.turnDeadlineLeftMs = 500; // before the worst case: on the axis
    for (int i = 0; i < 3; ++i) {
        AttemptRecord attempt;
        attempt.attempt = i + 1;
        attempt.startedMs = i * 220;
        attempt.durationMs = i == 2 ? 60 : 200;
        attempt.outcome = i == 2 ? AttemptOutcome::DeadlineReached : AttemptOutcome::TimedOut;
        attempt.nextDelayMs = i == 2 ? -1 : 20;
        call.attempts.append(attempt);
    }
    call.totalMs = 500;
    AttemptTimeline timeline;
    timeline.setToolCall(call);
    timeline.resize(360, timeline.sizeHint().height());
    timeline.show();
    QVERIFY(QTest::qWaitForWindowExposed(&timeline));
    const AttemptTimeline::Model model = timeline.model();
    QCOMPARE(barTexts(model),
        (QStringList{QStringLiteral("1 timeout"), QStringLiteral("2 timeout"),
            QStringLiteral("3 deadline")}));
    verifyReadable(model);
    const QList<Marker> deadline = markersOf(model, Marker::Kind::TurnDeadline);
    QCOMPARE(deadline.size(), 1);
    QVERIFY(!deadline.first().beyond);
    QVERIFY(deadline.first().x < markersOf(model, Marker::Kind::WorstCase).first().x);
    QVERIFY(qAbs(deadline.first().x - model.bars.at(2).rect.right()) <= 2);
    QVERIFY(!saveScreenshot(&timeline, QStringLiteral("timeline-narrow-deadline.png")).isEmpty());
}

// The labels of running timelines do not change between frames, so each is shaped once and
// then drawn as it is, whatever the timeline and however often it is painted. (They were all
// shaped again at every paint of every timeline: the cache was keyed on a font object each
// paint made anew.)
void tst_AttemptTimeline::labelsAreShapedOnceNotAtEveryPaint()
{
    const ToolCallRecord call = secondAttemptRunning();

    QWidget column;
    auto *layout = new QVBoxLayout(&column);
    std::vector<AttemptTimeline *> timelines;
    for (int i = 0; i < 3; ++i) {
        auto *timeline = new AttemptTimeline;
        timeline->setReportClock([] { return qint64(300); }); // the same frame every time
        timeline->setToolCall(call);
        layout->addWidget(timeline);
        timelines.push_back(timeline);
    }
    column.resize(640, 300);
    column.show();
    QVERIFY(QTest::qWaitForWindowExposed(&column));
    for (AttemptTimeline *timeline : timelines)
        timeline->repaint();
    const int shaped = AttemptTimeline::labelsShaped();
    for (int frame = 0; frame < 5; ++frame) {
        for (AttemptTimeline *timeline : timelines) {
            const int paints = timeline->paintCount();
            timeline->repaint();
            QCOMPARE(timeline->paintCount(), paints + 1);
        }
    }
    QCOMPARE(AttemptTimeline::labelsShaped(), shaped);
}

QTEST_MAIN(tst_AttemptTimeline)
#include "tst_attempttimeline.moc"

// A frame of a running timeline paints only the strip its bar grew by (and nothing when it did
// not move): what the window shows after many such frames is what a full paint shows.
void tst_AttemptTimeline::framesPaintOnlyWhatMoved()
{
    qint64 sinceReport = 0;
    AttemptTimeline timeline;
    timeline.setReportClock([&sinceReport] { return sinceReport; });
    const ToolCallRecord call = secondAttemptRunning();
    timeline.setToolCall(call);
    timeline.resize(640, timeline.sizeHint().height());
    timeline.show();
    QVERIFY(QTest::qWaitForWindowExposed(&timeline));
    QVERIFY(timeline.isAnimating());
    QTRY_VERIFY(timeline.paintCount() > 0);

    for (int step = 1; step <= 24; ++step) {
        sinceReport = step * 60; // several pixels on this axis
        const int before = timeline.paintCount();
        timeline.nextFrame();
        QTRY_VERIFY(timeline.paintCount() > before);
    }
    // Nothing moved: nothing is painted.
    const int settled = timeline.paintCount();
    timeline.nextFrame();
    QCoreApplication::sendPostedEvents();
    QCOMPARE(timeline.paintCount(), settled);

    // The window's own pixels (the offscreen platform's backing store, built up by the partial
    // frames) against a full paint at the same moment.
    const QImage shown = timeline.screen()
                             ->grabWindow(timeline.winId())
                             .toImage()
                             .convertToFormat(QImage::Format_RGB32);
    const QImage full = timeline.grab().toImage().convertToFormat(QImage::Format_RGB32);
    QCOMPARE(shown.size(), full.size());
    QVERIFY(shown == full);
}
