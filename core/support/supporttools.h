#pragma once

#include <memory>

namespace AgentConsole {

struct KnownTools;
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

// The tools a fault plan or a scenario may name, and which of them write: those of `registry`
// (a running console's, MCP servers' tools included), or the support tools and the ticket tool
// as every console registers them (no backend needed: only names and kinds are read).
KnownTools knownToolsOf(const ToolRegistry &registry);
KnownTools supportKnownTools();

} // namespace AgentConsole
