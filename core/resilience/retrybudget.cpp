#include "retrybudget.h"

namespace AgentConsole {

RetryBudget::RetryBudget(int maxRetries, QDeadlineTimer deadline)
    : m_limit(maxRetries)
    , m_deadline(deadline)
{
}

bool RetryBudget::tryConsume(Layer layer)
{
    if (m_deadline.hasExpired())
        return false;
    int used = m_used.load();
    do {
        if (used >= m_limit)
            return false;
    } while (!m_used.compare_exchange_weak(used, used + 1));
    (layer == Layer::Model ? m_model : m_tool).fetch_add(1);
    return true;
}

void RetryBudget::extendDeadline(std::chrono::milliseconds pause)
{
    if (!m_deadline.isForever() && pause.count() > 0)
        m_deadline += pause.count(); // milliseconds later, same timer type
}

int RetryBudget::used(Layer layer) const
{
    return (layer == Layer::Model ? m_model : m_tool).load();
}

int RetryBudget::remaining() const
{
    return std::max(0, m_limit - m_used.load());
}

} // namespace AgentConsole
