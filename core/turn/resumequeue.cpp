#include "resumequeue.h"

#include "agentloop.h"
#include "turnresult.h"

#include <utility>

namespace AgentConsole {

ResumeQueue::ResumeQueue(AgentLoop *loop, QObject *parent)
    : QObject(parent)
    , m_loop(loop)
{
    Q_ASSERT(loop);
    connect(loop, &AgentLoop::turnFinished, this, &ResumeQueue::onTurnFinished);
}

void ResumeQueue::start(const QList<TurnCheckpoint> &turns)
{
    if (m_running)
        return;
    m_queue = turns;
    m_givenBack.clear();
    m_notResumed.clear();
    m_total = int(m_queue.size());
    m_started = 0;
    m_running = true;
    resumeNext();
}

void ResumeQueue::onTurnFinished(const TurnResult &result)
{
    if (!m_running || result.requestId != m_currentRequestId)
        return;
    m_currentRequestId.clear();
    if (result.status == TurnStatus::Cancelled) {
        // The staff member stopped it: the ones not yet resumed are given back.
        m_givenBack = std::exchange(m_queue, {});
    }
    // The next one starts once every receiver of this turnFinished has seen it.
    QMetaObject::invokeMethod(this, &ResumeQueue::resumeNext, Qt::QueuedConnection);
}

void ResumeQueue::resumeNext()
{
    if (!m_running || !m_loop || !m_currentRequestId.isEmpty())
        return;
    while (!m_queue.isEmpty()) {
        const TurnCheckpoint checkpoint = m_queue.takeFirst();
        ++m_started;
        Q_EMIT turnStarting(checkpoint, m_started, m_total);
        // Set before resume(): its turnFinished may in principle come before resume returns.
        m_currentRequestId = checkpoint.result.requestId;
        if (m_loop->resume(checkpoint)) {
            Q_EMIT turnResumed(checkpoint.result.requestId);
            return;
        }
        // The loop decides what can be carried on; this one it would not.
        m_currentRequestId.clear();
        m_notResumed.append(checkpoint.result.question);
        Q_EMIT turnNotResumed(checkpoint);
    }
    m_running = false;
    Q_EMIT finished(std::exchange(m_givenBack, {}), std::exchange(m_notResumed, {}));
}

} // namespace AgentConsole
