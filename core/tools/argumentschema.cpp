#include "argumentschema.h"
#include <QJsonArray>
#include <QSet>

#include <algorithm>
#include <exception>
#include <mutex>

#include <valijson/adapters/qtjson_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

namespace AgentConsole {

struct ArgumentSchema::Parsed
{
    valijson::Schema schema;
    // Kept for its cache of compiled patterns: a validator made per call compiled each
    // "pattern" (std::regex) again for every tool call, most of a precheck's time. Checks may
    // come from more than one thread, and a check fills the cache: one at a time.
    std::mutex validating;
    valijson::Validator validator;
};

ArgumentSchema::ArgumentSchema(const QJsonObject &schema)
    : m_json(schema)
    , m_parsed(std::make_unique<Parsed>())
{
    valijson::SchemaParser parser;
    const QJsonValue value(schema);
    valijson::adapters::QtJsonAdapter adapter(value);
    try {
        parser.populateSchema(adapter, m_parsed->schema);
    } catch (const std::exception &error) {
        // A schema from outside may be one valijson cannot read (a remote $ref, a wrong
        // type for a keyword): it is reported, and validates nothing.
        m_problem = QString::fromUtf8(error.what()).left(200);
        m_parsed.reset();
    }
}

ArgumentSchema::~ArgumentSchema() = default;

QStringList ArgumentSchema::invalidFields(const QJsonObject &arguments) const
{
    if (!m_parsed)
        return {QStringLiteral("(arguments)")};
    valijson::ValidationResults results;
    const QJsonValue value(arguments);
    valijson::adapters::QtJsonAdapter target(value);
    try {
        const std::lock_guard lock(m_parsed->validating);
        if (m_parsed->validator.validate(m_parsed->schema, target, &results))
            return {};
    } catch (const std::exception &) {
        return {QStringLiteral("(arguments)")}; // e.g. a pattern the regex engine refused
    }

    QStringList fields;
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
        // context is e.g. {"<root>", "[orderId]"}; the first step below the root names the field
        QString field = QStringLiteral("(arguments)");
        if (error.context.size() > 1) {
            field = QString::fromStdString(error.context[1]);
            if (field.startsWith(QLatin1Char('[')) && field.endsWith(QLatin1Char(']')))
                field = field.mid(1, field.size() - 2);
            if (field.startsWith(QLatin1Char('"')) && field.endsWith(QLatin1Char('"')))
                field = field.mid(1, field.size() - 2);
        }
        if (!fields.contains(field))
            fields.append(field);
    }
    return fields;
}

namespace {

// What valijson (draft 7) enforces, and what only annotates: nothing else may appear.
const QSet<QString> &knownKeywords()
{
    static const QSet<QString> keywords{
        // assertions valijson enforces
        QStringLiteral("type"), QStringLiteral("properties"), QStringLiteral("required"),
        QStringLiteral("additionalProperties"), QStringLiteral("patternProperties"),
        QStringLiteral("items"), QStringLiteral("additionalItems"), QStringLiteral("minItems"),
        QStringLiteral("maxItems"), QStringLiteral("uniqueItems"), QStringLiteral("enum"),
        QStringLiteral("const"), QStringLiteral("minimum"), QStringLiteral("maximum"),
        QStringLiteral("exclusiveMinimum"), QStringLiteral("exclusiveMaximum"),
        QStringLiteral("multipleOf"), QStringLiteral("minLength"), QStringLiteral("maxLength"),
        QStringLiteral("pattern"), QStringLiteral("allOf"), QStringLiteral("anyOf"),
        QStringLiteral("oneOf"), QStringLiteral("not"), QStringLiteral("if"),
        QStringLiteral("then"), QStringLiteral("else"), QStringLiteral("dependencies"),
        QStringLiteral("propertyNames"), QStringLiteral("contains"),
        QStringLiteral("minProperties"), QStringLiteral("maxProperties"), QStringLiteral("$ref"),
        QStringLiteral("definitions"), QStringLiteral("$defs"),
        // annotations: they assert nothing, so skipping them accepts nothing wrongly
        QStringLiteral("$schema"), QStringLiteral("$id"), QStringLiteral("$comment"),
        QStringLiteral("title"), QStringLiteral("description"), QStringLiteral("default"),
        QStringLiteral("examples"), QStringLiteral("readOnly"), QStringLiteral("writeOnly"),
        QStringLiteral("deprecated"), QStringLiteral("format"),
        QStringLiteral("contentMediaType"), QStringLiteral("contentEncoding")};
    return keywords;
}

void collectUnsupported(const QJsonValue &value, int depth, QStringList *found)
{
    if (!value.isObject() || depth > 64)
        return;
    const QJsonObject schema = value.toObject();
    for (auto it = schema.constBegin(); it != schema.constEnd(); ++it) {
        const QString &key = it.key();
        if (!knownKeywords().contains(key)) {
            if (!found->contains(key))
                found->append(key);
            continue;
        }
        if (key == QLatin1String("$ref")) {
            // Only references inside the document itself: valijson would need to fetch others.
            if (!it.value().toString().startsWith(QLatin1Char('#')) && !found->contains(key))
                found->append(QStringLiteral("$ref (not local)"));
        } else if (key == QLatin1String("properties") || key == QLatin1String("patternProperties")
                   || key == QLatin1String("definitions") || key == QLatin1String("$defs")
                   || key == QLatin1String("dependencies")) {
            const QJsonObject children = it.value().toObject();
            for (const QJsonValue &child : children)
                collectUnsupported(child, depth + 1, found);
        } else if (key == QLatin1String("allOf") || key == QLatin1String("anyOf")
                   || key == QLatin1String("oneOf") || key == QLatin1String("items")) {
            if (it.value().isArray()) {
                for (const QJsonValue &child : it.value().toArray())
                    collectUnsupported(child, depth + 1, found);
            } else {
                collectUnsupported(it.value(), depth + 1, found);
            }
        } else if (key == QLatin1String("not") || key == QLatin1String("if")
                   || key == QLatin1String("then") || key == QLatin1String("else")
                   || key == QLatin1String("additionalProperties")
                   || key == QLatin1String("additionalItems") || key == QLatin1String("contains")
                   || key == QLatin1String("propertyNames")) {
            collectUnsupported(it.value(), depth + 1, found);
        }
    }
}

} // namespace

QStringList unsupportedSchemaKeywords(const QJsonObject &schema)
{
    QStringList found;
    collectUnsupported(schema, 0, &found);
    return found;
}

int jsonNestingDepth(QByteArrayView json)
{
    int depth = 0;
    int deepest = 0;
    bool inString = false;
    bool escaped = false;
    for (const char c : json) {
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                inString = false;
            continue;
        }
        switch (c) {
        case '"':
            inString = true;
            break;
        case '[':
        case '{':
            deepest = std::max(deepest, ++depth);
            break;
        case ']':
        case '}':
            depth = std::max(0, depth - 1);
            break;
        default:
            break;
        }
    }
    return deepest;
}

} // namespace AgentConsole
