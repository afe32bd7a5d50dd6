#pragma once

#include "../turnresult.h"

#include "../../resilience/toolexecutor.h"

#include <QFuture>
#include <QHash>
#include <QString>

#include <optional>

namespace AgentConsole::Internal {

// A turn's tool calls as the executor runs them: which record each operationId names, the
// future of each call handed to the executor, and the executor's own id for it (from its first
// attempt event), so that a stopped turn can end every running call at once, with the attempt
// it cut short on the record.
class CallsInFlight final
{
public:
    // What a stop found: the calls that had ended but whose outcome was not delivered yet
    // (that outcome is the call's result: a lookup that succeeded is not "cancelled", a ticket
    // that was created is not "unknown"), and the calls the executor stopped.
    struct Ended
    {
        QHash<int, ToolCallOutcome> arrived;
        QHash<int, ToolCallOutcome> stopped;

        // Puts the outcome that arrived for `call` on it; false when none did.
        bool takeArrived(ToolCallRecord &call) const;
        // Puts the attempts and the time of the call the executor stopped on it, if it did.
        void takeStopped(ToolCallRecord &call) const;
    };

    void add(const QString &operationId, int index) { m_indexes.insert(operationId, index); }
    std::optional<int> indexOf(const QString &operationId) const;
    void track(int index, const QFuture<ToolCallOutcome> &future)
    {
        m_futures.insert(index, future);
    }
    void attemptSeen(int index, quint64 executorCallId)
    {
        m_executorCalls.insert(index, executorCallId);
    }

    // Cancels every call still running: the executor raises its attempt's cancellation token.
    void cancelRunning();
    // Ends every call of `records` not finished yet: its outcome if it had arrived, else the
    // executor stops it now and records `why` (Cancelled or DeadlineReached) for its attempt.
    Ended endUnfinished(const QList<ToolCallRecord> &records, AttemptOutcome why,
                        ToolExecutor &executor) const;

private:
    QHash<QString, int> m_indexes; // operationId -> index into the turn's toolCalls
    QHash<int, QFuture<ToolCallOutcome>> m_futures;
    QHash<int, quint64> m_executorCalls;
};

} // namespace AgentConsole::Internal
