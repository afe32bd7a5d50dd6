// The diagnostics dock over a real runtime: breakers opened by a live fault plan, counting down
// and reset from the dock; DESIGN.md's counters for the last turn and in total; per-tool
// latency; and the status bar that became short. Saves screenshots.
#include "consolefixture.h"
#include "screenshots.h"

#include "ui/diagnostics/diagnosticsdock.h"

#include "core/console/runtimemonitor.h"
#include "ui/common/statuschip.h"
#include "ui/transcript/transcriptview.h"

#include <QLabel>
#include <QPushButton>
#include <QStatusBar>

#include <numeric>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int timeoutMs = 20000;
const QString logisticsBreaker = QStringLiteral("logistics:embedded");
using Column = DiagnosticsDock::Column;
using Metrics::Counter;

} // namespace

class tst_DiagnosticsDock final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void statusBarIsShortAndTheRestIsInTheDock();
    void breakerOpensCountsDownAndIsReset();
    void countersShowTheLastTurnAndTheTotal();
    void latencyHistogramCountsEveryCall();
    void aBreakerFirstSeenInATurnLeavesTheConversationAsWide();
};

void tst_DiagnosticsDock::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
    qRegisterMetaType<AgentConsole::ToolCallRecord>();
}

void tst_DiagnosticsDock::statusBarIsShortAndTheRestIsInTheDock()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    QVERIFY(console.setFaults(R"({"tools": {"queryLogistics": {"hang": true}}})"));
    ConsoleWindow *window = console.window.get();
    DiagnosticsDock *dock = window->diagnosticsDock();
    dock->show(); // the QA layout's: closed in the staff layout
    QVERIFY(dock && dock->isVisible());

    // The status bar: the model and the badges, nothing else that reads as text.
    QStringList shown;
    for (const QLabel *label : window->statusBar()->findChildren<QLabel *>()) {
        if (label->isVisible())
            shown.append(label->objectName());
    }
    QCOMPARE(shown, QStringList{QStringLiteral("modelLabel")});
    QVERIFY(window->statusBar()->findChild<StatusChip *>(QStringLiteral("faultChip")));
    QVERIFY(window->statusBar()->findChild<StatusChip *>(QStringLiteral("breakerChip")));

    // The store, the policy and the fault plan are in the dock.
    QVERIFY2(
        dock->storeText().startsWith(QStringLiteral("Store: ")), qPrintable(dock->storeText()));
    QVERIFY(dock->storeText().endsWith(QStringLiteral(".sqlite")));
    QVERIFY2(dock->policyText().contains(QStringLiteral("worst case 6.6 s")),
        qPrintable(dock->policyText()));
    QVERIFY2(dock->faultsText().contains(QStringLiteral("queryLogistics")),
        qPrintable(dock->faultsText()));
    // A policy of the tool's own is named there, live.
    QVERIFY(console.setPolicy(QStringLiteral("queryLogistics"), shortPolicy()));
    QVERIFY2(dock->policyText().contains(QStringLiteral("own policy: queryLogistics")),
        qPrintable(dock->policyText()));
    console.faults()->clear();
    QCOMPARE(dock->faultsText(), QStringLiteral("Faults: none"));

    // The View menu hides and shows it.
    QAction *toggle = window->findChild<QAction *>(QStringLiteral("diagnosticsAction"));
    QVERIFY(toggle && toggle->isChecked());
    toggle->trigger();
    QVERIFY(!dock->isVisible());
    toggle->trigger();
    QVERIFY(dock->isVisible());
}

// Ten failed logistics attempts open its breaker; the dock counts its cool-down down, names
// the change, and its Reset closes it (the status bar's badge goes with it).
void tst_DiagnosticsDock::breakerOpensCountsDownAndIsReset()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    QVERIFY(console.setFaults(R"({"tools": {"queryLogistics": {"transientFailures": 99}}})"));
    QVERIFY(console.setPolicy(QStringLiteral("queryLogistics"), shortPolicy(200, 10, 20)));
    DiagnosticsDock *dock = console.window->diagnosticsDock();
    dock->show(); // the QA layout's: closed in the staff layout
    StatusChip *badge = console.window->findChild<StatusChip *>(QStringLiteral("breakerChip"));
    QVERIFY(badge);

    bool ok = false;
    console.askAndWait(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    // Two breakers so far, both closed: the model's (it answered) and logistics', with the
    // three failures in its window.
    QCOMPARE(dock->breakerNames().size(), 2);
    QVERIFY(dock->breakerNames().contains(QStringLiteral("model:offline")));
    QVERIFY(dock->breakerNames().contains(logisticsBreaker));
    QCOMPARE(dock->breakerStateText(QStringLiteral("model:offline")), QStringLiteral("Closed"));
    QCOMPARE(dock->breakerStateText(logisticsBreaker), QStringLiteral("Closed"));
    QCOMPARE(dock->breakerTone(logisticsBreaker), Tone::Success);
    QCOMPARE(dock->breakerWindowText(logisticsBreaker), QStringLiteral("3 of 3 failed"));
    QCOMPARE(dock->breakerLastChangeText(logisticsBreaker), QStringLiteral("none yet"));
    QVERIFY(!dock->isTicking());

    for (int turn = 0; turn < 3; ++turn) {
        console.askAndWait(QStringLiteral("Where is order A1001?"), &ok);
        QVERIFY(ok);
    }
    QCOMPARE(dock->breakerStateText(logisticsBreaker), QStringLiteral("Open"));
    QCOMPARE(dock->breakerTone(logisticsBreaker), Tone::Danger);
    QVERIFY2(dock->breakerLastChangeText(logisticsBreaker)
                 .startsWith(QStringLiteral("Closed \u2192 Open, ")),
        qPrintable(dock->breakerLastChangeText(logisticsBreaker)));
    QVERIFY(badge->isVisible());

    // The cool-down counts down while it is shown: ten ticks a second, each a fresh read.
    const QString first = dock->breakerCooldownText(logisticsBreaker);
    QVERIFY2(first.endsWith(QStringLiteral(" left of 10 s")), qPrintable(first));
    QVERIFY(dock->isTicking());
    QCOMPARE(dock->tickInterval(), 100);
    QTRY_VERIFY_WITH_TIMEOUT(dock->breakerCooldownText(logisticsBreaker) != first, timeoutMs);
    const RuntimeStatus status = console.runtime->monitor()->status();
    // Every breaker, by name: logistics' comes before the model's, which stays closed.
    QCOMPARE(status.breakers.size(), 2);
    QCOMPARE(status.breakers.first().dependency, logisticsBreaker);
    QCOMPARE(status.breakers.last().state, BreakerStatus::Breaker::Closed);
    QVERIFY(status.breakers.first().cooldownLeftMs > 0);
    QVERIFY(status.breakers.first().cooldownLeftMs < 10000);
    QCOMPARE(status.breakers.first().openCount, 1);
    QVERIFY(
        !saveScreenshot(console.window.get(), QStringLiteral("dock-breaker-open.png")).isEmpty());

    // Reset: closed at once, with an empty window; the badge goes.
    QPushButton *reset = dock->resetButton(logisticsBreaker);
    QVERIFY(reset && reset->isEnabled());
    QTest::mouseClick(reset, Qt::LeftButton);
    QCOMPARE(dock->breakerStateText(logisticsBreaker), QStringLiteral("Closed"));
    QCOMPARE(dock->breakerWindowText(logisticsBreaker), QStringLiteral("0 of 0 failed"));
    QCOMPARE(dock->breakerCooldownText(logisticsBreaker), QStringLiteral("\u2014"));
    QCOMPARE(dock->breakerLastChangeText(logisticsBreaker),
        QStringLiteral("Open \u2192 Closed, just now"));
    QCOMPARE(console.runtime->monitor()->status().breakers.first().lastChangeReason,
        QStringLiteral("reset by staff"));
    QVERIFY(!badge->isVisible());
    QVERIFY(!reset->isEnabled()); // nothing left to reset
    QCOMPARE(dock->tickInterval(), 1000); // only "ago" moves now
    QVERIFY(!console.runtime->monitor()->resetBreaker(QStringLiteral("no-such:breaker")));

    // Calls go through again: the next question's lookup is attempted (and fails, as set).
    const TurnResult again = console.askAndWait(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QCOMPARE(again.toolCalls.first().attemptsMade(), 3);
    QCOMPARE(dock->breakerWindowText(logisticsBreaker), QStringLiteral("3 of 3 failed"));

    // Hidden, the dock stops ticking.
    dock->hide();
    QVERIFY(!dock->isTicking());
}

void tst_DiagnosticsDock::countersShowTheLastTurnAndTheTotal()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    QVERIFY(console.setFaults(R"({"tools": {"queryLogistics": {"transientFailures": 2}}})"));
    QVERIFY(console.setPolicy(QStringLiteral("queryLogistics"), shortPolicy(200, 10, 20)));
    DiagnosticsDock *dock = console.window->diagnosticsDock();
    dock->show(); // the QA layout's: closed in the staff layout
    // Before any turn: totals are 0 (the duplicate count once checked), the last turn blank.
    QTRY_COMPARE_WITH_TIMEOUT(
        dock->counterText(Counter::ToolRetry, Column::Total), QStringLiteral("0"), timeoutMs);
    QCOMPARE(dock->counterText(Counter::ToolRetry, Column::LastTurn), QStringLiteral("\u2014"));

    // Flaky, then OK on the third attempt: two retries in this turn.
    bool ok = false;
    const TurnResult first = console.askAndWait(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QCOMPARE(first.toolRetries(), 2);
    QCOMPARE(dock->counterText(Counter::ToolRetry, Column::LastTurn), QStringLiteral("2"));
    // The total counts the turn at once, before the journal's sum has come back: never
    // smaller than the last turn's figure.
    QCOMPARE(dock->counterText(Counter::ToolRetry, Column::Total), QStringLiteral("2"));
    QCOMPARE(dock->counterText(Counter::ModelRetry, Column::LastTurn), QStringLiteral("0"));
    // The duplicate count is the backend's figure, never a turn's.
    QCOMPARE(dock->counterText(Counter::DuplicateBusinessObject, Column::LastTurn),
        QStringLiteral("\u2014"));
    QTRY_COMPARE_WITH_TIMEOUT(
        dock->counterText(Counter::ToolRetry, Column::Total), QStringLiteral("2"), timeoutMs);

    // A second turn: the fault's two failures are spent, so no retry now; the total stays.
    console.faults()->clear();
    console.askAndWait(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QCOMPARE(dock->counterText(Counter::ToolRetry, Column::LastTurn), QStringLiteral("0"));
    QTRY_COMPARE_WITH_TIMEOUT(
        dock->counterText(Counter::ToolRetry, Column::Total), QStringLiteral("2"), timeoutMs);
    // Every counter is there in staff words, with its name beside it.
    for (const Counter counter : Metrics::allCounters()) {
        QVERIFY(!DiagnosticsDock::counterWords(counter).isEmpty());
        QVERIFY(DiagnosticsDock::counterWords(counter) != Metrics::counterName(counter));
        bool named = false;
        for (const QLabel *label : dock->findChildren<QLabel *>())
            named = named || label->text() == Metrics::counterName(counter);
        QVERIFY2(named, qPrintable(Metrics::counterName(counter)));
    }
    QCOMPARE(
        DiagnosticsDock::counterWords(Counter::ToolRetry), QStringLiteral("Tool calls retried"));
    QVERIFY(!saveScreenshot(dock, QStringLiteral("dock-counters.png")).isEmpty());
}

void tst_DiagnosticsDock::latencyHistogramCountsEveryCall()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    QVERIFY(console.setFaults(R"({"tools": {"queryLogistics": {"latencyMs": 120}}})"));
    DiagnosticsDock *dock = console.window->diagnosticsDock();
    dock->show(); // the QA layout's: closed in the staff layout
    LatencyHistogram *histogram = dock->latencyHistogram();
    QVERIFY(!histogram->isVisible()); // no call yet
    bool ok = false;
    for (int turn = 0; turn < 3; ++turn) {
        console.askAndWait(QStringLiteral("Where is order A1001 and is SKU-200 in stock?"), &ok);
        QVERIFY(ok);
    }
    QVERIFY(histogram->isVisible());
    const QList<ToolLatencyStats::Histogram> rows = histogram->histograms();
    QCOMPARE(rows.size(), 2);
    int logisticsRow = -1;
    for (int row = 0; row < rows.size(); ++row) {
        const ToolLatencyStats::Histogram &h = rows.at(row);
        QCOMPARE(h.calls, 3);
        QCOMPARE(std::accumulate(h.counts.cbegin(), h.counts.cend(), 0), 3);
        if (h.tool == QLatin1String("queryLogistics"))
            logisticsRow = row;
    }
    QVERIFY(logisticsRow >= 0);
    // 120 ms of added latency: every logistics call in the "≤ 250 ms" bucket, drawn there.
    const ToolLatencyStats::Histogram &logistics = rows.at(logisticsRow);
    const int bucket = ToolLatencyStats::bucketOf(logistics.maxMs);
    QCOMPARE(ToolLatencyStats::bucketLabel(bucket), QStringLiteral("\u2264 250 ms"));
    QCOMPARE(logistics.counts[std::size_t(bucket)], 3);
    const QRectF bar = histogram->barRect(logisticsRow, bucket);
    QVERIFY(!bar.isEmpty());
    QVERIFY(histogram->barRect(logisticsRow, 0).isEmpty());
    QCOMPARE(histogram->toolTipAt(bar.center()),
        QStringLiteral("queryLogistics: 3 calls took \u2264 250 ms"));
    QVERIFY2(histogram->accessibleDescription().contains(
                 QStringLiteral("queryLogistics: 3 calls, longest")),
        qPrintable(histogram->accessibleDescription()));
    QVERIFY(!saveScreenshot(console.window.get(), QStringLiteral("dock-latency.png")).isEmpty());
}

// A breaker appears in the dock when its tool or model is first called, in the middle of a
// turn. Its row wraps its name rather than widening the dock: a wider dock made the
// conversation narrower mid-turn (30 px at the default size), and every turn on screen was laid
// out again at the new width.
void tst_DiagnosticsDock::aBreakerFirstSeenInATurnLeavesTheConversationAsWide()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    TranscriptView *transcript = console.window->transcript();
    QVERIFY(transcript->isVisible());
    console.window->diagnosticsDock()->show(); // the QA layout's: closed in the staff layout
    for (int pass = 0; pass < 8; ++pass)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    const int width = transcript->width();
    const int dockWidth = console.window->diagnosticsDock()->width();
    bool ok = false;
    console.askAndWait(QStringLiteral("Where is order A1001?"), &ok); // a model and a tool
    QVERIFY(ok);
    for (int pass = 0; pass < 8; ++pass)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    const QList<QPushButton *> resets =
        console.window->diagnosticsDock()->findChildren<QPushButton *>();
    QVERIFY(resets.size() >= 2); // a breaker row each, with its Reset button
    QCOMPARE(console.window->diagnosticsDock()->width(), dockWidth);
    QCOMPARE(transcript->width(), width);
}

QTEST_MAIN(tst_DiagnosticsDock)
#include "tst_diagnosticsdock.moc"
