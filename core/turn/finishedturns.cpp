#include "finishedturns.h"

#include "agentloop.h"

namespace AgentConsole {

FinishedTurns::FinishedTurns(AgentLoop *loop, QObject *parent)
    : QObject(parent)
{
    if (loop)
        connect(loop, &AgentLoop::turnFinished, this, &FinishedTurns::add);
}

std::optional<TurnResult> FinishedTurns::turn(const QString &requestId) const
{
    for (auto it = m_turns.crbegin(); it != m_turns.crend(); ++it) {
        if (it->requestId == requestId)
            return *it;
    }
    return std::nullopt;
}

std::optional<TurnResult> FinishedTurns::latest() const
{
    if (m_turns.isEmpty())
        return std::nullopt;
    return m_turns.constLast();
}

void FinishedTurns::add(const TurnResult &turn)
{
    // A request asked again under its own id (a replay) is one turn: the newer result wins.
    m_turns.removeIf([&turn](const TurnResult &t) {
        return t.requestId == turn.requestId && t.conversationId == turn.conversationId;
    });
    m_turns.append(turn);
    if (m_turns.size() > kMaxTurns)
        m_turns.remove(0, m_turns.size() - kMaxTurns);
    Q_EMIT changed();
}

void FinishedTurns::clear()
{
    if (m_turns.isEmpty())
        return;
    m_turns.clear();
    Q_EMIT changed();
}

} // namespace AgentConsole
