#pragma once

#include <QElapsedTimer>
#include <QtGlobal>

#include <chrono>
#include <functional>
#include <memory>

class QObject;
class QTimer;

namespace AgentConsole {

class RetryBudget;

namespace Internal {

// A turn's time: how long it has run (counting the time before an interruption), and its one
// overall deadline, which stands still while the staff member reads a write's confirmation.
// The time spent reading is given back to the turn's retry budget at every answer, so that a
// write confirmed while another still waits starts with the turn's time as it was.
class TurnClock final
{
public:
    // Starts the clock and the deadline; `expired` runs on `context`'s thread when it passes.
    TurnClock(std::chrono::milliseconds deadline, QObject *context, std::function<void()> expired);
    ~TurnClock();

    // The time the turn ran before an interruption (a resumed turn's).
    void carryOver(qint64 priorMs) { m_priorMs = priorMs; }
    qint64 elapsedMs() const { return m_priorMs + m_clock.elapsed(); }

    // A write waits for the staff member: the deadline stops with the first one waiting.
    void pauseForStaff();
    // The staff member answered one: the reading time goes back to `budget`, and the deadline
    // runs again (with what the budget has left) once nobody waits.
    void staffAnswered(RetryBudget &budget);
    void stop();
    // The deadline's timer may be the one whose timeout is being delivered: it goes later.
    void releaseTimerLater();

private:
    QElapsedTimer m_clock;
    qint64 m_priorMs = 0;
    std::unique_ptr<QTimer> m_deadline;
    int m_waitingForStaff = 0;
    QElapsedTimer m_pausedSince;
};

} // namespace Internal
} // namespace AgentConsole
