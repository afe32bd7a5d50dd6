#include "subschemas.h"

#include <QJsonArray>

namespace AgentConsole::Internal {

namespace {

enum class Holds {
    One, // a schema: "not": {...}
    Map, // names to schemas: "properties": {"a": {...}}
    List, // schemas: "anyOf": [{...}, {...}]
    OneOrList // "items": {...} or [{...}, ...]
};

struct Keyword
{
    QLatin1StringView name;
    Holds holds;
};

// Every draft 7 keyword the validator reads a schema from (ArgumentSchema's keywords).
constexpr Keyword kKeywords[] = {
    {QLatin1StringView("not"), Holds::One},
    {QLatin1StringView("if"), Holds::One},
    {QLatin1StringView("then"), Holds::One},
    {QLatin1StringView("else"), Holds::One},
    {QLatin1StringView("additionalProperties"), Holds::One},
    {QLatin1StringView("additionalItems"), Holds::One},
    {QLatin1StringView("contains"), Holds::One},
    {QLatin1StringView("propertyNames"), Holds::One},
    {QLatin1StringView("properties"), Holds::Map},
    {QLatin1StringView("patternProperties"), Holds::Map},
    {QLatin1StringView("definitions"), Holds::Map},
    {QLatin1StringView("$defs"), Holds::Map},
    {QLatin1StringView("dependencies"), Holds::Map},
    {QLatin1StringView("allOf"), Holds::List},
    {QLatin1StringView("anyOf"), Holds::List},
    {QLatin1StringView("oneOf"), Holds::List},
    {QLatin1StringView("items"), Holds::OneOrList},
};

} // namespace

QString pointerToken(const QString &key)
{
    QString token = key;
    token.replace(QLatin1Char('~'), QLatin1String("~0"));
    token.replace(QLatin1Char('/'), QLatin1String("~1"));
    return token;
}

void forEachSubschema(const QJsonObject &schema,
                      const std::function<void(const QString &, const QJsonValue &)> &visit)
{
    for (const Keyword &keyword : kKeywords) {
        const auto found = schema.constFind(keyword.name);
        if (found == schema.constEnd())
            continue;
        const QJsonValue value = found.value();
        const QString step = QLatin1Char('/') + pointerToken(keyword.name);
        const bool asList = keyword.holds == Holds::List
            || (keyword.holds == Holds::OneOrList && value.isArray());
        if (keyword.holds == Holds::Map) {
            const QJsonObject children = value.toObject();
            for (auto it = children.constBegin(); it != children.constEnd(); ++it)
                visit(step + QLatin1Char('/') + pointerToken(it.key()), it.value());
        } else if (asList) {
            const QJsonArray children = value.toArray();
            for (qsizetype i = 0; i < children.size(); ++i)
                visit(step + QLatin1Char('/') + QString::number(i), children.at(i));
        } else {
            visit(step, value);
        }
    }
}

QJsonObject mapSubschemas(const QJsonObject &schema,
                          const std::function<QJsonValue(const QJsonValue &)> &map)
{
    QJsonObject out = schema;
    for (const Keyword &keyword : kKeywords) {
        const auto found = out.find(keyword.name);
        if (found == out.end())
            continue;
        const QJsonValue value = found.value();
        const bool asList = keyword.holds == Holds::List
            || (keyword.holds == Holds::OneOrList && value.isArray());
        if (keyword.holds == Holds::Map) {
            if (!value.isObject())
                continue;
            QJsonObject children = value.toObject();
            for (auto it = children.begin(); it != children.end(); ++it)
                it.value() = map(it.value());
            found.value() = children;
        } else if (asList) {
            if (!value.isArray())
                continue;
            QJsonArray children = value.toArray();
            for (qsizetype i = 0; i < children.size(); ++i)
                children.replace(i, map(children.at(i)));
            found.value() = children;
        } else {
            found.value() = map(value);
        }
    }
    return out;
}

} // namespace AgentConsole::Internal
