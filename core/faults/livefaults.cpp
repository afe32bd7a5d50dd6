#include "livefaults.h"

namespace AgentConsole {

LiveFaults::LiveFaults()
    : m_plan(std::make_shared<const FaultPlan>())
{
}

LiveFaults::LiveFaults(FaultPlan plan)
    : m_plan(std::make_shared<const FaultPlan>(std::move(plan)))
{
}

std::shared_ptr<const FaultPlan> LiveFaults::current() const
{
    const QMutexLocker lock(&m_mutex);
    return m_plan;
}

void LiveFaults::set(FaultPlan plan)
{
    auto next = std::make_shared<const FaultPlan>(std::move(plan));
    const QMutexLocker lock(&m_mutex);
    m_plan.swap(next); // the old plan is released outside the lock, by `next`
}

} // namespace AgentConsole
