#pragma once

#include "runtimestatus.h"

#include <memory>

namespace AgentConsole {

class SecretStore;

namespace OAuth {
class Authorizer;
class GrantStore;
} // namespace OAuth

// The runtime's side of MCP sign-ins (docs/MCP.md, "Servers that need sign-in"): grants kept
// in the runtime's keychain, and an authorizer's state in the plain values the window reads.
std::shared_ptr<OAuth::GrantStore> keychainGrants(std::shared_ptr<SecretStore> secrets);

void describeSignIn(const OAuth::Authorizer *authorizer, McpServerStatus *status);

} // namespace AgentConsole
