#pragma once

#include <memory>

namespace AgentConsole {

class LiveFaults;
class SupportBackend;
class SupportStore;
class ToolRegistry;

// Adds the read-only support tools (queryOrderStatus, queryLogistics, queryInventory,
// listOrderTickets) backed by `backend` (the embedded store or a REST backend, see
// supportbackend.h). `faults` may be null; when set, it is applied inside every attempt, where
// a real downstream would misbehave.
void registerSupportTools(ToolRegistry &registry, std::shared_ptr<const SupportBackend> backend,
                          std::shared_ptr<const LiveFaults> faults);

// The same tools on the embedded store: the console's default backend.
void registerSupportTools(ToolRegistry &registry, std::shared_ptr<const SupportStore> store,
                          std::shared_ptr<const LiveFaults> faults);

} // namespace AgentConsole
