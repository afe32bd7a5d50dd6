#pragma once

#include <QByteArrayView>
#include <QJsonObject>
#include <QStringList>

#include <memory>

namespace AgentConsole {

// A tool's JSON Schema, parsed once and used to validate the model's arguments before any
// attempt. Validation is valijson's (through its Qt JSON adapter), not hand-written.
class ArgumentSchema final
{
public:
    explicit ArgumentSchema(const QJsonObject &schema);
    ~ArgumentSchema();
    ArgumentSchema(const ArgumentSchema &) = delete;
    ArgumentSchema &operator=(const ArgumentSchema &) = delete;

    const QJsonObject &json() const { return m_json; }
    // Why this schema cannot be used to validate anything (valijson refused it, e.g. a $ref
    // it cannot resolve); empty when usable. An unusable schema accepts nothing.
    const QString &problem() const { return m_problem; }
    // The names of the top-level properties that failed, or "(arguments)" for errors of the
    // object itself (missing required or unexpected properties). Empty when valid.
    QStringList invalidFields(const QJsonObject &arguments) const;

private:
    struct Parsed;
    QJsonObject m_json;
    QString m_problem;
    std::unique_ptr<Parsed> m_parsed;
};

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
