#include "counters.h"

#include <QMetaEnum>

namespace AgentConsole::Metrics {

QString counterName(Counter counter)
{
    switch (counter) {
    case Counter::ModelRetry:
        return QStringLiteral("model_retry_count");
    case Counter::ToolRetry:
        return QStringLiteral("tool_retry_count");
    case Counter::AgentRestart:
        return QStringLiteral("agent_restart_count");
    case Counter::IdempotencyHit:
        return QStringLiteral("idempotency_hit_count");
    case Counter::IdempotencyConflict:
        return QStringLiteral("idempotency_conflict_count");
    case Counter::UnknownExecutionStatus:
        return QStringLiteral("unknown_execution_status_count");
    case Counter::CircuitBreakerOpen:
        return QStringLiteral("circuit_breaker_open_count");
    case Counter::FallbackModel:
        return QStringLiteral("fallback_model_count");
    case Counter::DuplicateBusinessObject:
        return QStringLiteral("duplicate_business_object_count");
    }
    return {};
}

QList<Counter> allCounters()
{
    const QMetaEnum counters = QMetaEnum::fromType<Counter>();
    QList<Counter> all;
    for (int i = 0; i < counters.keyCount(); ++i)
        all.append(Counter(counters.value(i)));
    return all;
}

std::optional<Counter> counterFromName(QStringView name)
{
    for (const Counter counter : allCounters()) {
        if (counterName(counter) == name)
            return counter;
    }
    return std::nullopt;
}

} // namespace AgentConsole::Metrics
