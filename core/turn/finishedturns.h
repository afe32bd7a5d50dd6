#pragma once

#include "turnresult.h"

#include <QList>
#include <QObject>
#include <QPointer>

namespace AgentConsole {

class AgentLoop;

// The finished turns of the conversation on screen, oldest first, as the loop reported them
// (resumed turns included): what "Export conversation" and "Export this turn" export. The
// window owns one and clears it with the transcript when a new conversation starts. Bounded
// like the transcript it mirrors: the oldest turns go first past kMaxTurns.
class FinishedTurns final : public QObject
{
    Q_OBJECT

public:
    static constexpr qsizetype kMaxTurns = 1000;

    explicit FinishedTurns(AgentLoop *loop, QObject *parent = nullptr);

    const QList<TurnResult> &turns() const { return m_turns; }
    bool isEmpty() const { return m_turns.isEmpty(); }
    // The finished turn of that request; nullopt while it runs or when it is not in this
    // conversation.
    std::optional<TurnResult> turn(const QString &requestId) const;
    std::optional<TurnResult> latest() const;
    void add(const TurnResult &turn);
    void clear();

Q_SIGNALS:
    void changed();

private:
    QList<TurnResult> m_turns;
};

} // namespace AgentConsole
