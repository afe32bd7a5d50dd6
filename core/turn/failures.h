#pragma once

#include "../resilience/failuretable.h"

namespace AgentConsole {

// The failure table the loop and the window read (resilience/failuretable.h): a row for every
// result code, the mechanism's and those each domain joined from its own room (the support
// domain's in core/support/supportfailures.*). The window reaches it here, in an application
// room, and neither it nor the loop includes a domain to read a domain's rows.
inline const FailureTable &failureTable()
{
    return FailureTable::instance();
}

} // namespace AgentConsole
