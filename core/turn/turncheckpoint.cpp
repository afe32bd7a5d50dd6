#include "turncheckpoint.h"

#include "../ledger/turnjournal.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QMetaEnum>

#include <algorithm>

namespace AgentConsole {
namespace {

constexpr int kFormat = 1;
// What the history keeps of a turn beside its state (docs/HISTORY.md): a title line, and the
// text a search matches (the question, the answer and the tool arguments), both bounded.
constexpr qsizetype kMaxTitle = 120;
constexpr qsizetype kMaxSearchText = 4096;

QString titleOf(const QString &question)
{
    const QString line = question.simplified();
    return line.size() <= kMaxTitle ? line : line.left(kMaxTitle - 1) + QChar(0x2026);
}

// "unfinished" while the turn is not final (interrupted, when read after a restart).
QString outcomeLabel(TurnStage stage, const TurnResult &result)
{
    if (stage != TurnStage::Completed && stage != TurnStage::Failed)
        return QStringLiteral("unfinished");
    if (result.status == TurnStatus::Cancelled)
        return QStringLiteral("cancelled");
    return turnOutcomeName(result.outcome());
}

QString searchTextOf(const TurnResult &result)
{
    QStringList parts{result.question, result.answer};
    for (const ToolCallRecord &call : result.toolCalls) {
        for (auto it = call.arguments.constBegin(); it != call.arguments.constEnd(); ++it) {
            if (it.value().isString())
                parts.append(it.value().toString());
        }
    }
    return parts.join(QLatin1Char('\n')).left(kMaxSearchText);
}

QJsonArray toolCallsJson(const QList<ModelToolCall> &calls)
{
    QJsonArray array;
    for (const ModelToolCall &call : calls)
        array.append(QJsonObject{{QStringLiteral("id"), call.id},
                                 {QStringLiteral("name"), call.name},
                                 {QStringLiteral("arguments"), call.arguments}});
    return array;
}

std::optional<ChatMessage> messageFrom(const QJsonObject &json)
{
    const int role = json.value(QLatin1String("role")).toInt(-1);
    if (role < int(ChatMessage::Role::System) || role > int(ChatMessage::Role::Tool))
        return std::nullopt;
    ChatMessage message;
    message.role = ChatMessage::Role(role);
    message.content = json.value(QLatin1String("content")).toString();
    message.toolCallId = json.value(QLatin1String("toolCallId")).toString();
    message.toolName = json.value(QLatin1String("toolName")).toString();
    // Absent in checkpoints written before reasoning was kept: empty, as it was then.
    message.reasoningContent = json.value(QLatin1String("reasoningContent")).toString();
    message.reasoningOrigin = json.value(QLatin1String("reasoningOrigin")).toString();
    for (const QJsonValue &value : json.value(QLatin1String("toolCalls")).toArray()) {
        const QJsonObject call = value.toObject();
        message.toolCalls.append({call.value(QLatin1String("id")).toString(),
                                  call.value(QLatin1String("name")).toString(),
                                  call.value(QLatin1String("arguments")).toString()});
    }
    return message;
}

QJsonObject recordJson(const ToolCallRecord &call)
{
    QJsonArray attempts;
    for (const AttemptRecord &attempt : call.attempts)
        attempts.append(QJsonArray{attempt.attempt, attempt.startedMs, attempt.durationMs,
                                   int(attempt.outcome), attempt.nextDelayMs, attempt.made,
                                   attempt.retryAfterMs});
    QJsonObject json{{QStringLiteral("index"), call.index},
                     {QStringLiteral("round"), call.round},
                     {QStringLiteral("toolCallId"), call.toolCallId},
                     {QStringLiteral("operationId"), call.operationId},
                     {QStringLiteral("name"), call.name},
                     {QStringLiteral("arguments"), call.arguments},
                     {QStringLiteral("rawArguments"), call.rawArguments},
                     {QStringLiteral("finished"), call.state == ToolCallRecord::State::Finished},
                     {QStringLiteral("confirmed"), call.confirmed},
                     {QStringLiteral("result"), call.result.toJson()},
                     {QStringLiteral("attempts"), attempts},
                     {QStringLiteral("totalMs"), call.totalMs},
                     {QStringLiteral("incidentId"), call.incidentId},
                     {QStringLiteral("circuitCooldownLeftMs"), call.circuitCooldownLeftMs},
                     {QStringLiteral("policy"),
                      QJsonArray{call.attemptTimeoutMs, call.worstCaseMs, call.turnDeadlineLeftMs,
                                 call.maxAttempts}}};
    if (!call.isolation.isNull())
        json.insert(QStringLiteral("isolation"), isolationToJson(call.isolation));
    return json;
}

ToolCallRecord recordFrom(const QJsonObject &json)
{
    ToolCallRecord call;
    call.index = json.value(QLatin1String("index")).toInt();
    call.round = json.value(QLatin1String("round")).toInt(1);
    call.toolCallId = json.value(QLatin1String("toolCallId")).toString();
    call.operationId = json.value(QLatin1String("operationId")).toString();
    call.name = json.value(QLatin1String("name")).toString();
    call.arguments = json.value(QLatin1String("arguments")).toObject();
    call.rawArguments = json.value(QLatin1String("rawArguments")).toString();
    call.confirmed = json.value(QLatin1String("confirmed")).toBool();
    // Whatever was running when the process stopped is pending again; only finished calls
    // keep their result.
    const bool finished = json.value(QLatin1String("finished")).toBool();
    call.state = finished ? ToolCallRecord::State::Finished : ToolCallRecord::State::Pending;
    if (finished) {
        call.result = ToolResult::fromJson(json.value(QLatin1String("result")).toObject());
        for (const QJsonValue &value : json.value(QLatin1String("attempts")).toArray()) {
            const QJsonArray a = value.toArray();
            const int outcome = a.at(3).toInt();
            if (outcome < 0 || outcome > int(AttemptOutcome::StatusUnknown))
                continue;
            call.attempts.append(
                {a.at(0).toInt(), a.at(1).toInteger(), a.at(2).toInteger(),
                 AttemptOutcome(outcome), a.at(4).toInteger(-1),
                 // older checkpoints have no sixth field: an entry was made
                 // unless a breaker refused it
                 a.at(5).toBool(AttemptOutcome(outcome) != AttemptOutcome::CircuitOpen)});
            // Older checkpoints have no seventh field: the backoff was the policy's own.
            call.attempts.last().retryAfterMs = a.at(6).toInteger(-1);
        }
        call.totalMs = json.value(QLatin1String("totalMs")).toInteger();
        call.incidentId = json.value(QLatin1String("incidentId")).toString();
        call.circuitCooldownLeftMs = json.value(QLatin1String("circuitCooldownLeftMs"))
                                         .toInteger(-1);
        call.isolation = isolationFromJson(json.value(QLatin1String("isolation")).toObject());
        // The policy it ran under, for the timeline's markers of a reopened conversation;
        // older checkpoints have none (no markers, as before).
        const QJsonArray policy = json.value(QLatin1String("policy")).toArray();
        call.attemptTimeoutMs = std::max<qint64>(0, policy.at(0).toInteger());
        call.worstCaseMs = std::max<qint64>(0, policy.at(1).toInteger());
        call.turnDeadlineLeftMs = std::max<qint64>(-1, policy.at(2).toInteger(-1));
        call.maxAttempts = std::max(0, policy.at(3).toInt());
    }
    return call;
}

} // namespace

QString conversationOwner(const QString &tenantId, const QString &userId)
{
    return tenantId + QLatin1Char('/') + userId;
}

QString turnStageName(TurnStage stage)
{
    switch (stage) {
    case TurnStage::Received:
        return QStringLiteral("RECEIVED");
    case TurnStage::Planned:
        return QStringLiteral("PLANNED");
    case TurnStage::ToolsExecuted:
        return QStringLiteral("TOOLS_EXECUTED");
    case TurnStage::AnswerGenerating:
        return QStringLiteral("ANSWER_GENERATING");
    case TurnStage::Completed:
        return QStringLiteral("COMPLETED");
    case TurnStage::Failed:
        return QStringLiteral("FAILED");
    }
    return {};
}

std::optional<TurnStage> turnStageFromName(const QString &name)
{
    const QMetaEnum stages = QMetaEnum::fromType<TurnStage>();
    for (int i = 0; i < stages.keyCount(); ++i) {
        const auto stage = TurnStage(stages.value(i));
        if (turnStageName(stage) == name)
            return stage;
    }
    return std::nullopt;
}

bool TurnCheckpoint::isResumable() const
{
    if (dismissed)
        return false;
    if (stage == TurnStage::Failed)
        return answerFailed;
    return stage != TurnStage::Completed;
}

QJsonObject TurnCheckpoint::toolCallJson(const ToolCallRecord &call)
{
    return recordJson(call);
}

QJsonObject TurnCheckpoint::messageJson(const ChatMessage &message)
{
    QJsonObject json{{QStringLiteral("role"), int(message.role)},
                     {QStringLiteral("content"), message.content}};
    if (!message.toolCalls.isEmpty())
        json.insert(QStringLiteral("toolCalls"), toolCallsJson(message.toolCalls));
    if (!message.toolCallId.isEmpty())
        json.insert(QStringLiteral("toolCallId"), message.toolCallId);
    if (!message.toolName.isEmpty())
        json.insert(QStringLiteral("toolName"), message.toolName);
    // A thinking model's reasoning: its provider wants it back when the turn is resumed.
    if (!message.reasoningContent.isEmpty()) {
        json.insert(QStringLiteral("reasoningContent"), message.reasoningContent);
        json.insert(QStringLiteral("reasoningOrigin"), message.reasoningOrigin);
    }
    return json;
}

JournalEntry TurnCheckpoint::toEntry() const
{
    QJsonArray messages;
    QList<QByteArray> hashes;
    if (storedConversation) {
        messages = *storedConversation;
        if (storedConversationHashes && storedConversationHashes->size() == messages.size())
            hashes = *storedConversationHashes;
    } else {
        for (const ChatMessage &message : conversation)
            messages.append(messageJson(message));
    }
    QJsonArray calls;
    for (const ToolCallRecord &call : result.toolCalls)
        calls.append(recordJson(call));
    const TurnResult &r = result;
    QJsonObject state{
        {QStringLiteral("format"), kFormat},
        {QStringLiteral("userId"), userId},
        {QStringLiteral("tenantId"), tenantId},
        {QStringLiteral("language"),
         language == Language::Chinese ? QStringLiteral("zh") : QStringLiteral("en")},
        {QStringLiteral("conversation"), messages},
        {QStringLiteral("turnStart"), turnStart},
        {QStringLiteral("question"), r.question},
        {QStringLiteral("answer"), r.answer},
        {QStringLiteral("status"), turnStatusName(r.status)},
        {QStringLiteral("model"), r.model},
        {QStringLiteral("toolCalls"), calls},
        {QStringLiteral("toolRounds"), r.toolRounds},
        {QStringLiteral("totalMs"), r.totalMs},
        {QStringLiteral("incidentId"), r.incidentId},
        {QStringLiteral("modelCalls"), r.modelCalls},
        {QStringLiteral("modelAttempts"), r.modelAttempts},
        {QStringLiteral("modelRetries"), r.modelRetryCount},
        {QStringLiteral("answerCutOff"), r.answerCutOff},
        {QStringLiteral("reasoning"), r.reasoning},
        {QStringLiteral("fallbackHops"), r.fallbackHops},
        {QStringLiteral("breakerOpens"), r.breakerOpens},
        {QStringLiteral("idempotencyHits"), r.idempotencyHits},
        {QStringLiteral("idempotencyConflicts"), r.idempotencyConflicts},
        {QStringLiteral("unknownExecutionStatus"), r.unknownExecutionStatus},
        {QStringLiteral("restarts"), r.restarts},
        {QStringLiteral("modelDeclined"), r.modelDeclined},
        {QStringLiteral("turnsLeftOut"), r.turnsLeftOut},
        {QStringLiteral("answerFailed"), answerFailed},
    };
    if (!r.serversNotReady.isEmpty())
        state.insert(QStringLiteral("serversNotReady"),
                     QJsonArray::fromStringList(r.serversNotReady));
    if (!r.conditions.isEmpty())
        state.insert(QStringLiteral("conditions"), r.conditions);
    if (!r.teamPolicy.isUndefined()) // docs/POLICY.md: the policy the turn ran under
        state.insert(QStringLiteral("teamPolicy"), r.teamPolicy);
    if (!r.scenario.isEmpty())
        state.insert(QStringLiteral("scenario"), r.scenario);
    JournalEntry entry;
    entry.requestId = r.requestId;
    entry.conversationId = conversationId;
    entry.stage = turnStageName(stage);
    entry.resumable = isResumable();
    entry.state = state;
    entry.conversationHashes = hashes;
    entry.counters = r.counters();
    entry.owner = conversationOwner(tenantId, userId);
    entry.title = titleOf(r.question);
    entry.outcome = outcomeLabel(stage, r);
    entry.searchText = searchTextOf(r);
    entry.scenario = r.scenario;
    return entry;
}

std::optional<TurnCheckpoint> TurnCheckpoint::fromEntry(const JournalEntry &entry, QString *error)
{
    const auto fail = [&](const QString &why) -> std::optional<TurnCheckpoint> {
        if (error)
            *error = QStringLiteral("turn %1 cannot be resumed: %2").arg(entry.requestId, why);
        return std::nullopt;
    };
    if (!entry.damage.isEmpty())
        return fail(QStringLiteral("its checkpoint is damaged (%1)").arg(entry.damage));
    const QJsonObject &s = entry.state;
    if (s.value(QLatin1String("format")).toInt() != kFormat)
        return fail(QStringLiteral("it was saved in an unknown format"));
    const std::optional<TurnStage> stage = turnStageFromName(entry.stage);
    if (!stage)
        return fail(QStringLiteral("unknown stage '%1'").arg(entry.stage));

    TurnCheckpoint checkpoint;
    checkpoint.stage = *stage;
    checkpoint.conversationId = entry.conversationId;
    checkpoint.dismissed = !entry.resumable;
    checkpoint.userId = s.value(QLatin1String("userId")).toString();
    checkpoint.tenantId = s.value(QLatin1String("tenantId")).toString();
    checkpoint.language = s.value(QLatin1String("language")).toString() == QLatin1String("zh")
        ? Language::Chinese
        : Language::English;
    for (const QJsonValue &value : s.value(QLatin1String("conversation")).toArray()) {
        const std::optional<ChatMessage> message = messageFrom(value.toObject());
        if (!message)
            return fail(QStringLiteral("a message of its conversation is damaged"));
        checkpoint.conversation.append(*message);
    }
    checkpoint.turnStart = s.value(QLatin1String("turnStart")).toInteger();
    if (checkpoint.turnStart < 0 || checkpoint.turnStart > checkpoint.conversation.size())
        return fail(QStringLiteral("its conversation is damaged"));
    checkpoint.answerFailed = s.value(QLatin1String("answerFailed")).toBool();

    TurnResult &r = checkpoint.result;
    r.requestId = entry.requestId;
    r.conversationId = entry.conversationId;
    r.question = s.value(QLatin1String("question")).toString();
    r.answer = s.value(QLatin1String("answer")).toString();
    const QString status = s.value(QLatin1String("status")).toString();
    r.status = turnStatusFromName(status).value_or(TurnStatus::Completed);
    r.model = s.value(QLatin1String("model")).toString();
    r.scenario = s.value(QLatin1String("scenario")).toString();
    for (const QJsonValue &value : s.value(QLatin1String("toolCalls")).toArray())
        r.toolCalls.append(recordFrom(value.toObject()));
    // The results appended after the checkpoint are newer than the plan's copy of them.
    for (auto it = entry.appendedResults.constBegin(); it != entry.appendedResults.constEnd();
         ++it) {
        if (it.key() < 0 || it.key() >= r.toolCalls.size())
            return fail(QStringLiteral("a stored tool result belongs to no planned call"));
        const ToolCallRecord appended = recordFrom(it.value());
        ToolCallRecord &planned = r.toolCalls[it.key()];
        if (appended.index != it.key() || appended.operationId != planned.operationId)
            return fail(QStringLiteral("a stored tool result does not match its call"));
        planned = appended;
    }
    // An operationId names its tenant, conversation and request: a call that names others
    // was not planned in this turn (an edited row), and its key must not reach the ledger.
    const QString ownKeys = QStringLiteral("%1:%2:%3:")
                                .arg(checkpoint.tenantId, entry.conversationId, entry.requestId);
    for (qsizetype i = 0; i < r.toolCalls.size(); ++i) {
        if (r.toolCalls[i].index != i || !r.toolCalls[i].operationId.startsWith(ownKeys))
            return fail(QStringLiteral("its plan is damaged"));
    }
    r.toolRounds = s.value(QLatin1String("toolRounds")).toInt();
    r.totalMs = s.value(QLatin1String("totalMs")).toInteger();
    r.incidentId = s.value(QLatin1String("incidentId")).toString();
    r.modelCalls = s.value(QLatin1String("modelCalls")).toInt();
    r.modelAttempts = s.value(QLatin1String("modelAttempts")).toInt();
    // Older checkpoints did not keep the retries apart: counted as they were counted then.
    r.modelRetryCount = s.contains(QLatin1String("modelRetries"))
        ? s.value(QLatin1String("modelRetries")).toInt()
        : std::max(0, r.modelAttempts - r.modelCalls);
    r.answerCutOff = s.value(QLatin1String("answerCutOff")).toBool();
    r.reasoning = s.value(QLatin1String("reasoning")).toString();
    r.fallbackHops = s.value(QLatin1String("fallbackHops")).toInt();
    r.breakerOpens = s.value(QLatin1String("breakerOpens")).toInt();
    r.idempotencyHits = s.value(QLatin1String("idempotencyHits")).toInt();
    r.idempotencyConflicts = s.value(QLatin1String("idempotencyConflicts")).toInt();
    r.unknownExecutionStatus = s.value(QLatin1String("unknownExecutionStatus")).toInt();
    r.restarts = s.value(QLatin1String("restarts")).toInt();
    r.modelDeclined = s.value(QLatin1String("modelDeclined")).toBool();
    r.turnsLeftOut = std::max(0, s.value(QLatin1String("turnsLeftOut")).toInt());
    r.conditions = s.value(QLatin1String("conditions")).toObject();
    // Kept only when it is a record: a damaged one is not carried into the resumed turn.
    if (const QJsonValue policy = s.value(QLatin1String("teamPolicy"));
        TurnResult::isTeamPolicyRecord(policy))
        r.teamPolicy = policy;
    // Names only, as many as an mcp.json can hold; anything else in a damaged entry is left.
    const QJsonArray notReady = s.value(QLatin1String("serversNotReady")).toArray();
    for (const QJsonValue &server : notReady) {
        if (server.isString() && r.serversNotReady.size() < 64)
            r.serversNotReady.append(server.toString().left(64));
    }
    if (r.question.isEmpty() || checkpoint.tenantId.isEmpty())
        return fail(QStringLiteral("its question or session is missing"));
    return checkpoint;
}

} // namespace AgentConsole
