#pragma once

#include "../resilience/failuretable.h"

#include <span>

namespace AgentConsole {

// The support domain's result codes: the answers only orders, logistics and stock give (DESIGN.md,
// "Failure taxonomy": nothing found). Values of ResultCode::Code numbered from
// ResultCode::firstDomainCode; their wire names, meanings and words are support's rows of the
// failure table (supportFailureRows()).
namespace SupportCode {
inline constexpr ResultCode::Code OrderNotFound = ResultCode::domainCode(0); // ORDER_NOT_FOUND
inline constexpr ResultCode::Code LogisticsNotFound = ResultCode::domainCode(1); // LOGISTICS_...
inline constexpr ResultCode::Code SkuNotFound = ResultCode::domainCode(2); // SKU_NOT_FOUND
} // namespace SupportCode

// Support's rows of the failure table, one per SupportCode.
std::span<const FailureTable::Row> supportFailureRows();

namespace Internal {
// Support's rows join the failure table before main() in every program with a file that
// includes this header: whatever can make or name a support code reads, writes and words it by
// its row, and nothing below support has to know it (FailureTable::join).
inline const bool supportRowsJoined = FailureTable::join(supportFailureRows());
} // namespace Internal

} // namespace AgentConsole
