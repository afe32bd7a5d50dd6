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
    // The names of the top-level properties that failed, or "(arguments)" for errors of the
    // object itself (missing required or unexpected properties). Empty when valid.
    QStringList invalidFields(const QJsonObject &arguments) const;

private:
    struct Parsed;
    QJsonObject m_json;
    std::unique_ptr<Parsed> m_parsed;
};

// How deeply the arrays and objects of a JSON text nest (0 for a scalar), read from the text
// without parsing it, so that a hostile document is measured before it is built. Brackets
// inside strings do not count; a malformed text is measured as far as it goes.
int jsonNestingDepth(QByteArrayView json);

} // namespace AgentConsole
