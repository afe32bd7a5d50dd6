#include "audittrail.h"

namespace AgentConsole {

namespace {

template <typename Enum> struct Name
{
    Enum value;
    const char *name;
};

constexpr Name<AuditEntry::Event> EventNames[] = {
    {AuditEntry::Event::Confirmed, "CONFIRMED"},
    {AuditEntry::Event::Started, "STARTED"},
    {AuditEntry::Event::Outcome, "OUTCOME"},
    {AuditEntry::Event::Settlement, "SETTLEMENT"},
};

constexpr Name<AuditEntry::Outcome> OutcomeNames[] = {
    {AuditEntry::Outcome::Succeeded, "SUCCEEDED"},
    {AuditEntry::Outcome::Failed, "FAILED"},
    {AuditEntry::Outcome::Unknown, "UNKNOWN"},
};

constexpr Name<AuditEntry::Via> ViaNames[] = {
    {AuditEntry::Via::Backend, "backend"}, {AuditEntry::Via::Ledger, "ledger"},
    {AuditEntry::Via::Stopped, "stopped"}, {AuditEntry::Via::Dismissed, "dismissed"},
    {AuditEntry::Via::Resume, "resume"},   {AuditEntry::Via::Replay, "replay"},
};

template <typename Enum, std::size_t N> QString nameOf(const Name<Enum> (&names)[N], Enum value)
{
    for (const Name<Enum> &entry : names) {
        if (entry.value == value)
            return QString::fromLatin1(entry.name);
    }
    return {};
}

template <typename Enum, std::size_t N>
std::optional<Enum> valueOf(const Name<Enum> (&names)[N], const QString &name)
{
    for (const Name<Enum> &entry : names) {
        if (name == QLatin1String(entry.name))
            return entry.value;
    }
    return std::nullopt;
}

// The text fields of a row, by their JSON names.
struct TextField
{
    const char *key;
    QString AuditEntry::*member;
    bool always; // written even when empty
};

const TextField TextFields[] = {
    {"staffId", &AuditEntry::staffId, true},
    {"tenantId", &AuditEntry::tenantId, true},
    {"conversationId", &AuditEntry::conversationId, true},
    {"requestId", &AuditEntry::requestId, true},
    {"operationId", &AuditEntry::operationId, true},
    {"tool", &AuditEntry::toolName, true},
    {"idempotencyKey", &AuditEntry::idempotencyKey, true},
    {"resultCode", &AuditEntry::resultCode, false},
    {"objectId", &AuditEntry::objectId, false},
    {"consoleId", &AuditEntry::consoleId, false},
};

} // namespace

QString AuditEntry::eventName(Event event)
{
    return nameOf(EventNames, event);
}

std::optional<AuditEntry::Event> AuditEntry::eventFromName(const QString &name)
{
    return valueOf(EventNames, name);
}

QString AuditEntry::outcomeName(Outcome outcome)
{
    return nameOf(OutcomeNames, outcome);
}

std::optional<AuditEntry::Outcome> AuditEntry::outcomeFromName(const QString &name)
{
    if (name.isEmpty())
        return Outcome::None;
    return valueOf(OutcomeNames, name);
}

QString AuditEntry::viaName(Via via)
{
    return nameOf(ViaNames, via);
}

std::optional<AuditEntry::Via> AuditEntry::viaFromName(const QString &name)
{
    if (name.isEmpty())
        return Via::None;
    return valueOf(ViaNames, name);
}

QJsonObject AuditEntry::toJson() const
{
    QJsonObject json{{QStringLiteral("id"), id},
                     {QStringLiteral("at"), at.toUTC().toString(Qt::ISODateWithMs)},
                     {QStringLiteral("event"), eventName(event)},
                     {QStringLiteral("arguments"), arguments}};
    for (const TextField &field : TextFields) {
        const QString &value = this->*field.member;
        if (field.always || !value.isEmpty())
            json.insert(QLatin1String(field.key), value);
    }
    if (outcome != Outcome::None)
        json.insert(QStringLiteral("outcome"), outcomeName(outcome));
    if (via != Via::None)
        json.insert(QStringLiteral("via"), viaName(via));
    return json;
}

std::optional<AuditEntry> AuditEntry::fromJson(const QJsonObject &json, QString *problem)
{
    const auto fail = [problem](const QString &why) -> std::optional<AuditEntry> {
        if (problem)
            *problem = why;
        return std::nullopt;
    };
    static const QStringList known = [] {
        QStringList keys{QStringLiteral("id"),      QStringLiteral("at"),
                         QStringLiteral("event"),   QStringLiteral("arguments"),
                         QStringLiteral("outcome"), QStringLiteral("via")};
        for (const TextField &field : TextFields)
            keys.append(QLatin1String(field.key));
        return keys;
    }();
    for (auto it = json.constBegin(); it != json.constEnd(); ++it) {
        if (!known.contains(it.key()))
            return fail(QStringLiteral("unknown field \"%1\"").arg(it.key()));
    }
    AuditEntry entry;
    const QJsonValue id = json.value(QLatin1String("id"));
    if (!id.isDouble())
        return fail(QStringLiteral("\"id\" is not a number"));
    entry.id = id.toInteger();
    entry.at = QDateTime::fromString(json.value(QLatin1String("at")).toString(),
                                     Qt::ISODateWithMs);
    if (!entry.at.isValid())
        return fail(QStringLiteral("\"at\" is not an ISO 8601 time"));
    const std::optional<Event> event = eventFromName(
        json.value(QLatin1String("event")).toString());
    if (!event)
        return fail(QStringLiteral("\"event\" is not an audit event"));
    entry.event = *event;
    const QJsonValue arguments = json.value(QLatin1String("arguments"));
    if (!arguments.isObject())
        return fail(QStringLiteral("\"arguments\" is not an object"));
    entry.arguments = arguments.toObject();
    for (const TextField &field : TextFields) {
        const QJsonValue value = json.value(QLatin1String(field.key));
        if (value.isUndefined() && !field.always)
            continue;
        if (!value.isString())
            return fail(QStringLiteral("\"%1\" is not a string").arg(QLatin1String(field.key)));
        entry.*field.member = value.toString();
    }
    const QJsonValue outcome = json.value(QLatin1String("outcome"));
    const std::optional<Outcome> readOutcome = outcomeFromName(outcome.toString());
    if ((!outcome.isUndefined() && !outcome.isString()) || !readOutcome)
        return fail(QStringLiteral("\"outcome\" is not an audit outcome"));
    entry.outcome = *readOutcome;
    const QJsonValue via = json.value(QLatin1String("via"));
    const std::optional<Via> readVia = viaFromName(via.toString());
    if ((!via.isUndefined() && !via.isString()) || !readVia)
        return fail(QStringLiteral("\"via\" is not what an audit row names"));
    entry.via = *readVia;
    return entry;
}

} // namespace AgentConsole
