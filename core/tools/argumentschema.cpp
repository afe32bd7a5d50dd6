#include "argumentschema.h"

#include "internal/boundedschema.h"
#include "internal/subschemas.h"

#include <QJsonArray>
#include <QSet>

#include <algorithm>
#include <exception>

#include <valijson/adapters/qtjson_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

namespace AgentConsole {

struct ArgumentSchema::Parsed
{
    valijson::Schema schema;
};

namespace {

// Reads `schema` into `parsed`; why not, when valijson refuses it.
QString parse(const QJsonObject &schema, valijson::Schema *parsed)
{
    valijson::SchemaParser parser;
    const QJsonValue value(schema);
    valijson::adapters::QtJsonAdapter adapter(value);
    try {
        parser.populateSchema(adapter, *parsed);
    } catch (const std::exception &error) {
        // A schema from outside may be one valijson cannot read (a wrong type for a
        // keyword): it is reported, and validates nothing.
        return QString::fromUtf8(error.what()).left(200);
    }
    return {};
}

QStringList failedFields(valijson::ValidationResults &results)
{
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

} // namespace

ArgumentSchema::ArgumentSchema(const QJsonObject &schema, const SchemaLimits &limits)
    : m_json(schema)
    , m_bounded(std::make_unique<Internal::BoundedSchema>(Internal::boundSchema(schema, limits)))
{
    m_problem = m_bounded->problem;
    if (!m_problem.isEmpty())
        return;
    // Read once now, also when each call reads its own rewrite (a schema with patterns): what
    // valijson refuses is refused here, not at the first call.
    auto parsed = std::make_unique<Parsed>();
    m_problem = parse(m_bounded->schema, &parsed->schema);
    if (m_problem.isEmpty() && !m_bounded->rewrittenPerCall)
        m_parsed = std::move(parsed);
}

ArgumentSchema::~ArgumentSchema() = default;

QStringList ArgumentSchema::invalidFields(const QJsonObject &arguments) const
{
    if (!m_problem.isEmpty())
        return {QStringLiteral("(arguments)")};
    const QJsonValue value(arguments);
    if (jsonValueCount(value, maxCheckedValues) > maxCheckedValues)
        return {QStringLiteral("(arguments)")};
    valijson::ValidationResults results;
    valijson::adapters::QtJsonAdapter target(value);
    // A validator of its own per call: with no pattern in the schema it keeps no state.
    valijson::Validator validator;
    QStringList failing;
    try {
        if (m_parsed) {
            if (!validator.validate(m_parsed->schema, target, &results))
                failing = failedFields(results);
        } else {
            valijson::Schema forThisCall;
            if (!parse(Internal::schemaForInstance(*m_bounded, value), &forThisCall).isEmpty())
                return {QStringLiteral("(arguments)")};
            if (!validator.validate(forThisCall, target, &results))
                failing = failedFields(results);
        }
    } catch (const std::exception &) {
        return {QStringLiteral("(arguments)")};
    }
    // The patterns lifted out of the schema are the rest of it: failing either is failing.
    if (m_bounded->patterns) {
        for (const QString &property :
             Internal::propertiesFailingPatterns(*m_bounded, arguments)) {
            if (!failing.contains(property))
                failing.append(property);
        }
    }
    return failing;
}

int jsonValueCount(const QJsonValue &json, int limit)
{
    int count = 0;
    const auto visit = [&count, limit](const auto &self, const QJsonValue &value) -> void {
        if (++count > limit)
            return;
        if (value.isArray()) {
            for (const QJsonValue &item : value.toArray()) {
                self(self, item);
                if (count > limit)
                    return;
            }
        } else if (value.isObject()) {
            const QJsonObject object = value.toObject();
            for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
                self(self, it.value());
                if (count > limit)
                    return;
            }
        }
    };
    visit(visit, json);
    return count;
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
        // not "propertyNames": valijson 1.0 reads its schema from the wrong node (the object
        // schema around it, schema_parser.hpp's makePropertyNamesConstraint), so it checks
        // nothing and a schema using it would accept what it forbids
        QStringLiteral("contains"), QStringLiteral("minProperties"),
        QStringLiteral("maxProperties"), QStringLiteral("$ref"), QStringLiteral("definitions"),
        QStringLiteral("$defs"),
        // annotations: they assert nothing, so skipping them accepts nothing wrongly
        QStringLiteral("$schema"), QStringLiteral("$id"), QStringLiteral("$comment"),
        QStringLiteral("title"), QStringLiteral("description"), QStringLiteral("default"),
        QStringLiteral("examples"), QStringLiteral("readOnly"), QStringLiteral("writeOnly"),
        QStringLiteral("deprecated"), QStringLiteral("format"), QStringLiteral("contentMediaType"),
        QStringLiteral("contentEncoding")};
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
        } else if (key == QLatin1String("$ref")
                   && !it.value().toString().startsWith(QLatin1Char('#'))) {
            // Only references inside the document itself: valijson would need to fetch others.
            if (!found->contains(QStringLiteral("$ref (not local)")))
                found->append(QStringLiteral("$ref (not local)"));
        }
    }
    Internal::forEachSubschema(schema, [depth, found](const QString &, const QJsonValue &child) {
        collectUnsupported(child, depth + 1, found);
    });
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
