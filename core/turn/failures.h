#pragma once

#include "../support/supportfailures.h"

namespace AgentConsole {

// The failure table the loop and the window read: a row for every result code, the
// mechanism's and every domain's (resilience/failuretable.h). The support wing is the only
// domain today; a new one (MCP tools) adds its rows where this table is composed.
inline const FailureTable &failureTable()
{
    return supportFailureTable();
}

} // namespace AgentConsole
