#pragma once

#include "../resilience/failuretable.h"

#include <span>

namespace AgentConsole {

// The support wing's rows of the failure table: the codes only orders, logistics and stock
// produce (ORDER_NOT_FOUND, LOGISTICS_NOT_FOUND, SKU_NOT_FOUND). Their enum values and wire
// names are in resilience/resultcode.h with every other code's; what they mean and how they
// are worded is here, with the domain that produces them (see failuretable.h).
std::span<const FailureTable::Row> supportFailureRows();

// The whole table: the mechanism's rows and the support wing's. Support code words its
// failures from it, and agent/ hands it to the window (failureTable()).
const FailureTable &supportFailureTable();

} // namespace AgentConsole
