#include "turnrecovery.h"

#include "runtimewords.h"

#include "../async/await.h"
#include "../ledger/turnjournal.h"
#include "../telemetry/logging.h"
#include "../turn/agentloop.h"

#include <QLockFile>

namespace AgentConsole {

TurnRecovery::TurnRecovery(QObject *parent)
    : QObject(parent)
{
}

TurnRecovery::~TurnRecovery() = default;

void TurnRecovery::attach(std::unique_ptr<QLockFile> lock, TurnJournal *journal,
                          InterruptedTurns interrupted, const QString &userId,
                          const QString &tenantId, AgentLoop *loop)
{
    m_lock = std::move(lock);
    m_journal = journal;
    m_interrupted = std::move(interrupted);
    m_userId = userId;
    m_tenantId = tenantId;
    m_loop = loop;
    // A resumed turn that finished is no longer interrupted (a failed answer is offered again
    // at the next start, from the journal).
    connect(m_loop, &AgentLoop::turnFinished, this, [this](const TurnResult &result) {
        m_interrupted.take(result.conversationId, result.requestId);
    });
}

QList<TurnCheckpoint> TurnRecovery::interruptedTurns() const
{
    return m_interrupted.offered();
}

QList<SetAsideTurn> TurnRecovery::setAsideTurns() const
{
    return m_interrupted.setAside();
}

void TurnRecovery::dismissInterruptedTurn(const QString &conversationId, const QString &requestId)
{
    for (const TurnCheckpoint &turn : m_interrupted.take(conversationId, requestId)) {
        if (m_loop)
            m_loop->abandon(turn);
        if (m_journal)
            m_journal->dismiss(turn.conversationId, requestId);
    }
}

bool TurnRecovery::lendDataDirectory(QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    if (!m_loop || !m_lock)
        return fail(AgentRuntimeWords::tr("the console is not ready yet"));
    if (m_loop->isBusy())
        return fail(AgentRuntimeWords::tr("wait until the running question is answered"));
    if (m_lock->isLocked())
        m_lock->unlock();
    qCInfo(lcAgent).noquote() << "data directory lent to another process";
    return true;
}

bool TurnRecovery::isDataDirectoryLent() const
{
    return m_lock && !m_lock->isLocked();
}

void TurnRecovery::rescanInterruptedTurns()
{
    if (!m_journal) {
        Q_EMIT interruptedTurnsRescanned(AgentRuntimeWords::tr("the console is not ready yet"));
        return;
    }
    // A lock left by a killed child is stale (its process is gone) and is taken over.
    if (isDataDirectoryLent() && !m_lock->tryLock(0)) {
        qint64 pid = 0;
        QString host;
        QString application;
        m_lock->getLockInfo(&pid, &host, &application);
        Q_EMIT interruptedTurnsRescanned(
            AgentRuntimeWords::tr("another Agent Console process (pid %1) still holds the "
                                  "data directory")
                .arg(pid));
        return;
    }
    await(m_journal->resumable(), this, [this](const QList<JournalEntry> &entries) {
        InterruptedTurns turns;
        turns.sortOut(entries, m_userId, m_tenantId);
        m_interrupted = std::move(turns);
        Q_EMIT interruptedTurnsRescanned(QString());
    });
}

} // namespace AgentConsole
