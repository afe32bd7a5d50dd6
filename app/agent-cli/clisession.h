#pragma once

#include "core/turn/turncheckpoint.h"

#include <QList>
#include <QObject>
#include <QStringList>

#include <cstdio>

namespace AgentConsole {

class AgentRuntime;
class ResumeQueue;
class StandardInputLines;

// Prints one turn's result as agent-cli does: the answer and a line per tool call, or one
// JSON object (the agent-cli --json shape) on a line.
void printTurn(const TurnResult &result, bool json);

// Feeds questions to the agent loop one turn at a time and prints each turn's result, as text
// or as one JSON object per line. Emits done(exitCode) once, when there is nothing left to
// ask. Reading standard input, a terminal gets a prompt (stderr) and a pipe none; the event
// loop keeps running while it waits, so Ctrl+C is heard there too.
class CliSession final : public QObject
{
    Q_OBJECT

public:
    // What ended agent-cli when a staff member pressed Ctrl+C with no turn to cancel (at the
    // prompt), or a second time while a turn was being cancelled: 128 + SIGINT, as a shell's.
    static constexpr int interruptedExitCode = 130;
    static constexpr int usageErrorExitCode = 2;
    static constexpr int turnFailedExitCode = 3;

    CliSession(AgentRuntime *runtime, bool json, QObject *parent = nullptr);

    // Carries these interrupted turns on first, one at a time (agent-cli --resume).
    void setTurnsToResume(const QList<TurnCheckpoint> &turns);
    // Asks the questions in this conversation and the first one under this request id, when
    // not empty (agent-cli --conversation, --request-id).
    void setFirstRequest(const QString &conversationId, const QString &requestId);
    // With no questions, reads them from standard input, one per line, in one conversation;
    // after resuming turns, asks only the questions given.
    void run(const QStringList &questions);
    // Every turn this session finished (resumed ones included), in order: what --export writes.
    const QList<TurnResult> &finishedTurns() const { return m_finished; }
    // Ctrl+C: cancels the running turn (it is recorded as cancelled and is not offered for
    // resumption); with none running, or when its cancel is already under way, ends the
    // session (interruptedExitCode).
    void interrupt();
    // The terminal closed where a confirmation was asked (Ctrl+D): nothing more is asked;
    // the session ends once the running turn has.
    void endInput();
    // done() was emitted.
    bool isDone() const { return m_done; }

Q_SIGNALS:
    void done(int exitCode);

private:
    void askNext();
    void ask(QString question);
    void onLine(const QString &line, int number, bool tooLong);
    void prompt();
    void finish();

    AgentRuntime *m_runtime;
    bool m_json;
    bool m_fromStdin = false;
    QStringList m_questions;
    QList<TurnCheckpoint> m_toResume;
    QList<TurnResult> m_finished;
    bool m_resuming = false;
    ResumeQueue *m_resumeQueue = nullptr; // made by run(), with the loop
    QString m_conversationId;
    QString m_firstRequestId;
    bool m_askedAny = false;
    bool m_anyTurnFailed = false;
    bool m_usageError = false; // a question from stdin that could not be asked as it was
    StandardInputLines *m_input = nullptr; // made by run() when reading stdin
    bool m_prompted = false;
    bool m_inputEnded = false;
    bool m_turnRunning = false;
    bool m_cancelling = false;
    bool m_done = false;
};

} // namespace AgentConsole
