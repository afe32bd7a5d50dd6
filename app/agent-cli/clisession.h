#pragma once

#include "core/turn/turncheckpoint.h"

#include <QList>
#include <QObject>
#include <QStringList>

#include <cstdio>

namespace AgentConsole {

class AgentRuntime;
class ResumeQueue;

// Prints one turn's result as agent-cli does: the answer and a line per tool call, or one
// JSON object (the agent-cli --json shape) on a line.
void printTurn(const TurnResult &result, bool json);

// Feeds questions to the agent loop one turn at a time and prints each turn's result, as text
// or as one JSON object per line. Emits done(exitCode) when there is nothing left to ask.
class CliSession final : public QObject
{
    Q_OBJECT

public:
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

Q_SIGNALS:
    void done(int exitCode);

private:
    void askNext();

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
};

} // namespace AgentConsole
