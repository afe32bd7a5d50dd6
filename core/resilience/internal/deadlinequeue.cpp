#include "deadlinequeue.h"

#include <QObject>

#include <algorithm>
#include <chrono>

namespace AgentConsole::Internal {

DeadlineQueue::DeadlineQueue(QObject *timerOwner)
    : m_timerOwner(timerOwner)
{
    m_monotonic.start();
}

quint64 DeadlineQueue::arm(quint64 callId, qint64 ms)
{
    const quint64 sequence = m_nextSequence++;
    m_entries.push(
        {m_monotonic.nsecsElapsed() + std::max<qint64>(0, ms) * 1'000'000, callId, sequence});
    return sequence;
}

bool DeadlineQueue::takeWakeTimer(int timerId)
{
    if (m_wakeTimerId == 0 || timerId != m_wakeTimerId)
        return false;
    m_timerOwner->killTimer(m_wakeTimerId);
    m_wakeTimerId = 0;
    return true;
}

std::optional<DeadlineQueue::Due> DeadlineQueue::takeDue()
{
    if (m_entries.empty() || m_entries.top().dueNs > m_monotonic.nsecsElapsed())
        return std::nullopt;
    const Entry due = m_entries.top();
    m_entries.pop(); // before it is handled: the handler may arm new deadlines
    return Due{due.callId, due.sequence};
}

void DeadlineQueue::rearm(const std::function<bool(quint64 callId)> &live)
{
    while (!m_entries.empty() && !live(m_entries.top().callId))
        m_entries.pop(); // finished calls leave nothing worth waking for
    if (m_entries.empty()) {
        if (m_wakeTimerId != 0)
            m_timerOwner->killTimer(m_wakeTimerId);
        m_wakeTimerId = 0;
        return;
    }
    const qint64 dueNs = m_entries.top().dueNs;
    if (m_wakeTimerId != 0 && m_wakeDueNs <= dueNs)
        return; // already waking up in time
    if (m_wakeTimerId != 0)
        m_timerOwner->killTimer(m_wakeTimerId);
    // Qt timers count whole milliseconds: round down and, if woken a fraction early, the
    // next wake-up is 0 ms away.
    const qint64 remainingNs = std::max<qint64>(0, dueNs - m_monotonic.nsecsElapsed());
    // Precise: a coarse timer is up to 5% (5 ms on 100 ms) early or late by design.
    m_wakeTimerId = m_timerOwner->startTimer(std::chrono::milliseconds{remainingNs / 1'000'000},
                                             Qt::PreciseTimer);
    m_wakeDueNs = dueNs;
}

} // namespace AgentConsole::Internal
