#pragma once

// The fault plan and retry policy types as the window sees them. ui/ includes the application
// rooms only (docs/ARCHITECTURE.md, "The window's rule"); the fault panel and the policy
// editor edit these values and hand them to FaultControl::setPlan and ToolPolicies::setPolicy,
// which own what is in force.
#include "../faults/faultplan.h"
#include "../resilience/retrypolicy.h"
