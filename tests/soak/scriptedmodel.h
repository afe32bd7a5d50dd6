#pragma once

#include "soakplan.h"

#include <QHash>
#include <QObject>

namespace AgentConsole::Testing {
class FakeOpenAiServer;
}

namespace AgentConsole::Soak {

// The soak's model: answers every request the fake OpenAI-compatible server receives from the
// running turn's plan, as a streamed chat completion (tool calls of the round the request is
// in, or the answer), or with the model fault the plan draws for that request.
class ScriptedModel final : public QObject
{
    Q_OBJECT

public:
    struct Timing
    {
        int connectTimeoutMs = 1000; // the provider's; a slow head comes after it
    };

    ScriptedModel(Testing::FakeOpenAiServer *server, const SoakPlan *plan, Timing timing,
        QObject *parent = nullptr);

    // The turn whose requests come next; its attempt counts start afresh.
    void setTurn(const TurnPlan &plan);

    qint64 requests() const { return m_requests; }
    // Faults served, by kind.
    const QHash<int, qint64> &faults() const { return m_faults; }

private:
    void answer(int index);

    Testing::FakeOpenAiServer *m_server;
    const SoakPlan *m_plan;
    Timing m_timing;
    TurnPlan m_turn;
    QHash<int, int> m_attemptsOfRound;
    qint64 m_requests = 0;
    QHash<int, qint64> m_faults; // by ModelFault
};

} // namespace AgentConsole::Soak
