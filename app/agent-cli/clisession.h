#pragma once

#include <QObject>
#include <QStringList>

#include <cstdio>

namespace AgentConsole {

class AgentRuntime;
struct TurnResult;

// Feeds questions to the agent loop one turn at a time and prints each turn's result, as text
// or as one JSON object per line. Emits done(exitCode) when there is nothing left to ask.
class CliSession final : public QObject
{
    Q_OBJECT

public:
    CliSession(AgentRuntime *runtime, bool json, QObject *parent = nullptr);

    // With no questions, reads them from standard input, one per line, in one conversation.
    void run(const QStringList &questions);

Q_SIGNALS:
    void done(int exitCode);

private:
    void askNext();
    void print(const TurnResult &result);

    AgentRuntime *m_runtime;
    bool m_json;
    bool m_fromStdin = false;
    QStringList m_questions;
    bool m_anyTurnFailed = false;
};

} // namespace AgentConsole
