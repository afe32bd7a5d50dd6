#include "callsinflight.h"

namespace AgentConsole::Internal {

std::optional<int> CallsInFlight::indexOf(const QString &operationId) const
{
    const auto it = m_indexes.constFind(operationId);
    return it == m_indexes.cend() ? std::nullopt : std::optional<int>(*it);
}

bool CallsInFlight::Ended::takeArrived(ToolCallRecord &call) const
{
    const auto found = arrived.constFind(call.index);
    if (found == arrived.cend())
        return false;
    call.result = found->result;
    call.attempts = found->attempts;
    call.totalMs = found->totalMs;
    call.incidentId = found->incidentId;
    return true;
}

void CallsInFlight::Ended::takeStopped(ToolCallRecord &call) const
{
    if (const auto found = stopped.constFind(call.index); found != stopped.cend()) {
        call.attempts = found->attempts;
        call.totalMs = found->totalMs;
    }
}

void CallsInFlight::cancelRunning()
{
    for (QFuture<ToolCallOutcome> future : std::as_const(m_futures)) {
        if (!future.isFinished())
            future.cancel();
    }
}

CallsInFlight::Ended CallsInFlight::endUnfinished(const QList<ToolCallRecord> &records,
                                                  AttemptOutcome why, ToolExecutor &executor) const
{
    Ended ended;
    for (auto it = m_futures.cbegin(); it != m_futures.cend(); ++it) {
        const int index = it.key();
        if (records.at(index).state == ToolCallRecord::State::Finished)
            continue;
        if (it->isFinished() && it->resultCount() > 0) // ended, not yet delivered
            ended.arrived.insert(index, it->result());
        else if (auto outcome = executor.stop(m_executorCalls.value(index), why))
            ended.stopped.insert(index, std::move(*outcome));
    }
    return ended;
}

} // namespace AgentConsole::Internal
