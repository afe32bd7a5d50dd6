#pragma once

#include "../llm/fallbackchatmodel.h"
#include "../resilience/circuitbreaker.h"

namespace AgentConsole {

// What failing dependencies have left in a console: every breaker's state, window and counts,
// and the model providers taken out of the fallback chain with their cool-downs
// (RuntimeMonitor::dependencyState). A scenario run starts from none of it, as on a fresh start,
// and puts the staff member's back when it ends.
struct DependencyState
{
    CircuitBreakerRegistry::Snapshot breakers;
    FallbackChatModel::OutOfChain models;
};

} // namespace AgentConsole
