#pragma once

// The fault plan and retry policy types as the window sees them. ui/ depends on core/agent/
// only (DESIGN.md, "Layout"); the fault panel and the policy editor edit these values and
// hand them to AgentRuntime (setFaultPlan, setToolPolicy), which owns what is in force.
#include "../faults/faultplan.h"
#include "../resilience/retrypolicy.h"
