#pragma once

// A domain of the tests' own, joined to the failure table as a real domain joins its rows
// (core/support/supportfailures.h): a suite of a room below support (the executor's) shows
// that a domain's "nothing found" answer is told as one without naming an order.
#include "core/resilience/failuretable.h"

namespace AgentConsole::TestDomain {

// Far from the support domain's numbers, which a suite that links support also has.
inline constexpr ResultCode::Code NothingFound = ResultCode::domainCode(40);

inline constexpr FailureTable::Row rows[] = {
    {NothingFound, "TEST_THING_NOT_FOUND", false, true, FailureTable::LedgerRow::FailedFinal,
     FailureTable::Severity::Neutral, "Not found", {}, {}, {"No such thing", "没有这个东西"}},
};

inline const bool joined = FailureTable::join(rows);

} // namespace AgentConsole::TestDomain
