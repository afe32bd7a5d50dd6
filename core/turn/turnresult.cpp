#include "turnresult.h"

#include <QJsonArray>
#include <QMetaEnum>

#include <algorithm>
#include <cmath>
#include <utility>

namespace AgentConsole {
namespace {

// Reads the fields of one JSON object strictly: a missing field or one of another type is
// remembered (the first problem wins) and read as the type's empty value.
class StrictFields
{
public:
    StrictFields(const QJsonObject &object, QString where, QString *problem)
        : m_object(object)
        , m_where(std::move(where))
        , m_problem(problem)
    {
    }

    QString string(const char *key) { return take(key, QJsonValue::String).toString(); }
    bool boolean(const char *key) { return take(key, QJsonValue::Bool).toBool(); }
    QJsonObject object(const char *key) { return take(key, QJsonValue::Object).toObject(); }
    QJsonArray array(const char *key) { return take(key, QJsonValue::Array).toArray(); }
    qint64 integer(const char *key, qint64 fallback = 0, bool optional = false)
    {
        if (optional && !has(key))
            return fallback;
        const QJsonValue value = take(key, QJsonValue::Double);
        if (!value.isDouble())
            return fallback;
        const double number = value.toDouble();
        // Whole numbers in the range a double holds exactly (times, counts, indexes).
        if (number != double(qint64(number)) || std::abs(number) > 9007199254740991.0) {
            fail(QStringLiteral("is not a whole number"), key);
            return fallback;
        }
        return qint64(number);
    }
    bool has(const char *key) const { return m_object.contains(QLatin1String(key)); }

    void fail(const QString &why, const char *key)
    {
        if (m_problem->isEmpty())
            *m_problem = QStringLiteral("%1\"%2\" %3").arg(m_where, QLatin1String(key), why);
    }

private:
    QJsonValue take(const char *key, QJsonValue::Type type)
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (value.isUndefined()) {
            fail(QStringLiteral("is missing"), key);
            return {};
        }
        if (value.type() != type) {
            fail(QStringLiteral("has the wrong type"), key);
            return {};
        }
        return value;
    }

    const QJsonObject &m_object;
    QString m_where;
    QString *m_problem;
};

std::optional<AttemptRecord> attemptFrom(const QJsonObject &json, const QString &where,
                                         QString *problem)
{
    StrictFields f(json, where, problem);
    AttemptRecord attempt;
    attempt.attempt = int(f.integer("attempt"));
    const QString outcome = f.string("outcome");
    attempt.startedMs = f.integer("startedMs");
    attempt.durationMs = f.integer("ms");
    attempt.nextDelayMs = f.integer("nextDelayMs", -1, true);
    attempt.made = !f.has("made") || f.boolean("made");
    attempt.retryAfterMs = f.integer("retryAfterMs", -1, true);
    if (!problem->isEmpty())
        return std::nullopt;
    const std::optional<AttemptOutcome> known = attemptOutcomeFromName(outcome);
    if (!known) {
        f.fail(QStringLiteral("is not an attempt outcome"), "outcome");
        return std::nullopt;
    }
    attempt.outcome = *known;
    return attempt;
}

std::optional<ToolCallRecord> callFrom(const QJsonObject &json, int index, QString *problem)
{
    const QString where = QStringLiteral("toolCalls[%1].").arg(index);
    StrictFields f(json, where, problem);
    ToolCallRecord call;
    call.index = index;
    call.state = ToolCallRecord::State::Finished;
    call.name = f.string("name");
    call.arguments = f.object("arguments");
    call.result.success = f.boolean("success");
    call.result.setCodeName(f.string("code"));
    call.result.message = f.string("message");
    const QJsonArray attempts = f.array("attempts");
    call.totalMs = f.integer("totalMs");
    call.round = int(f.integer("round"));
    call.operationId = f.string("operationId");
    call.toolCallId = f.string("toolCallId");
    if (f.has("data"))
        call.result.data = json.value(QLatin1String("data"));
    if (f.has("circuitCooldownLeftMs"))
        call.circuitCooldownLeftMs = f.integer("circuitCooldownLeftMs");
    if (f.has("isolation")) {
        call.isolation = isolationFromJson(f.object("isolation"));
        if (call.isolation.isNull())
            f.fail(QStringLiteral("names no dependency"), "isolation");
    }
    if (f.has("rawArguments"))
        call.rawArguments = f.string("rawArguments");
    if (f.has("policy")) {
        const QJsonObject policyJson = f.object("policy");
        StrictFields policy(policyJson, where + QStringLiteral("policy."), problem);
        call.attemptTimeoutMs = policy.integer("attemptTimeoutMs");
        call.worstCaseMs = policy.integer("worstCaseMs");
        call.maxAttempts = int(policy.integer("maxAttempts"));
        call.turnDeadlineLeftMs = policy.integer("turnDeadlineLeftMs", -1, true);
        if (call.attemptTimeoutMs < 0 || call.worstCaseMs < 0 || call.maxAttempts < 0
            || call.turnDeadlineLeftMs < -1)
            policy.fail(QStringLiteral("holds a negative time"), "worstCaseMs");
    }
    for (qsizetype i = 0; i < attempts.size() && problem->isEmpty(); ++i) {
        if (!attempts.at(i).isObject()) {
            *problem = QStringLiteral("%1attempts[%2] is not an object").arg(where).arg(i);
            break;
        }
        const std::optional<AttemptRecord> attempt = attemptFrom(
            attempts.at(i).toObject(), QStringLiteral("%1attempts[%2].").arg(where).arg(i),
            problem);
        if (attempt)
            call.attempts.append(*attempt);
    }
    if (!problem->isEmpty())
        return std::nullopt;
    return call;
}

} // namespace

QJsonObject isolationToJson(const BreakerIsolation &isolation)
{
    QJsonObject json{{QStringLiteral("dependency"), isolation.dependency},
                     {QStringLiteral("reason"), isolation.reason},
                     {QStringLiteral("leadStaffId"), isolation.leadStaffId},
                     {QStringLiteral("leadRole"), isolation.leadRole},
                     {QStringLiteral("since"),
                      isolation.since.toUTC().toString(Qt::ISODateWithMs)}};
    if (isolation.until.isValid())
        json.insert(QStringLiteral("until"), isolation.until.toUTC().toString(Qt::ISODateWithMs));
    return json;
}

BreakerIsolation isolationFromJson(const QJsonObject &json)
{
    BreakerIsolation isolation;
    isolation.dependency = json.value(QLatin1String("dependency")).toString();
    isolation.reason = json.value(QLatin1String("reason")).toString();
    isolation.leadStaffId = json.value(QLatin1String("leadStaffId")).toString();
    isolation.leadRole = json.value(QLatin1String("leadRole")).toString();
    isolation.since = QDateTime::fromString(json.value(QLatin1String("since")).toString(),
                                            Qt::ISODateWithMs);
    isolation.until = QDateTime::fromString(json.value(QLatin1String("until")).toString(),
                                            Qt::ISODateWithMs);
    return isolation;
}

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
    case TurnStatus::Completed:
        return QStringLiteral("completed");
    case TurnStatus::Failed:
        return QStringLiteral("failed");
    case TurnStatus::Cancelled:
        return QStringLiteral("cancelled");
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
    case TurnOutcome::Answered:
        return QStringLiteral("answered");
    case TurnOutcome::Partial:
        return QStringLiteral("partial");
    case TurnOutcome::Unanswered:
        return QStringLiteral("unanswered");
    case TurnOutcome::Failed:
        return QStringLiteral("failed");
    }
    return {};
}

QString attemptOutcomeName(AttemptOutcome outcome)
{
    switch (outcome) {
    case AttemptOutcome::Succeeded:
        return QStringLiteral("succeeded");
    case AttemptOutcome::BusinessFailure:
        return QStringLiteral("business_failure");
    case AttemptOutcome::TransientFailure:
        return QStringLiteral("transient_failure");
    case AttemptOutcome::TimedOut:
        return QStringLiteral("timed_out");
    case AttemptOutcome::Rejected:
        return QStringLiteral("rejected");
    case AttemptOutcome::AccessDenied:
        return QStringLiteral("access_denied");
    case AttemptOutcome::Unexpected:
        return QStringLiteral("unexpected_error");
    case AttemptOutcome::Cancelled:
        return QStringLiteral("cancelled");
    case AttemptOutcome::CircuitOpen:
        return QStringLiteral("circuit_open");
    case AttemptOutcome::DeadlineReached:
        return QStringLiteral("deadline_reached");
    case AttemptOutcome::StatusUnknown:
        return QStringLiteral("status_unknown");
    }
    return {};
}

std::optional<AttemptOutcome> attemptOutcomeFromName(QStringView name)
{
    for (int i = 0; i <= int(AttemptOutcome::StatusUnknown); ++i) {
        if (attemptOutcomeName(AttemptOutcome(i)) == name)
            return AttemptOutcome(i);
    }
    return std::nullopt;
}

QJsonObject TurnResult::counters() const
{
    using Metrics::Counter;
    QJsonObject counters;
    for (const Counter counter : Metrics::allCounters()) {
        int value = 0;
        switch (counter) {
        case Counter::ModelRetry:
            value = modelRetries();
            break;
        case Counter::ToolRetry:
            value = toolRetries();
            break;
        case Counter::AgentRestart:
            value = restarts;
            break;
        case Counter::IdempotencyHit:
            value = idempotencyHits;
            break;
        case Counter::IdempotencyConflict:
            value = idempotencyConflicts;
            break;
        case Counter::UnknownExecutionStatus:
            value = unknownExecutionStatus;
            break;
        case Counter::CircuitBreakerOpen:
            value = breakerOpens;
            break;
        case Counter::FallbackModel:
            value = fallbackHops;
            break;
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
                          {QStringLiteral("code"), call.result.codeName()},
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
        // Isolated by a lead: who, when and why (docs/TEAM.md).
        if (!call.isolation.isNull()) {
            entry.insert(QStringLiteral("reason"), QStringLiteral("isolated"));
            entry.insert(QStringLiteral("isolation"), isolationToJson(call.isolation));
        }
        if (call.arguments.isEmpty() && !call.rawArguments.isEmpty())
            entry.insert(QStringLiteral("rawArguments"), call.rawArguments);
        if (call.worstCaseMs > 0) { // the policy it ran under (the timeline's markers)
            QJsonObject policy{{QStringLiteral("attemptTimeoutMs"), call.attemptTimeoutMs},
                               {QStringLiteral("worstCaseMs"), call.worstCaseMs},
                               {QStringLiteral("maxAttempts"), call.maxAttempts}};
            if (call.turnDeadlineLeftMs >= 0)
                policy.insert(QStringLiteral("turnDeadlineLeftMs"), call.turnDeadlineLeftMs);
            entry.insert(QStringLiteral("policy"), policy);
        }
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
    if (turnsLeftOut > 0)
        json.insert(QStringLiteral("turnsLeftOut"), turnsLeftOut);
    if (!conditions.isEmpty())
        json.insert(QStringLiteral("conditions"), conditions);
    if (!teamPolicy.isUndefined())
        json.insert(QStringLiteral("teamPolicy"), teamPolicy);
    if (!serversNotReady.isEmpty())
        json.insert(QStringLiteral("serversNotReady"),
                    QJsonArray::fromStringList(serversNotReady));
    if (!scenario.isEmpty())
        json.insert(QStringLiteral("scenario"), scenario);
    return json;
}

bool TurnResult::isTeamPolicyRecord(const QJsonValue &value)
{
    if (value.isString())
        return value.toString() == QLatin1String("none");
    if (!value.isObject())
        return false;
    const QJsonObject record = value.toObject();
    const QJsonValue version = record.value(QLatin1String("version"));
    const QJsonValue origin = record.value(QLatin1String("origin"));
    return record.size() == 2 && version.isString() && !version.toString().isEmpty()
        && version.toString().size() <= 64 && origin.isString() && !origin.toString().isEmpty()
        && origin.toString().size() <= 4096;
}

std::optional<TurnResult> TurnResult::fromJson(const QJsonObject &json, QString *error)
{
    QString problem;
    StrictFields f(json, QString(), &problem);
    TurnResult turn;
    turn.requestId = f.string("requestId");
    turn.conversationId = f.string("conversationId");
    turn.question = f.string("question");
    turn.answer = f.string("answer");
    const QString status = f.string("status");
    turn.answerCutOff = f.boolean("answerCutOff");
    turn.model = f.string("model");
    turn.toolRounds = int(f.integer("toolRounds"));
    turn.totalMs = f.integer("totalMs");
    const QJsonArray calls = f.array("toolCalls");
    const QJsonObject layers = f.object("attemptsByLayer");
    const QJsonObject counters = f.object("counters");
    if (f.has("incidentId"))
        turn.incidentId = f.string("incidentId");
    turn.modelDeclined = f.has("modelDeclined") && f.boolean("modelDeclined");
    turn.turnsLeftOut = int(f.integer("turnsLeftOut", 0, true));
    if (f.has("conditions"))
        turn.conditions = f.object("conditions");
    if (f.has("teamPolicy")) {
        turn.teamPolicy = json.value(QLatin1String("teamPolicy"));
        if (!isTeamPolicyRecord(turn.teamPolicy))
            f.fail(QStringLiteral("is neither \"none\" nor {\"version\", \"origin\"}"),
                   "teamPolicy");
    }
    if (f.has("scenario"))
        turn.scenario = f.string("scenario");
    if (turn.turnsLeftOut < 0)
        f.fail(QStringLiteral("is negative"), "turnsLeftOut");
    if (f.has("serversNotReady")) {
        const QJsonArray servers = f.array("serversNotReady");
        for (const QJsonValue &server : servers) {
            if (!server.isString() || server.toString().isEmpty()) {
                f.fail(QStringLiteral("is not a list of server names"), "serversNotReady");
                break;
            }
            turn.serversNotReady.append(server.toString());
        }
    }
    if (problem.isEmpty()) {
        if (const std::optional<TurnStatus> known = turnStatusFromName(status))
            turn.status = *known;
        else
            f.fail(QStringLiteral("is not a turn status"), "status");
    }
    for (qsizetype i = 0; i < calls.size() && problem.isEmpty(); ++i) {
        if (!calls.at(i).isObject()) {
            problem = QStringLiteral("toolCalls[%1] is not an object").arg(i);
            break;
        }
        if (const std::optional<ToolCallRecord> call = callFrom(calls.at(i).toObject(), int(i),
                                                                &problem))
            turn.toolCalls.append(*call);
    }
    if (problem.isEmpty()) {
        StrictFields byLayer(layers, QStringLiteral("attemptsByLayer."), &problem);
        turn.modelAttempts = int(byLayer.integer("model"));
        StrictFields counted(counters, QStringLiteral("counters."), &problem);
        using Metrics::Counter;
        const auto value = [&counted](Counter counter) {
            const QByteArray name = Metrics::counterName(counter).toLatin1();
            return int(counted.integer(name.constData()));
        };
        turn.modelRetryCount = value(Counter::ModelRetry);
        turn.restarts = value(Counter::AgentRestart);
        turn.idempotencyHits = value(Counter::IdempotencyHit);
        turn.idempotencyConflicts = value(Counter::IdempotencyConflict);
        turn.unknownExecutionStatus = value(Counter::UnknownExecutionStatus);
        turn.breakerOpens = value(Counter::CircuitBreakerOpen);
        turn.fallbackHops = value(Counter::FallbackModel);
    }
    if (!problem.isEmpty()) {
        if (error)
            *error = problem;
        return std::nullopt;
    }
    return turn;
}

} // namespace AgentConsole
