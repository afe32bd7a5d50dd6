#pragma once

// Test-only. What the runtime keeps to itself but a suite must reach to drive its mechanism
// directly (open a breaker, watch the executor's attempts, count its abandoned bodies). No
// front end uses it: the window and agent-cli see the runtime's services and nothing else.
namespace AgentConsole {

class AgentRuntime;
class CircuitBreakerRegistry;
class ToolExecutor;

struct RuntimeTestSeam
{
    // Valid after AgentRuntime::ready().
    static ToolExecutor *executor(const AgentRuntime &runtime);
    // One breaker per provider and per backend route; valid for the runtime's whole life.
    static CircuitBreakerRegistry *breakers(const AgentRuntime &runtime);
};

} // namespace AgentConsole
