#pragma once

#include "../tools/tooldescriptor.h"

#include <memory>

namespace AgentConsole {

class LiveFaults;
class TicketBackend;
class ToolRegistry;

// Adds createTicket(orderId, category, description), the write tool. It has side effects: the
// agent loop asks the staff member to confirm its exact arguments and runs it through the
// idempotency ledger with the operationId as the key. The key also travels to the backend,
// which deduplicates by it; an attempt that may repeat an earlier one asks the backend for
// the key's status before sending anything. A fault plan's createTicket entry makes every
// attempt misbehave where the backend would (docs/FAULTS.md): latency and a hang before
// anything is asked or sent, failures before the write, and commitThenLoseAnswer after it.
void registerTicketTool(ToolRegistry &registry, std::shared_ptr<const TicketBackend> backend,
                        std::shared_ptr<const LiveFaults> faults = nullptr);

// What the model and the window are told of createTicket.
ToolDescriptor ticketToolDescriptor();

} // namespace AgentConsole
