#include "turnresult.h"

#include <QJsonArray>
#include <QMetaEnum>

#include <algorithm>

namespace AgentConsole {

bool TurnResult::isPartialSuccess() const
{
    return outcome() == TurnOutcome::Partial;
}

TurnOutcome TurnResult::outcome() const
{
    if (status != TurnStatus::Completed)
        return TurnOutcome::Failed;
    if (modelDeclined)
        return TurnOutcome::Unanswered;
    int answered = 0;
    int unanswered = 0;
    for (const ToolCallRecord &call : toolCalls) {
        if (call.result.success || call.result.isNotFound())
            ++answered;
        else
            ++unanswered;
    }
    // An answer stopped at the model's output limit is not all of an answer.
    if (unanswered == 0)
        return answerCutOff ? TurnOutcome::Partial : TurnOutcome::Answered;
    return answered > 0 ? TurnOutcome::Partial : TurnOutcome::Unanswered;
}

int TurnResult::toolCallsOverLimit() const
{
    return int(std::count_if(toolCalls.cbegin(), toolCalls.cend(), [](const ToolCallRecord &c) {
        return c.result.code == ResultCode::ToolCallLimit;
    }));
}

int TurnResult::toolAttempts() const
{
    int attempts = 0;
    for (const ToolCallRecord &call : toolCalls)
        attempts += call.attemptsMade();
    return attempts;
}

int TurnResult::toolRetries() const
{
    int retries = 0;
    for (const ToolCallRecord &call : toolCalls)
        retries += std::max(0, call.attemptsMade() - 1);
    return retries;
}

int ToolCallRecord::attemptsMade() const
{
    return int(std::count_if(attempts.cbegin(), attempts.cend(),
                             [](const AttemptRecord &attempt) { return attempt.made; }));
}

QString turnStatusName(TurnStatus status)
{
    switch (status) {
    case TurnStatus::Completed: return QStringLiteral("completed");
    case TurnStatus::Failed: return QStringLiteral("failed");
    case TurnStatus::Cancelled: return QStringLiteral("cancelled");
    }
    return {};
}

std::optional<TurnStatus> turnStatusFromName(QStringView name)
{
    const QMetaEnum statuses = QMetaEnum::fromType<TurnStatus>();
    for (int i = 0; i < statuses.keyCount(); ++i) {
        const auto status = TurnStatus(statuses.value(i));
        if (turnStatusName(status) == name)
            return status;
    }
    return std::nullopt;
}

QString turnOutcomeName(TurnOutcome outcome)
{
    switch (outcome) {
    case TurnOutcome::Answered: return QStringLiteral("answered");
    case TurnOutcome::Partial: return QStringLiteral("partial");
    case TurnOutcome::Unanswered: return QStringLiteral("unanswered");
    case TurnOutcome::Failed: return QStringLiteral("failed");
    }
    return {};
}

QString attemptOutcomeName(AttemptOutcome outcome)
{
    switch (outcome) {
    case AttemptOutcome::Succeeded: return QStringLiteral("succeeded");
    case AttemptOutcome::BusinessFailure: return QStringLiteral("business_failure");
    case AttemptOutcome::TransientFailure: return QStringLiteral("transient_failure");
    case AttemptOutcome::TimedOut: return QStringLiteral("timed_out");
    case AttemptOutcome::Rejected: return QStringLiteral("rejected");
    case AttemptOutcome::AccessDenied: return QStringLiteral("access_denied");
    case AttemptOutcome::Unexpected: return QStringLiteral("unexpected_error");
    case AttemptOutcome::Cancelled: return QStringLiteral("cancelled");
    case AttemptOutcome::CircuitOpen: return QStringLiteral("circuit_open");
    case AttemptOutcome::DeadlineReached: return QStringLiteral("deadline_reached");
    }
    return {};
}

QJsonObject TurnResult::counters() const
{
    using Metrics::Counter;
    QJsonObject counters;
    for (const Counter counter : Metrics::allCounters()) {
        int value = 0;
        switch (counter) {
        case Counter::ModelRetry: value = modelRetries(); break;
        case Counter::ToolRetry: value = toolRetries(); break;
        case Counter::AgentRestart: value = restarts; break;
        case Counter::IdempotencyHit: value = idempotencyHits; break;
        case Counter::IdempotencyConflict: value = idempotencyConflicts; break;
        case Counter::UnknownExecutionStatus: value = unknownExecutionStatus; break;
        case Counter::CircuitBreakerOpen: value = breakerOpens; break;
        case Counter::FallbackModel: value = fallbackHops; break;
        case Counter::DuplicateBusinessObject:
            continue; // the backend's figure, merged into the journal by the runtime
        }
        counters.insert(Metrics::counterName(counter), value);
    }
    return counters;
}

QJsonObject TurnResult::toJson() const
{
    QJsonArray calls;
    for (const ToolCallRecord &call : toolCalls) {
        QJsonArray attempts;
        for (const AttemptRecord &attempt : call.attempts) {
            QJsonObject entry{{QStringLiteral("attempt"), attempt.attempt},
                              {QStringLiteral("outcome"), attemptOutcomeName(attempt.outcome)},
                              {QStringLiteral("startedMs"), attempt.startedMs},
                              {QStringLiteral("ms"), attempt.durationMs}};
            if (attempt.nextDelayMs >= 0)
                entry.insert(QStringLiteral("nextDelayMs"), attempt.nextDelayMs);
            if (attempt.retryAfterMs >= 0) // the delay was the server's Retry-After
                entry.insert(QStringLiteral("retryAfterMs"), attempt.retryAfterMs);
            if (!attempt.made)
                entry.insert(QStringLiteral("made"), false); // why the next one was not made
            attempts.append(entry);
        }
        QJsonObject entry{{QStringLiteral("name"), call.name},
                          {QStringLiteral("arguments"), call.arguments},
                          {QStringLiteral("success"), call.result.success},
                          {QStringLiteral("code"), call.result.code},
                          {QStringLiteral("message"), call.result.message},
                          {QStringLiteral("attempts"), attempts},
                          {QStringLiteral("totalMs"), call.totalMs},
                          {QStringLiteral("round"), call.round},
                          {QStringLiteral("operationId"), call.operationId},
                          {QStringLiteral("toolCallId"), call.toolCallId}};
        // What the model read: the order, the shipment, the ticket (never internal detail).
        if (!call.result.data.isUndefined() && !call.result.data.isNull())
            entry.insert(QStringLiteral("data"), call.result.data);
        // Refused by an open breaker: said apart from a 503, with the cool-down it had left
        // (no dependency name: for a REST backend it holds the host).
        if (call.circuitCooldownLeftMs >= 0) {
            entry.insert(QStringLiteral("reason"), QStringLiteral("circuit_open"));
            entry.insert(QStringLiteral("circuitCooldownLeftMs"), call.circuitCooldownLeftMs);
        }
        if (call.arguments.isEmpty() && !call.rawArguments.isEmpty())
            entry.insert(QStringLiteral("rawArguments"), call.rawArguments);
        calls.append(entry);
    }
    QJsonObject json{{QStringLiteral("requestId"), requestId},
                     {QStringLiteral("conversationId"), conversationId},
                     {QStringLiteral("question"), question},
                     {QStringLiteral("answer"), answer},
                     {QStringLiteral("status"), turnStatusName(status)},
                     {QStringLiteral("outcome"), turnOutcomeName(outcome())},
                     {QStringLiteral("partialSuccess"), isPartialSuccess()},
                     {QStringLiteral("answerCutOff"), answerCutOff},
                     {QStringLiteral("model"), model},
                     {QStringLiteral("toolRounds"), toolRounds},
                     {QStringLiteral("totalMs"), totalMs},
                     {QStringLiteral("toolCalls"), calls}};
    json.insert(QStringLiteral("attemptsByLayer"),
                QJsonObject{{QStringLiteral("model"), modelAttempts},
                            {QStringLiteral("tool"), toolAttempts()}});
    json.insert(QStringLiteral("counters"), counters());
    if (!incidentId.isEmpty())
        json.insert(QStringLiteral("incidentId"), incidentId);
    if (const int overLimit = toolCallsOverLimit(); overLimit > 0)
        json.insert(QStringLiteral("toolCallsNotRun"), overLimit);
    if (modelDeclined)
        json.insert(QStringLiteral("modelDeclined"), true);
    return json;
}

} // namespace AgentConsole
