#pragma once

#include <QByteArrayView>
#include <QJsonObject>
#include <QStringList>

#include <memory>

namespace AgentConsole {

// Bounds on a schema (DESIGN.md, "Bounds"): a schema from outside that breaks one is refused
// whole (ArgumentSchema::problem()), so that its tool is not offered.
struct SchemaLimits
{
    int maxDepth = 32; // levels of schemas inside schemas, through every $ref
    int maxSubschemas = 4096; // schemas in all, every $ref written out in full
    int maxEnumValues = 1024; // in one enum
    int maxPatterns = 256; // distinct patterns and patternProperties names
    int maxPatternLength = 1024;
};

namespace Internal {
struct BoundedSchema;
}

// A tool's JSON Schema, read once and used to validate the model's arguments before any
// attempt. Validation is valijson's (through its Qt JSON adapter), not hand-written, over a
// schema made safe for it first (internal/boundedschema.h): $refs local and acyclic, depth,
// size and enums bounded, and patterns run by RE2 in linear time, never by std::regex.
// Thread-safe: checks may run on several threads at once.
class ArgumentSchema final
{
public:
    // Arguments with more values than this (every string, number, list and object counted)
    // are not checked but refused: what some keywords cost grows faster than the arguments
    // (uniqueItems compares every pair; a pattern is asked about every string).
    static constexpr int maxCheckedValues = 10000;

    explicit ArgumentSchema(const QJsonObject &schema, const SchemaLimits &limits = {});
    ~ArgumentSchema();
    ArgumentSchema(const ArgumentSchema &) = delete;
    ArgumentSchema &operator=(const ArgumentSchema &) = delete;

    const QJsonObject &json() const { return m_json; }
    // Why this schema cannot be used to validate anything (a bound it breaks, a $ref cycle, a
    // pattern RE2 cannot run, or what valijson refused); empty when usable. An unusable
    // schema accepts nothing.
    const QString &problem() const { return m_problem; }
    // The names of the top-level properties that failed, or "(arguments)" for errors of the
    // object itself (missing required or unexpected properties, more than maxCheckedValues
    // values). Empty when valid.
    QStringList invalidFields(const QJsonObject &arguments) const;

private:
    struct Parsed;
    QJsonObject m_json;
    QString m_problem;
    std::unique_ptr<Internal::BoundedSchema> m_bounded;
    // Read once for all calls, unless the schema keeps patterns that need a rewrite per call.
    std::unique_ptr<Parsed> m_parsed;
};

// How many values `json` holds (itself, and every item and member inside it), counted up to
// `limit` + 1 and no further.
int jsonValueCount(const QJsonValue &json, int limit);

// The keywords of `schema` (and of every schema inside it) that the validator does not
// enforce: newer drafts' assertions (prefixItems, unevaluatedProperties, dependentRequired, a
// remote $ref...) that valijson would skip, silently accepting what they forbid. A schema from
// outside (an MCP server's inputSchema) is refused when this is not empty. Annotations
// (title, description, default, examples, format...) are not listed: they assert nothing.
QStringList unsupportedSchemaKeywords(const QJsonObject &schema);

// How deeply the arrays and objects of a JSON text nest (0 for a scalar), read from the text
// without parsing it, so that a hostile document is measured before it is built. Brackets
// inside strings do not count; a malformed text is measured as far as it goes.
int jsonNestingDepth(QByteArrayView json);

} // namespace AgentConsole
