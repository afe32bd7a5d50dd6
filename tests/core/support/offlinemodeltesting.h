#pragma once

// What the offline model's suites share: FinishReason printed by name in a failed comparison,
// and the four support tools' descriptors as a request offers them.
#include "core/llm/chatmodel.h"
#include "core/tools/tooldescriptor.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QtGlobal>

namespace AgentConsole {
// QTest finds this through ADL, so that a failing comparison names the reason.
inline char *toString(FinishReason reason)
{
    switch (reason) {
    case FinishReason::Stop:
        return qstrdup("Stop");
    case FinishReason::ToolCalls:
        return qstrdup("ToolCalls");
    case FinishReason::Length:
        return qstrdup("Length");
    case FinishReason::ContentFilter:
        return qstrdup("ContentFilter");
    case FinishReason::Error:
        return qstrdup("Error");
    }
    return qstrdup("?");
}
} // namespace AgentConsole

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
