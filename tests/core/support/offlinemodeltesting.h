#pragma once

// What the offline model's suites share: FinishReason printed by name in a failed comparison,
// and the four support tools' descriptors as a request offers them.
#include "finishreasonprinting.h"

#include "core/llm/chatmodel.h"
#include "core/tools/tooldescriptor.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QtGlobal>

namespace AgentConsole::Testing {

inline QList<ToolDescriptor> supportTools()
{
    const auto tool = [](const char *name, const char *argument) {
        const QJsonObject schema{
            {QStringLiteral("type"), QStringLiteral("object")},
            {QStringLiteral("properties"),
             QJsonObject{{QLatin1String(argument),
                          QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}}}}},
            {QStringLiteral("required"), QJsonArray{QLatin1String(argument)}}};
        ToolDescriptor descriptor;
        descriptor.name = QLatin1String(name);
        descriptor.description = QStringLiteral("demo");
        descriptor.parameters = schema;
        return descriptor;
    };
    return {tool("queryOrderStatus", "orderId"), tool("queryLogistics", "orderId"),
            tool("queryInventory", "sku"), tool("createTicket", "orderId")};
}

} // namespace AgentConsole::Testing
