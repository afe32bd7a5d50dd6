#pragma once

// Not part of the API: every attempt timeout and backoff of a ToolExecutor behind one precise
// Qt timer. With a Qt timer per call, each kill is a linear search of the thread's timer list,
// which made a burst of 1,000 simultaneous timeouts measurably late. Cancelled entries stay in
// the heap and are skipped when they come up (their sequence no longer matches the call's).

#include <QElapsedTimer>
#include <QtGlobal>

#include <functional>
#include <optional>
#include <queue>
#include <vector>

class QObject;

namespace AgentConsole::Internal {

class DeadlineQueue final
{
public:
    struct Due
    {
        quint64 callId;
        quint64 sequence;
    };

    // The wake-up timer runs on `timerOwner`, whose timerEvent() hands it to takeWakeTimer().
    explicit DeadlineQueue(QObject *timerOwner);

    // A deadline `ms` from now for `callId`; the sequence it returns is the call's live one.
    quint64 arm(quint64 callId, qint64 ms);
    // True (and the timer is spent) when `timerId` is this queue's wake-up.
    bool takeWakeTimer(int timerId);
    // The earliest entry whose time has come, taken out of the queue; none when nothing is due.
    std::optional<Due> takeDue();
    // Wakes up in time for the earliest entry of a call still `live`, dropping those of calls
    // that finished; no timer when there is none. A deadline is never handled before it is due.
    void rearm(const std::function<bool(quint64 callId)> &live);

private:
    struct Entry
    {
        qint64 dueNs;
        quint64 callId;
        quint64 sequence;
        bool operator>(const Entry &other) const { return dueNs > other.dueNs; }
    };

    QObject *m_timerOwner;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> m_entries;
    QElapsedTimer m_monotonic;
    quint64 m_nextSequence = 1;
    int m_wakeTimerId = 0;
    qint64 m_wakeDueNs = 0;
};

} // namespace AgentConsole::Internal
