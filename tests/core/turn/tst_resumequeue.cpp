// ResumeQueue, the one queue that carries interrupted turns on for the window and agent-cli,
// over a real runtime (embedded store, ledger, journal, agent loop) on a temporary data
// directory; and InterruptedTurns, which sorts what the journal holds at start.
#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/turnrecovery.h"
#include "core/turn/interruptedturns.h"
#include "core/turn/resumequeue.h"
#include "core/turn/turncheckpoint.h"
#include "core/turn/turnresult.h"
#include "core/ledger/turnjournal.h"
#include "core/resilience/retrypolicy.h"
#include "journalfixtures.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using AgentConsole::Testing::receivedTurn;
using AgentConsole::Testing::requestIds;
using AgentConsole::Testing::settled;

namespace {

constexpr int timeoutMs = 20000;
// The demo store's first staff member, whom the runtime picks without --user.
const QString kUser = Testing::demoUser;
const QString kTenant = Testing::demoTenant;
const QString kStockQuestion = QStringLiteral("Is SKU-200 in stock?");
const QString kOrderQuestion = QStringLiteral("Where is order A1001?");

} // namespace

class tst_ResumeQueue final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void resumesOneTurnAtATimeInOrder();
    void aTurnTheLoopWillNotTakeIsSkippedAndReported();
    void aCancelledTurnGivesTheRestBack();
    void startWhileRunningIsIgnored();
    void interruptedTurnsSortsOutTheJournal();

private:
    // Writes `turns` into the data directory's journal and starts a runtime on it.
    bool startRuntime(const QList<TurnCheckpoint> &turns, RuntimeOptions options = {});
    // The queue's signals and the loop's turnFinished, in the order they came.
    void record(ResumeQueue *queue);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<AgentRuntime> m_runtime;
    QStringList m_events;
    QList<TurnCheckpoint> m_givenBack;
};

void tst_ResumeQueue::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
}

void tst_ResumeQueue::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_events.clear();
}

void tst_ResumeQueue::cleanup()
{
    m_runtime.reset();
    m_dir.reset();
}

bool tst_ResumeQueue::startRuntime(const QList<TurnCheckpoint> &turns, RuntimeOptions options)
{
    if (const QString problem = Testing::writeCheckpoints(m_dir->path(), turns);
        !problem.isEmpty()) {
        qWarning("journal not written: %s", qPrintable(problem));
        return false;
    }
    options.dataDirectory = m_dir->path();
    m_runtime = std::make_unique<AgentRuntime>(options);
    QSignalSpy ready(m_runtime.get(), &AgentRuntime::ready);
    QSignalSpy failed(m_runtime.get(), &AgentRuntime::failed);
    m_runtime->start();
    if (!QTest::qWaitFor([&] { return !ready.isEmpty() || !failed.isEmpty(); }, timeoutMs)
        || ready.isEmpty()) {
        qWarning("runtime not ready: %s",
                 failed.isEmpty() ? "no signal" : qPrintable(failed.first().first().toString()));
        return false;
    }
    return true;
}

void tst_ResumeQueue::record(ResumeQueue *queue)
{
    connect(queue, &ResumeQueue::turnStarting, this,
            [this, queue](const TurnCheckpoint &turn, int number, int total) {
        // The loop is free when a turn is about to start: the one before is over.
        m_events.append(QStringLiteral("starting %1 (%2 of %3)%4")
                            .arg(turn.result.requestId)
                            .arg(number)
                            .arg(total)
                            .arg(m_runtime->agentLoop()->isBusy() ? QStringLiteral(", busy")
                                                                  : QString()));
        QVERIFY(queue->isRunning());
    });
    connect(queue, &ResumeQueue::turnResumed, this, [this](const QString &requestId) {
        m_events.append(QStringLiteral("resumed %1").arg(requestId));
    });
    connect(queue, &ResumeQueue::turnNotResumed, this, [this](const TurnCheckpoint &turn) {
        m_events.append(QStringLiteral("not resumed %1").arg(turn.result.requestId));
    });
    connect(queue, &ResumeQueue::finished, this,
            [this](const QList<TurnCheckpoint> &givenBack, const QStringList &notResumed) {
        m_givenBack = givenBack;
        m_events.append(QStringLiteral("finished: given back [%1], not resumed [%2]")
                            .arg(requestIds(givenBack).join(QLatin1Char(',')),
                                 notResumed.join(QLatin1Char(','))));
    });
    connect(m_runtime->agentLoop(), &AgentLoop::turnFinished, this,
            [this](const TurnResult &result) {
        m_events.append(QStringLiteral("turn %1 %2")
                            .arg(result.requestId, turnStatusName(result.status)));
    });
}

void tst_ResumeQueue::resumesOneTurnAtATimeInOrder()
{
    QVERIFY(startRuntime({receivedTurn(QStringLiteral("r-1"), QStringLiteral("c-r-1"),
                                       kStockQuestion),
                          receivedTurn(QStringLiteral("r-2"), QStringLiteral("c-r-2"),
                                       kOrderQuestion)}));
    const QList<TurnCheckpoint> turns = m_runtime->recovery()->interruptedTurns();
    QCOMPARE(requestIds(turns), (QStringList{QStringLiteral("r-1"), QStringLiteral("r-2")}));

    ResumeQueue queue(m_runtime->agentLoop());
    record(&queue);
    QSignalSpy finished(&queue, &ResumeQueue::finished);
    QVERIFY(!queue.isRunning());
    queue.start(turns);
    QVERIFY(queue.isRunning());
    QCOMPARE(queue.currentRequestId(), QStringLiteral("r-1"));
    QVERIFY(finished.wait(timeoutMs));
    QVERIFY(!queue.isRunning());
    QVERIFY(queue.currentRequestId().isEmpty());
    const QString completed = turnStatusName(TurnStatus::Completed);
    QCOMPARE(m_events, (QStringList{
                           QStringLiteral("starting r-1 (1 of 2)"),
                           QStringLiteral("resumed r-1"),
                           QStringLiteral("turn r-1 %1").arg(completed),
                           QStringLiteral("starting r-2 (2 of 2)"),
                           QStringLiteral("resumed r-2"),
                           QStringLiteral("turn r-2 %1").arg(completed),
                           QStringLiteral("finished: given back [], not resumed []"),
                       }));
    // A finished resumed turn is no longer offered by the runtime.
    QVERIFY(m_runtime->recovery()->interruptedTurns().isEmpty());
}

void tst_ResumeQueue::aTurnTheLoopWillNotTakeIsSkippedAndReported()
{
    QVERIFY(startRuntime({receivedTurn(QStringLiteral("r-ok"), QStringLiteral("c-r-ok"),
                                       kStockQuestion)}));
    // A checkpoint of another staff member: the loop refuses it, whatever hands it over.
    const TurnCheckpoint foreign
        = receivedTurn(QStringLiteral("r-foreign"), QStringLiteral("c-r-foreign"),
                       kOrderQuestion, QStringLiteral("u-2001"));
    ResumeQueue queue(m_runtime->agentLoop());
    record(&queue);
    QSignalSpy finished(&queue, &ResumeQueue::finished);
    queue.start({foreign, m_runtime->recovery()->interruptedTurns().constFirst()});
    QVERIFY(finished.wait(timeoutMs));
    QCOMPARE(m_events, (QStringList{
                           QStringLiteral("starting r-foreign (1 of 2)"),
                           QStringLiteral("not resumed r-foreign"),
                           QStringLiteral("starting r-ok (2 of 2)"),
                           QStringLiteral("resumed r-ok"),
                           QStringLiteral("turn r-ok %1")
                               .arg(turnStatusName(TurnStatus::Completed)),
                           QStringLiteral("finished: given back [], not resumed [%1]")
                               .arg(kOrderQuestion),
                       }));
}

void tst_ResumeQueue::aCancelledTurnGivesTheRestBack()
{
    // The logistics lookup hangs for longer than the test: only a cancel ends the first turn.
    QFile plan(QDir(m_dir->path()).filePath(QStringLiteral("faults.json")));
    QVERIFY(plan.open(QIODevice::WriteOnly));
    plan.write(R"({"tools": {"queryLogistics": {"hang": true}}})");
    plan.close();
    RuntimeOptions options;
    options.faultPlanFile = plan.fileName();
    RetryPolicy slow = RetryPolicy::defaults();
    slow.attemptTimeout = std::chrono::seconds(60);
    options.toolPolicy = slow;
    QVERIFY(startRuntime({receivedTurn(QStringLiteral("r-hang"), QStringLiteral("c-r-hang"),
                                       kOrderQuestion),
                          receivedTurn(QStringLiteral("r-next"), QStringLiteral("c-r-next"),
                                       kStockQuestion),
                          receivedTurn(QStringLiteral("r-last"), QStringLiteral("c-r-last"),
                                       kStockQuestion)},
                         options));
    AgentLoop *loop = m_runtime->agentLoop();
    ResumeQueue queue(loop);
    record(&queue);
    QSignalSpy finished(&queue, &ResumeQueue::finished);
    QSignalSpy toolStarted(loop, &AgentLoop::toolCallStarted);
    queue.start(m_runtime->recovery()->interruptedTurns());
    QVERIFY(toolStarted.wait(timeoutMs));
    QVERIFY(loop->isBusy());
    loop->cancel();
    QVERIFY(finished.wait(timeoutMs));
    QCOMPARE(m_events, (QStringList{
                           QStringLiteral("starting r-hang (1 of 3)"),
                           QStringLiteral("resumed r-hang"),
                           QStringLiteral("turn r-hang %1")
                               .arg(turnStatusName(TurnStatus::Cancelled)),
                           QStringLiteral("finished: given back [r-next,r-last], not resumed []"),
                       }));
    // The ones given back can be carried on by a queue started again.
    m_events.clear();
    queue.start(m_givenBack.mid(0, 1));
    QVERIFY(finished.wait(timeoutMs));
    QCOMPARE(m_events.constFirst(), QStringLiteral("starting r-next (1 of 1)"));
    QCOMPARE(m_events.constLast(), QStringLiteral("finished: given back [], not resumed []"));
}

void tst_ResumeQueue::startWhileRunningIsIgnored()
{
    QVERIFY(startRuntime({receivedTurn(QStringLiteral("r-1"), QStringLiteral("c-r-1"),
                                       kStockQuestion),
                          receivedTurn(QStringLiteral("r-2"), QStringLiteral("c-r-2"),
                                       kStockQuestion)}));
    const QList<TurnCheckpoint> turns = m_runtime->recovery()->interruptedTurns();
    ResumeQueue queue(m_runtime->agentLoop());
    record(&queue);
    QSignalSpy finished(&queue, &ResumeQueue::finished);
    queue.start(turns.mid(0, 1));
    queue.start(turns.mid(1, 1)); // the loop is the first queue's: nothing happens
    QVERIFY(finished.wait(timeoutMs));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(m_events.filter(QStringLiteral("starting")),
             QStringList{QStringLiteral("starting r-1 (1 of 1)")});
}

void tst_ResumeQueue::interruptedTurnsSortsOutTheJournal()
{
    JournalEntry own = receivedTurn(QStringLiteral("r-own"), QStringLiteral("c-r-own"),
                                    kStockQuestion).toEntry();
    JournalEntry other
        = receivedTurn(QStringLiteral("r-other"), QStringLiteral("c-r-other"),
                       kStockQuestion, QStringLiteral("u-2001"))
              .toEntry();
    JournalEntry damaged = receivedTurn(QStringLiteral("r-bad"), QStringLiteral("c-r-bad"),
                                        kStockQuestion).toEntry();
    damaged.damage = QStringLiteral("state is not JSON"); // as the journal marks such a row
    JournalEntry later = receivedTurn(QStringLiteral("r-later"), QStringLiteral("c-r-later"),
                                      kOrderQuestion).toEntry();

    InterruptedTurns turns;
    turns.sortOut({own, other, damaged, later}, kUser, kTenant);
    QCOMPARE(requestIds(turns.offered()),
             (QStringList{QStringLiteral("r-own"), QStringLiteral("r-later")}));
    QCOMPARE(turns.setAside().size(), 2);
    QCOMPARE(turns.setAside().at(0).requestId, QStringLiteral("r-other"));
    QCOMPARE(int(turns.setAside().at(0).reason), int(SetAsideTurn::Reason::OtherSession));
    QCOMPARE(turns.setAside().at(1).requestId, QStringLiteral("r-bad"));
    QCOMPARE(int(turns.setAside().at(1).reason), int(SetAsideTurn::Reason::Damaged));

    QVERIFY(turns.take(QStringLiteral("c-r-own"), QStringLiteral("r-missing")).isEmpty());
    QCOMPARE(requestIds(turns.take(QStringLiteral("c-r-own"), QStringLiteral("r-own"))),
             QStringList{QStringLiteral("r-own")});
    QCOMPARE(requestIds(turns.offered()), QStringList{QStringLiteral("r-later")});
}

QTEST_GUILESS_MAIN(tst_ResumeQueue)
#include "tst_resumequeue.moc"
