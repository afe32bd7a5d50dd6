// TurnRecovery: what a turn killed half-way leaves, on a real runtime over a temporary data
// directory. The turns found at start (offered, or set aside), dismissed, finished by a
// resume, read again; and the data directory's lock lent to a child and taken back, refused
// while a turn runs, before the runtime is ready, or while someone else still holds it. The
// loop's own resumption is tst_turnrecovery's; the crash turn's real child, tst_scenariorunner's.
#include "journalfixtures.h"
#include "runtimestart.h"

#include "core/console/agentruntime.h"
#include "core/console/turnrecovery.h"
#include "core/ledger/turnjournal.h"
#include "core/turn/agentloop.h"
#include "core/turn/turnresult.h"

#include <QDir>
#include <QLockFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using AgentConsole::Testing::receivedTurn;
using AgentConsole::Testing::requestIds;

namespace {

constexpr int timeoutMs = 20000;
const QString kQuestion = QStringLiteral("Is SKU-200 in stock?");

} // namespace

class tst_TurnRecovery final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void beforeReadyNothingIsLentOrRead();
    void turnsFoundAtStartAreOfferedOrSetAside();
    void aDismissedTurnIsNotOfferedAgain();
    void aResumedTurnThatFinishedLeavesTheList();
    void theLockIsLentAndTakenBack();
    void notLentWhileATurnRuns();
    void notTakenBackWhileSomeoneHoldsIt();

private:
    bool startRuntime(const QList<TurnCheckpoint> &turns = {});
    QString lockPath() const;

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<AgentRuntime> m_runtime;
};

void tst_TurnRecovery::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
}

void tst_TurnRecovery::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void tst_TurnRecovery::cleanup()
{
    m_runtime.reset();
    m_dir.reset();
}

bool tst_TurnRecovery::startRuntime(const QList<TurnCheckpoint> &turns)
{
    if (const QString problem = Testing::writeCheckpoints(m_dir->path(), turns);
        !problem.isEmpty()) {
        qWarning("journal not written: %s", qPrintable(problem));
        return false;
    }
    RuntimeOptions options;
    options.dataDirectory = m_dir->path();
    m_runtime = std::make_unique<AgentRuntime>(options);
    return Testing::startAndWait(*m_runtime, timeoutMs);
}

QString tst_TurnRecovery::lockPath() const
{
    return QDir(m_dir->path()).filePath(QStringLiteral("console.lock"));
}

void tst_TurnRecovery::beforeReadyNothingIsLentOrRead()
{
    RuntimeOptions options;
    options.dataDirectory = m_dir->path();
    AgentRuntime runtime(options); // not started
    TurnRecovery *recovery = runtime.recovery();
    QVERIFY(!recovery->journal());
    QVERIFY(recovery->interruptedTurns().isEmpty());
    QVERIFY(recovery->setAsideTurns().isEmpty());
    QString error;
    QVERIFY(!recovery->lendDataDirectory(&error));
    QCOMPARE(error, QStringLiteral("the console is not ready yet"));
    QVERIFY(!recovery->isDataDirectoryLent());
    QSignalSpy rescanned(recovery, &TurnRecovery::interruptedTurnsRescanned);
    recovery->rescanInterruptedTurns();
    QCOMPARE(rescanned.size(), 1);
    QCOMPARE(rescanned.first().first().toString(), QStringLiteral("the console is not ready yet"));
}

void tst_TurnRecovery::turnsFoundAtStartAreOfferedOrSetAside()
{
    QVERIFY(startRuntime({receivedTurn(QStringLiteral("r-1"), QStringLiteral("c-1"), kQuestion),
                          receivedTurn(QStringLiteral("r-other"), QStringLiteral("c-other"),
                                       kQuestion, QStringLiteral("u-2001")),
                          receivedTurn(QStringLiteral("r-2"), QStringLiteral("c-2"), kQuestion)}));
    TurnRecovery *recovery = m_runtime->recovery();
    QVERIFY(recovery->journal());
    QCOMPARE(requestIds(recovery->interruptedTurns()),
             (QStringList{QStringLiteral("r-1"), QStringLiteral("r-2")}));
    const QList<SetAsideTurn> aside = recovery->setAsideTurns();
    QCOMPARE(aside.size(), 1);
    QCOMPARE(aside.first().requestId, QStringLiteral("r-other"));
    QCOMPARE(aside.first().reason, SetAsideTurn::Reason::OtherSession);
}

void tst_TurnRecovery::aDismissedTurnIsNotOfferedAgain()
{
    QVERIFY(startRuntime({receivedTurn(QStringLiteral("r-1"), QStringLiteral("c-1"), kQuestion),
                          receivedTurn(QStringLiteral("r-2"), QStringLiteral("c-2"), kQuestion)}));
    TurnRecovery *recovery = m_runtime->recovery();
    recovery->dismissInterruptedTurn(QStringLiteral("c-1"), QStringLiteral("r-1"));
    QCOMPARE(requestIds(recovery->interruptedTurns()), QStringList{QStringLiteral("r-2")});
    // Read again from the journal: the dismissal was stored, the record kept.
    QSignalSpy rescanned(recovery, &TurnRecovery::interruptedTurnsRescanned);
    recovery->rescanInterruptedTurns();
    QVERIFY(rescanned.wait(timeoutMs));
    QCOMPARE(rescanned.first().first().toString(), QString());
    QCOMPARE(requestIds(recovery->interruptedTurns()), QStringList{QStringLiteral("r-2")});
    const QFuture<std::optional<JournalEntry>> kept
        = recovery->journal()->entry(QStringLiteral("c-1"), QStringLiteral("r-1"));
    QVERIFY(Testing::settled(kept));
    QVERIFY(kept.result().has_value());
}

void tst_TurnRecovery::aResumedTurnThatFinishedLeavesTheList()
{
    QVERIFY(startRuntime({receivedTurn(QStringLiteral("r-1"), QStringLiteral("c-1"), kQuestion),
                          receivedTurn(QStringLiteral("r-2"), QStringLiteral("c-2"), kQuestion)}));
    TurnRecovery *recovery = m_runtime->recovery();
    AgentLoop *loop = m_runtime->agentLoop();
    QSignalSpy finished(loop, &AgentLoop::turnFinished);
    QVERIFY(loop->resume(recovery->interruptedTurns().constFirst()));
    QVERIFY(finished.wait(timeoutMs));
    QCOMPARE(requestIds(recovery->interruptedTurns()), QStringList{QStringLiteral("r-2")});
}

// What a scenario's crash turn does: the console lends its lock, a child takes and leaves it,
// and the console takes it back and reads the journal again.
void tst_TurnRecovery::theLockIsLentAndTakenBack()
{
    QVERIFY(startRuntime());
    TurnRecovery *recovery = m_runtime->recovery();
    QVERIFY(!recovery->isDataDirectoryLent());
    {
        QLockFile child(lockPath());
        QVERIFY(!child.tryLock(0)); // held by the console
    }
    QString error;
    QVERIFY2(recovery->lendDataDirectory(&error), qPrintable(error));
    QVERIFY(recovery->isDataDirectoryLent());
    {
        QLockFile child(lockPath());
        QVERIFY(child.tryLock(0)); // the child's now, until it goes
    }
    QSignalSpy rescanned(recovery, &TurnRecovery::interruptedTurnsRescanned);
    recovery->rescanInterruptedTurns();
    QVERIFY(rescanned.wait(timeoutMs));
    QCOMPARE(rescanned.first().first().toString(), QString());
    QVERIFY(!recovery->isDataDirectoryLent());
    QLockFile other(lockPath());
    QVERIFY(!other.tryLock(0));
}

void tst_TurnRecovery::notLentWhileATurnRuns()
{
    QVERIFY(startRuntime());
    AgentLoop *loop = m_runtime->agentLoop();
    QSignalSpy finished(loop, &AgentLoop::turnFinished);
    QVERIFY(!loop->ask(kQuestion).isEmpty());
    QVERIFY(loop->isBusy());
    QString error;
    QVERIFY(!m_runtime->recovery()->lendDataDirectory(&error));
    QCOMPARE(error, QStringLiteral("wait until the running question is answered"));
    QVERIFY(!m_runtime->recovery()->isDataDirectoryLent());
    QVERIFY(finished.wait(timeoutMs));
}

void tst_TurnRecovery::notTakenBackWhileSomeoneHoldsIt()
{
    QVERIFY(startRuntime());
    TurnRecovery *recovery = m_runtime->recovery();
    QVERIFY(recovery->lendDataDirectory(nullptr));
    QLockFile child(lockPath());
    QVERIFY(child.tryLock(0));
    QSignalSpy rescanned(recovery, &TurnRecovery::interruptedTurnsRescanned);
    recovery->rescanInterruptedTurns();
    QCOMPARE(rescanned.size(), 1); // said at once: nothing was read
    QCOMPARE(rescanned.first().first().toString(),
             QStringLiteral("another Agent Console process (pid %1) still holds the data "
                            "directory")
                 .arg(QCoreApplication::applicationPid()));
    QVERIFY(recovery->isDataDirectoryLent());
    child.unlock();
    recovery->rescanInterruptedTurns();
    QVERIFY(rescanned.wait(timeoutMs));
    QVERIFY(!recovery->isDataDirectoryLent());
}

QTEST_GUILESS_MAIN(tst_TurnRecovery)
#include "tst_turnrecoveryservice.moc"
