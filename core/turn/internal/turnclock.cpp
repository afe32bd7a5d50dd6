#include "turnclock.h"

#include "../../resilience/retrybudget.h"

#include <QTimer>

#include <algorithm>

namespace AgentConsole::Internal {

TurnClock::TurnClock(std::chrono::milliseconds deadline, QObject *context,
                     std::function<void()> expired)
    : m_deadline(std::make_unique<QTimer>())
{
    m_clock.start();
    m_deadline->setSingleShot(true);
    m_deadline->setTimerType(Qt::PreciseTimer); // a coarse one may fire 5% early
    QObject::connect(m_deadline.get(), &QTimer::timeout, context, std::move(expired));
    m_deadline->start(deadline);
}

TurnClock::~TurnClock() = default;

void TurnClock::pauseForStaff()
{
    if (m_waitingForStaff++ == 0) {
        m_deadline->stop();
        m_pausedSince.start();
    }
}

void TurnClock::staffAnswered(RetryBudget &budget)
{
    budget.extendDeadline(std::chrono::milliseconds(m_pausedSince.restart()));
    if (--m_waitingForStaff == 0)
        m_deadline->start(std::max<qint64>(0, budget.deadline().remainingTime()));
}

void TurnClock::stop()
{
    if (m_deadline)
        m_deadline->stop();
}

void TurnClock::releaseTimerLater()
{
    if (m_deadline)
        m_deadline.release()->deleteLater();
}

} // namespace AgentConsole::Internal
