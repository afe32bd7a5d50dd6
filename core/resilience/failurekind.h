#pragma once

#include <QObject>

namespace AgentConsole {
Q_NAMESPACE

// How one attempt failed. Only Transient and AttemptTimeout may ever be retried; the rest are
// final by nature (running them again cannot make them succeed, or must not be risked).
enum class FailureKind {
    None, // the attempt completed; its ToolResult says success or a business miss
    Transient, // connection reset, 429, 502/503/504: may recover on its own
    AttemptTimeout, // the attempt outlived its timeout and was cancelled
    InvalidArgument, // rejected before any attempt
    NotFound, // a business miss: no such order, no logistics yet, unknown SKU
    Permanent, // 400 from the backend: the request itself is wrong
    AccessDenied, // 401/403: configuration or permission error
    Unexpected, // a bug: an exception escaped the tool body
    Cancelled, // the caller cancelled the call
    CircuitOpen, // not attempted: the dependency's circuit breaker knows it is down
};
Q_ENUM_NS(FailureKind)

// What the attempt timeline shows for one attempt.
enum class AttemptOutcome {
    Succeeded,
    BusinessFailure, // a final, expected answer such as not found
    TransientFailure,
    TimedOut,
    Rejected,
    AccessDenied,
    Unexpected,
    Cancelled,
    // Not attempted: the breaker refused a retry after earlier attempts (it never reached the
    // dependency, and takes 0 ms). A call refused before its first attempt has no attempts.
    CircuitOpen,
    // Stopped by the turn's overall deadline while running (or, with 0 ms, while waiting for
    // its backoff): the dependency may still have answered, nobody waited for it.
    DeadlineReached,
    // Answered by the tool, but what it answers is that nobody knows whether the write was
    // done (EXECUTION_STATUS_UNKNOWN: its answer was lost and no status query could tell). Not
    // a business answer: the ledger keeps the key open and staff must check.
    StatusUnknown,
};
Q_ENUM_NS(AttemptOutcome)

} // namespace AgentConsole
