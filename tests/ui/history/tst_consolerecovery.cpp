// The console window when core reports what went wrong before or behind it: turns interrupted
// by a stopped console (offered for resumption), idempotency keys that own more than one ticket
// (an alarm) and DESIGN.md's counters summed over every turn. Offscreen, over the real core:
// a real runtime on a temporary data directory, checkpoints written with the real TurnJournal,
// a real SQLite store. No mocks.
#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/runtimemonitor.h"
#include "core/console/turnrecovery.h"
#include "core/turn/turncheckpoint.h"
#include "core/turn/turnresult.h"
#include "core/ledger/turnjournal.h"
#include "core/resilience/retrypolicy.h"
#include "core/support/supportstore.h"
#include "ui/transcript/confirmationpanel.h"
#include "ui/diagnostics/diagnosticsdock.h"
#include "ui/diagnostics/duplicateticketalert.h"
#include "ui/history/interruptedturnsbanner.h"
#include "ui/window/consolewindow.h"
#include "ui/common/noticebanner.h"
#include "ui/transcript/questioninput.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/transcriptview.h"
#include "journalfixtures.h"

#include "transcriptwait.h"

#include <QDir>
#include <QFile>
#include <QFuture>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using AgentConsole::Testing::receivedTurn;
using AgentConsole::Testing::settled;

namespace {

constexpr int timeoutMs = 20000;
// The demo store's first staff member, whom the runtime picks without --user.
const QString kUser = Testing::demoUser;
const QString kTenant = Testing::demoTenant;

// "all 0" when every counter's total in the dock reads 0 (those in `except` left out), else
// the ones that do not, "tool_retry_count=2, ...".
QString totalsShown(const DiagnosticsDock *dock, const QList<Metrics::Counter> &except = {})
{
    QStringList notZero;
    for (const Metrics::Counter counter : Metrics::allCounters()) {
        const QString text = dock->counterText(counter, DiagnosticsDock::Column::Total);
        if (!except.contains(counter) && text != QLatin1String("0"))
            notZero.append(Metrics::counterName(counter) + QLatin1Char('=') + text);
    }
    return notZero.isEmpty() ? QStringLiteral("all 0") : notZero.join(QStringLiteral(", "));
}
const QString kFirstQuestion = QStringLiteral("Where is order A1001 and is SKU-200 in stock?");
const QString kSecondQuestion = QStringLiteral("Is SKU-200 in stock?");

std::optional<JournalEntry> journalEntry(TurnJournal &journal, const QString &conversationId,
                                         const QString &requestId)
{
    const QFuture<std::optional<JournalEntry>> read = journal.entry(conversationId, requestId);
    if (!settled(read))
        return std::nullopt;
    return read.result();
}

// The whole grab of a window once its nested layouts have settled.
QString saveScreenshot(QWidget *widget, const QString &fileName)
{
    Testing::waitUntilShown(widget);
    for (int pass = 0; pass < 16; ++pass)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    const QString path = QDir::current().absoluteFilePath(fileName);
    if (!widget->grab().save(path))
        return {};
    qInfo("screenshot: %s", qPrintable(path));
    return path;
}

// A runtime and its window on a data directory the test owns (so that a second console can
// open the same one). The window goes before the runtime it points into.
struct Console
{
    std::unique_ptr<AgentRuntime> runtime;
    std::unique_ptr<ConsoleWindow> window;

    AgentLoop *loop() const { return runtime->agentLoop(); }
    TranscriptView *transcript() const { return window->transcript(); }
    InterruptedTurnsBanner *offer() const { return window->interruptedTurnsBanner(); }
    QWidget *bannerRow() const { return offer()->parentWidget(); }
};

} // namespace

class tst_ConsoleRecovery final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void resumeCarriesInterruptedTurnsOnOneAtATime();
    void cancelStopsResumingAndOffersTheRest();
    void dismissStopsOfferingTheTurn();
    void duplicateTicketsRaiseAnAlertUntilTheyAreGone();
    void duplicateAlertShowsOnlyAPositiveCount_data();
    void duplicateAlertShowsOnlyAPositiveCount();
    void questionPreviewIsOneShortLine();
    void turnsNotThisSessionsAreReportedNotOffered();
    void anEmptyDataFileStopsTheConsole();

private:
    // Writes checkpoints into <dir>/turns.sqlite, as an interrupted console would have.
    void writeCheckpoints(const QString &dir, const QList<TurnCheckpoint> &turns);
    std::unique_ptr<Console> startConsole(const QString &dir, RuntimeOptions options = {});
    // Runs `sql` on <dir>/turns.sqlite: a journal edited by hand, or damaged.
    void editJournal(const QString &dir, const QString &sql);
};

void tst_ConsoleRecovery::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
    qRegisterMetaType<AgentConsole::ToolCallRecord>();
}

void tst_ConsoleRecovery::writeCheckpoints(const QString &dir,
                                           const QList<TurnCheckpoint> &turns)
{
    const QString problem = Testing::writeCheckpoints(dir, turns);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
}

void tst_ConsoleRecovery::editJournal(const QString &dir, const QString &sql)
{
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("editor"));
        db.setDatabaseName(QDir(dir).filePath(QStringLiteral("turns.sqlite")));
        QVERIFY(db.open());
        QSqlQuery query(db);
        QVERIFY2(query.exec(sql), qPrintable(query.lastError().text()));
        QCOMPARE(query.numRowsAffected(), 1);
        query.finish();
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("editor"));
}

std::unique_ptr<Console> tst_ConsoleRecovery::startConsole(const QString &dir,
                                                           RuntimeOptions options)
{
    options.dataDirectory = dir;
    auto console = std::make_unique<Console>();
    console->runtime = std::make_unique<AgentRuntime>(options);
    console->window = std::make_unique<ConsoleWindow>(console->runtime.get());
    console->window->resize(1000, 720);
    console->window->show();
    if (!QTest::qWaitForWindowExposed(console->window.get()))
        return {};
    QSignalSpy ready(console->runtime.get(), &AgentRuntime::ready);
    QSignalSpy failed(console->runtime.get(), &AgentRuntime::failed);
    console->runtime->start();
    if (!QTest::qWaitFor([&] { return !ready.isEmpty() || !failed.isEmpty(); }, timeoutMs)
        || ready.isEmpty()) {
        qWarning("runtime not ready: %s",
                 failed.isEmpty() ? "no signal" : qPrintable(failed.first().first().toString()));
        return {};
    }
    console->window->activateWindow();
    return console;
}

void tst_ConsoleRecovery::resumeCarriesInterruptedTurnsOnOneAtATime()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeCheckpoints(dir.path(),
                     {receivedTurn(QStringLiteral("r-test"), QStringLiteral("c-test"),
                                   kFirstQuestion),
                      receivedTurn(QStringLiteral("r-test-2"), QStringLiteral("c-test-2"),
                                   kSecondQuestion)});
    if (QTest::currentTestFailed())
        return;
    const std::unique_ptr<Console> console = startConsole(dir.path());
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    QCOMPARE(console->runtime->recovery()->interruptedTurns().size(), 2);

    // The offer: how many, and the first one's question.
    InterruptedTurnsBanner *offer = console->offer();
    QVERIFY(offer->isVisible());
    QVERIFY2(offer->text().startsWith(
                 QStringLiteral("2 interrupted requests can be resumed \u2014 \u201c%1\u201d")
                     .arg(kFirstQuestion)),
             qPrintable(offer->text()));
    QVERIFY(offer->resumeButton()->isVisible());
    QVERIFY(offer->resumeButton()->isEnabled());
    QVERIFY(offer->dismissButton()->isVisible());
    QVERIFY(!window->noticeBanner()->isVisible());
    QVERIFY(console->transcript()->requestIds().isEmpty());

    // A draft typed meanwhile stays a draft: it is not sent while the turns are resumed.
    const QString draft = QStringLiteral("Is order A1002 shipped?");
    QTest::keyClicks(window->questionInput(), draft);
    QVERIFY(window->sendButton()->isEnabled());
    // The totals are in the diagnostics dock: every counter 0 (the duplicate count has its
    // own alert).
    const DiagnosticsDock *dock = window->diagnosticsDock();
    QVERIFY(dock);
    QTRY_COMPARE_WITH_TIMEOUT(totalsShown(dock, {Metrics::Counter::DuplicateBusinessObject}),
                              QStringLiteral("all 0"), timeoutMs);
    QVERIFY(!saveScreenshot(window, QStringLiteral("consolerecovery-resume-offer.png"))
                 .isEmpty());

    // The sequence the loop reports, with what the window offered at each step.
    QStringList events;
    QObject watcher; // ends the connections before the locals they capture go away
    connect(console->loop(), &AgentLoop::turnStarted, &watcher,
            [&](const QString &requestId, const QString &) {
                const auto flag = [](bool on) { return QLatin1String(on ? "on" : "off"); };
                events.append(QStringLiteral("started %1, send %2, resuming %3")
                                  .arg(requestId, flag(window->sendButton()->isEnabled()),
                                       flag(window->isResuming())));
            });
    connect(console->loop(), &AgentLoop::turnResumed, &watcher,
            [&](const QString &requestId, const QString &stage, int restarts) {
                if (events.size() == 1) // the first one, as the staff member sees it start
                    saveScreenshot(window, QStringLiteral("consolerecovery-resuming.png"));
                events.append(QStringLiteral("resumed %1 at %2, restart %3")
                                  .arg(requestId, stage)
                                  .arg(restarts));
            });
    connect(console->loop(), &AgentLoop::turnFinished, &watcher, [&](const TurnResult &result) {
        events.append(QStringLiteral("finished %1 %2, restarts %3")
                          .arg(result.requestId, turnStatusName(result.status))
                          .arg(result.restarts));
    });
    QSignalSpy finished(console->loop(), &AgentLoop::turnFinished);

    QTest::mouseClick(offer->resumeButton(), Qt::LeftButton);
    QVERIFY(window->isResuming());
    QVERIFY(!window->sendButton()->isEnabled());
    QVERIFY2(offer->text().startsWith(QStringLiteral("Resuming interrupted request 1 of 2")),
             qPrintable(offer->text()));
    QVERIFY(!offer->resumeButton()->isVisible());
    // Enter does not start a question while the loop carries the interrupted turns on.
    QTest::keyClick(window->questionInput(), Qt::Key_Return);

    QTRY_VERIFY_WITH_TIMEOUT(!window->isResuming(), timeoutMs);
    QCOMPARE(finished.size(), 2);
    const QString completed = turnStatusName(TurnStatus::Completed);
    QCOMPARE(events,
             (QStringList{
                 QStringLiteral("started r-test, send off, resuming on"),
                 QStringLiteral("resumed r-test at RECEIVED, restart 1"),
                 QStringLiteral("finished r-test %1, restarts 1").arg(completed),
                 QStringLiteral("started r-test-2, send off, resuming on"),
                 QStringLiteral("resumed r-test-2 at RECEIVED, restart 1"),
                 QStringLiteral("finished r-test-2 %1, restarts 1").arg(completed)}));
    for (const QList<QVariant> &arguments : std::as_const(finished)) {
        const TurnResult result = arguments.first().value<TurnResult>();
        QCOMPARE(turnStatusName(result.status), completed);
        QCOMPARE(result.restarts, 1);
        QVERIFY(!result.answer.isEmpty());
    }

    // Each shows as a normal turn, marked where it had stopped.
    TranscriptView *transcript = console->transcript();
    QCOMPARE(transcript->requestIds(),
             (QStringList{QStringLiteral("r-test"), QStringLiteral("r-test-2")}));
    QCOMPARE(transcript->questionText(QStringLiteral("r-test")), kFirstQuestion);
    QCOMPARE(transcript->questionText(QStringLiteral("r-test-2")), kSecondQuestion);
    for (const QString &requestId : transcript->requestIds()) {
        QCOMPARE(transcript->resumedText(requestId),
                 QStringLiteral("Resumed: stopped before looking anything up"));
        QCOMPARE(transcript->turnStatusText(requestId), QStringLiteral("Answered"));
        QVERIFY(!transcript->answerText(requestId).isEmpty());
        QVERIFY2(transcript->footerText(requestId).contains(QStringLiteral("resumed once")),
                 qPrintable(transcript->footerText(requestId)));
    }
    QStringList cards;
    for (const ToolCallCard *card : transcript->toolCallCards(QStringLiteral("r-test")))
        cards.append(card->toolName() + QLatin1Char(' ') + card->statusText());
    cards.sort();
    QCOMPARE(cards, (QStringList{QStringLiteral("queryInventory OK"),
                                 QStringLiteral("queryLogistics OK")}));

    // The offer is gone, the draft is still there and can be sent now.
    QVERIFY(!offer->isVisible());
    QVERIFY(!console->bannerRow()->isVisible());
    QCOMPARE(window->questionInput()->toPlainText(), draft);
    QVERIFY(window->sendButton()->isEnabled());
    QVERIFY(!window->isTurnRunning());

    // The journal holds both as completed: nothing is offered on the next start.
    for (const auto &[conversationId, requestId] :
         {std::pair{QStringLiteral("c-test"), QStringLiteral("r-test")},
          std::pair{QStringLiteral("c-test-2"), QStringLiteral("r-test-2")}}) {
        const std::optional<JournalEntry> entry
            = journalEntry(*console->runtime->recovery()->journal(), conversationId, requestId);
        QVERIFY(entry);
        QCOMPARE(entry->stage, QStringLiteral("COMPLETED"));
        QVERIFY(!entry->resumable);
    }

    // The dock's totals count both restarts, and only them; the last turn was one of them.
    QTRY_COMPARE_WITH_TIMEOUT(totalsShown(dock), QStringLiteral("agent_restart_count=2"),
                              timeoutMs);
    QCOMPARE(dock->counterText(Metrics::Counter::AgentRestart,
                               DiagnosticsDock::Column::LastTurn),
             QStringLiteral("1"));
    QCOMPARE(DiagnosticsDock::counterWords(Metrics::Counter::AgentRestart),
             QStringLiteral("Interrupted turns resumed"));

    QVERIFY(!saveScreenshot(window, QStringLiteral("consolerecovery-resumed-turns.png"))
                 .isEmpty());
}

void tst_ConsoleRecovery::cancelStopsResumingAndOffersTheRest()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString hanging = QStringLiteral("Where is order A1001?");
    writeCheckpoints(dir.path(),
                     {receivedTurn(QStringLiteral("r-hang"), QStringLiteral("c-hang"), hanging),
                      receivedTurn(QStringLiteral("r-next"), QStringLiteral("c-next"),
                                   kSecondQuestion)});
    if (QTest::currentTestFailed())
        return;
    // The logistics lookup hangs for longer than the test: only Cancel ends the first turn.
    QFile plan(dir.filePath(QStringLiteral("faults.json")));
    QVERIFY(plan.open(QIODevice::WriteOnly));
    plan.write(R"({"tools": {"queryLogistics": {"hang": true}}})");
    plan.close();
    RuntimeOptions options;
    options.faultPlanFile = plan.fileName();
    RetryPolicy slow = RetryPolicy::defaults();
    slow.attemptTimeout = std::chrono::seconds(60);
    options.toolPolicy = slow;
    const std::unique_ptr<Console> console = startConsole(dir.path(), options);
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    TranscriptView *transcript = console->transcript();
    InterruptedTurnsBanner *offer = console->offer();
    QVERIFY(offer->text().startsWith(QStringLiteral("2 interrupted requests")));

    QSignalSpy finished(console->loop(), &AgentLoop::turnFinished);
    QTest::mouseClick(offer->resumeButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            const QList<ToolCallCard *> cards
                = transcript->toolCallCards(QStringLiteral("r-hang"));
            return !cards.isEmpty() && cards.first()->statusText() == QStringLiteral("Running…");
        }(),
        timeoutMs);
    QVERIFY(window->cancelButton()->isEnabled());
    QVERIFY(!window->sendButton()->isEnabled());
    QTest::mouseClick(window->cancelButton(), Qt::LeftButton);
    QVERIFY(finished.size() == 1 || finished.wait(timeoutMs));
    QTRY_VERIFY_WITH_TIMEOUT(!window->isResuming(), timeoutMs);
    QCOMPARE(finished.size(), 1); // the second one did not start
    QCOMPARE(turnStatusName(finished.first().first().value<TurnResult>().status),
             turnStatusName(TurnStatus::Cancelled));
    QCOMPARE(transcript->requestIds(), QStringList{QStringLiteral("r-hang")});
    QCOMPARE(transcript->turnStatusText(QStringLiteral("r-hang")), QStringLiteral("Cancelled"));
    QCOMPARE(transcript->resumedText(QStringLiteral("r-hang")),
             QStringLiteral("Resumed: stopped before looking anything up"));

    // The one not yet resumed is offered again, and can be resumed on its own.
    QVERIFY(offer->isVisible());
    QVERIFY2(offer->text().startsWith(
                 QStringLiteral("1 interrupted request can be resumed — “%1”")
                     .arg(kSecondQuestion)),
             qPrintable(offer->text()));
    QTRY_VERIFY_WITH_TIMEOUT(offer->resumeButton()->isEnabled(), timeoutMs);
    QTest::mouseClick(offer->resumeButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!window->isResuming(), timeoutMs);
    QCOMPARE(finished.size(), 2);
    const TurnResult next = finished.last().first().value<TurnResult>();
    QCOMPARE(next.requestId, QStringLiteral("r-next"));
    QCOMPARE(turnStatusName(next.status), turnStatusName(TurnStatus::Completed));
    QVERIFY(!offer->isVisible());
    QVERIFY(!console->bannerRow()->isVisible());
}

void tst_ConsoleRecovery::dismissStopsOfferingTheTurn()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeCheckpoints(dir.path(), {receivedTurn(QStringLiteral("r-test"),
                                               QStringLiteral("c-test"), kFirstQuestion)});
    if (QTest::currentTestFailed())
        return;
    {
        const std::unique_ptr<Console> console = startConsole(dir.path());
        QVERIFY(console);
        InterruptedTurnsBanner *offer = console->offer();
        QVERIFY(offer->isVisible());
        QVERIFY2(offer->text().startsWith(
                     QStringLiteral("1 interrupted request can be resumed \u2014 \u201c%1\u201d")
                         .arg(kFirstQuestion)),
                 qPrintable(offer->text()));

        // At the window's smallest size the text wraps and both buttons stay whole.
        console->window->resize(console->window->minimumSize());
        QVERIFY(!saveScreenshot(console->window.get(),
                                QStringLiteral("consolerecovery-resume-offer-narrow.png"))
                     .isEmpty());
        for (const QPushButton *button : {offer->resumeButton(), offer->dismissButton()}) {
            QVERIFY(offer->rect().contains(button->geometry()));
            QVERIFY(button->width() >= button->sizeHint().width());
        }

        QSignalSpy started(console->loop(), &AgentLoop::turnStarted);
        QTest::mouseClick(offer->dismissButton(), Qt::LeftButton);
        QVERIFY(!offer->isVisible());
        QVERIFY(!console->bannerRow()->isVisible());
        QVERIFY(console->runtime->recovery()->interruptedTurns().isEmpty());
        QCOMPARE(started.size(), 0);
        QVERIFY(console->transcript()->requestIds().isEmpty());
        // The record is kept, no longer resumable.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                const auto entry = journalEntry(*console->runtime->recovery()->journal(),
                                                QStringLiteral("c-test"),
                                                QStringLiteral("r-test"));
                return entry && !entry->resumable && entry->stage == QLatin1String("RECEIVED");
            }(),
            timeoutMs);
    } // this console stops and releases the data directory

    const std::unique_ptr<Console> next = startConsole(dir.path());
    QVERIFY(next);
    QVERIFY(next->runtime->recovery()->interruptedTurns().isEmpty());
    QVERIFY(!next->offer()->isVisible());
    QVERIFY(!next->bannerRow()->isVisible());
}

void tst_ConsoleRecovery::duplicateTicketsRaiseAnAlertUntilTheyAreGone()
{
    // A store whose tickets table lacks the UNIQUE (tenant, key) constraint, as a backend
    // that does not deduplicate would be, with one operationId that owns two tickets.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString storePath = dir.filePath(QStringLiteral("support-store.sqlite"));
    {
        SupportStore store(storePath);
        QString error;
        QVERIFY2(store.prepare(&error), qPrintable(error));
        store.releaseThreadConnection();
    }
    const QString key = QStringLiteral("t-acme:c-old:r-old:createTicket:0");
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("loose-store"));
        db.setDatabaseName(storePath);
        QVERIFY2(db.open(), qPrintable(db.lastError().text()));
        QSqlQuery query(db);
        const QStringList statements{
            QStringLiteral("DROP TABLE tickets"),
            QStringLiteral(
                "CREATE TABLE tickets (ticket_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, "
                "order_id TEXT NOT NULL, category TEXT NOT NULL, description TEXT NOT NULL, "
                "status TEXT NOT NULL DEFAULT 'OPEN', idempotency_key TEXT NOT NULL, "
                "created_by TEXT NOT NULL, created_at TEXT NOT NULL)"),
            QStringLiteral("INSERT INTO tickets VALUES ('T-000001', 't-acme', 'A1001', "
                           "'DAMAGED', 'The mug arrived broken', 'OPEN', '%1', 'u-1001', "
                           "'2024-05-01T10:00:00Z')").arg(key),
            QStringLiteral("INSERT INTO tickets VALUES ('T-000002', 't-acme', 'A1001', "
                           "'DAMAGED', 'The mug arrived broken', 'OPEN', '%1', 'u-1001', "
                           "'2024-05-01T10:00:03Z')").arg(key)};
        for (const QString &statement : statements)
            QVERIFY2(query.exec(statement), qPrintable(query.lastError().text()));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("loose-store"));

    const std::unique_ptr<Console> console = startConsole(dir.path());
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    DuplicateTicketAlert *alert = window->duplicateTicketAlert();
    // The runtime checks once it is ready; the alert follows its signal.
    const RuntimeMonitor *monitor = console->runtime->monitor();
    QTRY_COMPARE_WITH_TIMEOUT(monitor->duplicateBusinessObjects(), 1, timeoutMs);
    QVERIFY(alert->isVisible());
    QCOMPARE(alert->duplicateCount(), 1);
    QVERIFY2(alert->text().startsWith(
                 QStringLiteral("1 operation owns more than one ticket \u2014 check the backend")),
             qPrintable(alert->text()));
    QVERIFY2(alert->toolTip().contains(QStringLiteral("idempotency key")),
             qPrintable(alert->toolTip()));
    // The dock's totals carry the count beside the alert; the other counters stay 0.
    const DiagnosticsDock *dock = window->diagnosticsDock();
    QTRY_COMPARE_WITH_TIMEOUT(dock->counterText(Metrics::Counter::DuplicateBusinessObject,
                                                DiagnosticsDock::Column::Total),
                              QStringLiteral("1"), timeoutMs);
    QCOMPARE(totalsShown(dock, {Metrics::Counter::DuplicateBusinessObject}),
             QStringLiteral("all 0"));
    QVERIFY(!saveScreenshot(window, QStringLiteral("consolerecovery-duplicate-alert.png"))
                 .isEmpty());

    // The backend's owner removes the duplicate; the next turn that writes checks again.
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("loose-store"));
        db.setDatabaseName(storePath);
        QVERIFY2(db.open(), qPrintable(db.lastError().text()));
        QSqlQuery query(db);
        QVERIFY2(query.exec(QStringLiteral("DELETE FROM tickets WHERE ticket_id = 'T-000002'")),
                 qPrintable(query.lastError().text()));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("loose-store"));

    QSignalSpy checked(console->runtime->monitor(),
                       &RuntimeMonitor::duplicateBusinessObjectsChecked);
    QSignalSpy finished(console->loop(), &AgentLoop::turnFinished);
    QTest::keyClicks(window->questionInput(),
                     QStringLiteral("Create an after-sales ticket for order A1001: the mug "
                                    "arrived broken"));
    QTest::keyClick(window->questionInput(), Qt::Key_Return);
    QVERIFY(window->isTurnRunning());
    const QString requestId = console->transcript()->requestIds().constLast();
    ConfirmationPanel *panel = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (ToolCallCard *card : console->transcript()->toolCallCards(requestId)) {
                if (card->confirmationPanel() && card->confirmationPanel()->isAwaitingAnswer())
                    panel = card->confirmationPanel();
            }
            return panel != nullptr;
        }(),
        timeoutMs);
    // Still up while the turn runs: only a new check can lower it.
    QVERIFY(alert->isVisible());
    QTRY_VERIFY(panel->confirmButton()->isEnabled()); // the order's earlier tickets checked
    QTest::mouseClick(panel->confirmButton(), Qt::LeftButton);
    QVERIFY(finished.size() == 1 || finished.wait(timeoutMs));
    QCOMPARE(turnStatusName(finished.first().first().value<TurnResult>().status),
             turnStatusName(TurnStatus::Completed));
    QVERIFY(checked.size() == 1 || checked.wait(timeoutMs));
    QCOMPARE(checked.first().first().toInt(), 0);
    QVERIFY(!alert->isVisible());
    QCOMPARE(alert->duplicateCount(), 0);
    QVERIFY(!console->bannerRow()->isVisible());
    QTRY_COMPARE_WITH_TIMEOUT(dock->counterText(Metrics::Counter::DuplicateBusinessObject,
                                                DiagnosticsDock::Column::Total),
                              QStringLiteral("0"), timeoutMs);
}

void tst_ConsoleRecovery::duplicateAlertShowsOnlyAPositiveCount_data()
{
    QTest::addColumn<QList<int>>("counts");
    QTest::addColumn<bool>("shown");
    QTest::addColumn<QString>("text");
    const QString one = QStringLiteral("1 operation owns more than one ticket \u2014 check the "
                                       "backend");
    const QString three = QStringLiteral("3 operations own more than one ticket \u2014 check "
                                         "the backend");
    QTest::newRow("unknown") << QList<int>{-1} << false << QString();
    QTest::newRow("none") << QList<int>{0} << false << QString();
    QTest::newRow("one") << QList<int>{1} << true << one;
    QTest::newRow("three") << QList<int>{3} << true << three;
    QTest::newRow("persists while positive") << QList<int>{1, 3} << true << three;
    QTest::newRow("back to none") << QList<int>{3, 0} << false << QString();
    QTest::newRow("back to unknown") << QList<int>{3, -1} << false << QString();
}

void tst_ConsoleRecovery::duplicateAlertShowsOnlyAPositiveCount()
{
    QFETCH(QList<int>, counts);
    QFETCH(bool, shown);
    QFETCH(QString, text);
    QWidget host;
    auto *alert = new DuplicateTicketAlert(&host);
    host.show();
    QVERIFY(QTest::qWaitForWindowExposed(&host));
    QVERIFY(!alert->isVisible());
    for (int count : std::as_const(counts))
        alert->setDuplicateCount(count);
    QCOMPARE(alert->isVisible(), shown);
    QVERIFY2(alert->text().startsWith(text), qPrintable(alert->text()));
    QCOMPARE(alert->toolTip().isEmpty(), !shown);
}

void tst_ConsoleRecovery::questionPreviewIsOneShortLine()
{
    QCOMPARE(InterruptedTurnsBanner::questionPreview(QStringLiteral("Where is\n  A1001?")),
             QStringLiteral("Where is A1001?"));
    const QString preview
        = InterruptedTurnsBanner::questionPreview(QString(200, QLatin1Char('x')));
    QCOMPARE(preview.size(), 60);
    QVERIFY(preview.endsWith(QChar(0x2026)));
}

// Issue #8: a turn in the journal that another staff member or tenant saved (or that an edit
// made look so), or whose checkpoint cannot be read, is not offered and not run; the window
// says so in its notice, naming the requests and nothing of their content.
void tst_ConsoleRecovery::turnsNotThisSessionsAreReportedNotOffered()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TurnCheckpoint globex = receivedTurn(QStringLiteral("r-globex"), QStringLiteral("c-globex"),
                                         QStringLiteral("Where is order A2001? GLOBEX-SECRET"));
    globex.userId = QStringLiteral("u-2001");
    globex.tenantId = QStringLiteral("t-globex");
    writeCheckpoints(dir.path(),
                     {receivedTurn(QStringLiteral("r-own"), QStringLiteral("c-own"),
                                   kSecondQuestion),
                      globex,
                      receivedTurn(QStringLiteral("r-edited"), QStringLiteral("c-edited"),
                                   QStringLiteral("Where is A1002? EDITED-SECRET")),
                      receivedTurn(QStringLiteral("r-damaged"), QStringLiteral("c-damaged"),
                                   QStringLiteral("Where is A1003? DAMAGED-SECRET"))});
    if (QTest::currentTestFailed())
        return;
    editJournal(dir.path(), QStringLiteral("UPDATE turn_checkpoints SET state_json = "
                                           "replace(state_json, 'u-1001', 'u-1002') "
                                           "WHERE request_id = 'r-edited'"));
    editJournal(dir.path(), QStringLiteral("UPDATE turn_checkpoints SET state_json = "
                                           "'{\"format\": 1, \"question\": \"DAMAGED-SECRET' "
                                           "WHERE request_id = 'r-damaged'"));
    if (QTest::currentTestFailed())
        return;
    const std::unique_ptr<Console> console = startConsole(dir.path());
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();

    const QList<TurnCheckpoint> offered = console->runtime->recovery()->interruptedTurns();
    QCOMPARE(offered.size(), 1);
    QCOMPARE(offered.first().result.requestId, QStringLiteral("r-own"));
    QVERIFY2(console->offer()->text().startsWith(
                 QStringLiteral("1 interrupted request can be resumed")),
             qPrintable(console->offer()->text()));

    NoticeBanner *notice = window->noticeBanner();
    QVERIFY(notice->isVisible());
    QCOMPARE(notice->tone(), Tone::Danger); // one of them is damaged
    const QString said = notice->text();
    QVERIFY2(said.contains(QLatin1String("3 interrupted requests cannot be resumed")),
             qPrintable(said));
    for (const char *requestId : {"r-globex", "r-edited", "r-damaged"})
        QVERIFY2(said.contains(QLatin1String(requestId)), qPrintable(said));
    QVERIFY(said.contains(QLatin1String("another staff member or tenant")));
    QVERIFY(said.contains(QLatin1String("damaged")));
    // Nothing of the set-aside turns anywhere in the window.
    for (const QLabel *label : window->findChildren<QLabel *>()) {
        QVERIFY2(!label->text().contains(QLatin1String("SECRET")), qPrintable(label->text()));
        QVERIFY2(!label->toolTip().contains(QLatin1String("SECRET")),
                 qPrintable(label->toolTip()));
    }
    QVERIFY(console->transcript()->requestIds().isEmpty());
    QVERIFY(!saveScreenshot(window, QStringLiteral("consolerecovery-set-aside.png")).isEmpty());

    // Resume carries on the own turn only.
    QSignalSpy finished(console->loop(), &AgentLoop::turnFinished);
    QTest::mouseClick(console->offer()->resumeButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!window->isResuming(), timeoutMs);
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.first().first().value<TurnResult>().requestId, QStringLiteral("r-own"));
    QCOMPARE(console->transcript()->requestIds(), QStringList{QStringLiteral("r-own")});
    // The set-aside rows are kept as they were.
    for (const auto &[conversationId, requestId] :
         {std::pair{QStringLiteral("c-globex"), QStringLiteral("r-globex")},
          std::pair{QStringLiteral("c-edited"), QStringLiteral("r-edited")}}) {
        const std::optional<JournalEntry> entry
            = journalEntry(*console->runtime->recovery()->journal(), conversationId, requestId);
        QVERIFY(entry);
        QCOMPARE(entry->stage, QStringLiteral("RECEIVED"));
        QVERIFY(entry->resumable);
    }
}

// Issue #8: a data directory in use whose turns.sqlite is empty does not start with a new,
// empty journal (its interrupted turns would be gone): the window says which file, and what to
// do, and the file stays as it is.
void tst_ConsoleRecovery::anEmptyDataFileStopsTheConsole()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    {
        const std::unique_ptr<Console> first = startConsole(dir.path());
        QVERIFY(first);
    }
    const QString turns = dir.filePath(QStringLiteral("turns.sqlite"));
    for (const QString &suffix : {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")})
        QFile::remove(turns + suffix);
    QFile empty(turns);
    QVERIFY(empty.open(QIODevice::WriteOnly));
    empty.close();

    RuntimeOptions options;
    options.dataDirectory = dir.path();
    AgentRuntime runtime(options);
    ConsoleWindow window(&runtime);
    window.resize(1000, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy failed(&runtime, &AgentRuntime::failed);
    runtime.start();
    QVERIFY(failed.wait(timeoutMs));
    const QString reason = failed.first().first().toString();
    QVERIFY2(reason.contains(QDir::toNativeSeparators(turns))
                 && reason.contains(QLatin1String("is empty"))
                 && reason.contains(QLatin1String("restore it from a backup")),
             qPrintable(reason));
    QVERIFY(window.noticeBanner()->isVisible());
    QCOMPARE(window.noticeBanner()->tone(), Tone::Danger);
    QVERIFY2(window.noticeBanner()->text().contains(QDir::toNativeSeparators(turns)),
             qPrintable(window.noticeBanner()->text()));
    QVERIFY(!window.sendButton()->isEnabled());
    QCOMPARE(QFileInfo(turns).size(), 0); // not recreated
}

QTEST_MAIN(tst_ConsoleRecovery)
#include "tst_consolerecovery.moc"
