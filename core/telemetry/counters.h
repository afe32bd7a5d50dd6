#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QStringView>

#include <optional>

namespace AgentConsole::Metrics {
Q_NAMESPACE

// DESIGN.md's counters ("Circuit breakers, fallbacks, metrics"), per turn and in total, in
// DESIGN.md's order. Every place that stores, sums or shows one names it by this enum; its
// name (counterName()) is what the journal stores and agent-cli --json prints, and must never
// change.
enum class Counter {
    ModelRetry, // model_retry_count
    ToolRetry, // tool_retry_count
    AgentRestart, // agent_restart_count
    IdempotencyHit, // idempotency_hit_count
    IdempotencyConflict, // idempotency_conflict_count
    UnknownExecutionStatus, // unknown_execution_status_count
    CircuitBreakerOpen, // circuit_breaker_open_count
    FallbackModel, // fallback_model_count
    // One operationId owns more than one business object: the backend's figure, not a sum
    // over turns.
    DuplicateBusinessObject, // duplicate_business_object_count
};
Q_ENUM_NS(Counter)

QString counterName(Counter counter);
std::optional<Counter> counterFromName(QStringView name);
// Every counter, in DESIGN.md's order.
QList<Counter> allCounters();

} // namespace AgentConsole::Metrics
