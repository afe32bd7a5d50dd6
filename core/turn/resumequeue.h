#pragma once

#include "turncheckpoint.h"

#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

namespace AgentConsole {

class AgentLoop;
struct TurnResult;

// Carries interrupted turns on through an agent loop, one at a time and in order: the next
// one starts once the running one finished (from a fresh event-loop pass, after every
// receiver of turnFinished has seen it). A turn the loop will not resume is skipped and
// reported; a resumed turn that is cancelled stops the queue, and the turns not yet started
// are given back. The same for the window and for agent-cli --resume.
class ResumeQueue final : public QObject
{
    Q_OBJECT

public:
    explicit ResumeQueue(AgentLoop *loop, QObject *parent = nullptr);

    // Starts carrying these turns on; nothing happens while the queue is running.
    void start(const QList<TurnCheckpoint> &turns);
    // From start() until finished(): the loop is the queue's meanwhile.
    bool isRunning() const { return m_running; }
    // The request of the resumed turn that is running; empty between turns.
    QString currentRequestId() const { return m_currentRequestId; }

Q_SIGNALS:
    // Emitted just before the loop is asked to resume the turn: `number` of `total`, 1-based.
    void turnStarting(const AgentConsole::TurnCheckpoint &turn, int number, int total);
    // The loop took the turn on (it may already be over); or it would not.
    void turnResumed(const QString &requestId);
    void turnNotResumed(const AgentConsole::TurnCheckpoint &turn);
    // No turn is left to start. `givenBack`: the turns not started because one was cancelled;
    // `notResumed`: the questions of the turns the loop would not carry on, in order.
    void finished(const QList<AgentConsole::TurnCheckpoint> &givenBack,
                  const QStringList &notResumed);

private:
    void onTurnFinished(const TurnResult &result);
    void resumeNext();

    QPointer<AgentLoop> m_loop;
    QList<TurnCheckpoint> m_queue;
    QList<TurnCheckpoint> m_givenBack;
    QStringList m_notResumed;
    QString m_currentRequestId;
    bool m_running = false;
    int m_total = 0;
    int m_started = 0; // the running one included
};

} // namespace AgentConsole
