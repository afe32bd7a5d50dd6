#pragma once

#include <QJsonObject>
#include <QString>

namespace AgentConsole {

// What the model is told about a tool: an OpenAI-style function description whose
// `parameters` is the JSON Schema the executor validates arguments against.
struct ToolDescriptor
{
    QString name;
    QString description;
    QJsonObject parameters; // JSON Schema (draft 7 subset that valijson understands)
    bool hasSideEffects = false;

    QJsonObject toFunctionJson() const
    {
        return QJsonObject{{QStringLiteral("type"), QStringLiteral("function")},
                           {QStringLiteral("function"),
                            QJsonObject{{QStringLiteral("name"), name},
                                        {QStringLiteral("description"), description},
                                        {QStringLiteral("parameters"), parameters}}}};
    }
};

} // namespace AgentConsole
