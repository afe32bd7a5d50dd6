#pragma once

#include <QDeadlineTimer>

#include <atomic>
#include <memory>

namespace AgentConsole {

// One turn's allowance of retries, shared by the model layer and the tool layer so that
// layered retries cannot multiply (3 x 3 x 3) behind anyone's back (DESIGN.md, "Retry
// boundaries"). Thread-safe; every retry of either layer asks it first and is counted.
class RetryBudget final
{
public:
    enum class Layer { Model, Tool };

    explicit RetryBudget(int maxRetries, QDeadlineTimer deadline = QDeadlineTimer::Forever);

    // Takes one retry from the budget; false when none is left or the turn's deadline passed.
    bool tryConsume(Layer layer);
    int used(Layer layer) const;
    int remaining() const;
    int limit() const { return m_limit; }
    // The turn's one deadline: the turn's clock, the model layer and every tool call it hands
    // (ToolCallRequest::budget) read it here, so that moving it here moves it for all of them.
    QDeadlineTimer deadline() const { return m_deadline; }
    // Moves the deadline later by `pause`: time spent waiting for a person is not the turn's
    // own. Call on the thread that reads the deadline (the agent loop's and its executor's).
    void extendDeadline(std::chrono::milliseconds pause);

private:
    const int m_limit;
    QDeadlineTimer m_deadline;
    std::atomic<int> m_used{0};
    std::atomic<int> m_model{0};
    std::atomic<int> m_tool{0};
};

using RetryBudgetPtr = std::shared_ptr<RetryBudget>;

} // namespace AgentConsole
