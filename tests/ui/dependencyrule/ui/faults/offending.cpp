// Not built: the fixture tst_uidependencyrule_catches runs the window's rule on. Both lines
// below break it; the rule must name each.
#include "core/console/agentruntime.h"
#include "core/ledger/turnjournal.h"

// A comment may name queryLogistics; code may not:
static const char *const kTool = "queryLogistics";
