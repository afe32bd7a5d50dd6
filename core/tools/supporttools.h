#pragma once

#include <memory>

namespace AgentConsole {

class FaultPlan;
class SupportStore;
class ToolRegistry;

// Adds the read-only support tools (queryOrderStatus, queryLogistics, queryInventory) backed by
// the embedded store. `faults` may be null; when set, it is applied inside every attempt, where
// a real downstream would misbehave.
void registerSupportTools(ToolRegistry &registry, std::shared_ptr<const SupportStore> store,
                          std::shared_ptr<const FaultPlan> faults);

} // namespace AgentConsole
