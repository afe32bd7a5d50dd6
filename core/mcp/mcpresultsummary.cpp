#include "mcpresultsummary.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace AgentConsole::Mcp {

QJsonObject summariseToolResult(const QJsonObject &result, const SummaryLimits &limits)
{
    QJsonObject summary;
    QJsonArray blocks;
    QString text;
    bool truncated = false;
    const QJsonArray content = result.value(QStringLiteral("content")).toArray();
    int looked = 0;
    for (const QJsonValue &value : content) {
        if (++looked > limits.maxBlocks) {
            truncated = true;
            break;
        }
        const QJsonObject block = value.toObject();
        const QString type = block.value(QStringLiteral("type")).toString();
        if (type == QLatin1String("text")) {
            const QString piece = block.value(QStringLiteral("text")).toString();
            const qsizetype room = limits.maxTextChars - text.size();
            if (room <= 0) {
                truncated = true;
                continue;
            }
            if (!text.isEmpty())
                text.append(QLatin1Char('\n'));
            if (piece.size() > room) {
                text.append(piece.left(room));
                text.append(QStringLiteral(" […cut]"));
                truncated = true;
            } else {
                text.append(piece);
            }
        } else if (type == QLatin1String("resource_link")) {
            QJsonObject link{{QStringLiteral("type"), type}};
            for (const char *key : {"uri", "name", "title", "mimeType"}) {
                const QString field = block.value(QLatin1String(key)).toString();
                if (!field.isEmpty())
                    link.insert(QLatin1String(key), field.left(limits.maxLinkChars));
            }
            blocks.append(link);
        } else if (type == QLatin1String("resource")) {
            // An embedded resource: its uri, and its text as text (bounded); never a blob.
            const QJsonObject resource = block.value(QStringLiteral("resource")).toObject();
            blocks.append(QJsonObject{
                {QStringLiteral("type"), type},
                {QStringLiteral("uri"),
                 resource.value(QStringLiteral("uri")).toString().left(limits.maxLinkChars)}});
            const QString piece = resource.value(QStringLiteral("text")).toString();
            const qsizetype room = limits.maxTextChars - text.size();
            if (!piece.isEmpty() && room > 0) {
                text.append(text.isEmpty() ? QString() : QStringLiteral("\n"));
                text.append(piece.left(room));
                truncated = truncated || piece.size() > room;
            } else if (!piece.isEmpty()) {
                truncated = true;
            }
        } else {
            // image, audio, or a type this client does not know: named, not shown.
            blocks.append(
                QJsonObject{{QStringLiteral("type"), type.left(32)},
                            {QStringLiteral("mimeType"),
                             block.value(QStringLiteral("mimeType")).toString().left(64)},
                            {QStringLiteral("omitted"), true}});
        }
    }
    if (!text.isEmpty())
        summary.insert(QStringLiteral("text"), text);
    if (!blocks.isEmpty())
        summary.insert(QStringLiteral("content"), blocks);
    const QJsonValue structured = result.value(QStringLiteral("structuredContent"));
    if (structured.isObject()) {
        const QByteArray json = QJsonDocument(structured.toObject())
                                    .toJson(QJsonDocument::Compact);
        if (json.size() <= limits.maxStructuredBytes) {
            summary.insert(QStringLiteral("structuredContent"), structured);
        } else {
            summary.insert(QStringLiteral("structuredContentOmitted"),
                           QStringLiteral("%1 bytes").arg(json.size()));
            truncated = true;
        }
    }
    if (truncated)
        summary.insert(QStringLiteral("truncated"), true);
    return summary;
}

} // namespace AgentConsole::Mcp
