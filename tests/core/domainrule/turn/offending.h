#pragma once

// A fixture for tst_domainrule_catches: the loop reading the support domain's failure rows by
// including them, as core/turn/failures.h once did.
#include "../support/supportfailures.h"
