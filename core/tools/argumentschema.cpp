#include "argumentschema.h"
#include <algorithm>

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

ArgumentSchema::ArgumentSchema(const QJsonObject &schema)
    : m_json(schema)
    , m_parsed(std::make_unique<Parsed>())
{
    valijson::SchemaParser parser;
    const QJsonValue value(schema);
    valijson::adapters::QtJsonAdapter adapter(value);
    parser.populateSchema(adapter, m_parsed->schema);
}

ArgumentSchema::~ArgumentSchema() = default;

QStringList ArgumentSchema::invalidFields(const QJsonObject &arguments) const
{
    valijson::Validator validator;
    valijson::ValidationResults results;
    const QJsonValue value(arguments);
    valijson::adapters::QtJsonAdapter target(value);
    if (validator.validate(m_parsed->schema, target, &results))
        return {};

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
