#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace AgentConsole {

// The stable result codes the model, the chat and exports see (DESIGN.md, "Failure taxonomy").
namespace ResultCode {
inline const QString Ok = QStringLiteral("OK");
inline const QString InvalidArgument = QStringLiteral("INVALID_ARGUMENT");
inline const QString OrderNotFound = QStringLiteral("ORDER_NOT_FOUND");
inline const QString LogisticsNotFound = QStringLiteral("LOGISTICS_NOT_FOUND");
inline const QString SkuNotFound = QStringLiteral("SKU_NOT_FOUND");
inline const QString ContextMissing = QStringLiteral("CONTEXT_MISSING");
inline const QString UnknownTool = QStringLiteral("UNKNOWN_TOOL");
inline const QString ToolTimeout = QStringLiteral("TOOL_TIMEOUT");
inline const QString ToolUnavailable = QStringLiteral("TOOL_UNAVAILABLE");
inline const QString ToolRejected = QStringLiteral("TOOL_REJECTED");
inline const QString ToolAccessDenied = QStringLiteral("TOOL_ACCESS_DENIED");
inline const QString Cancelled = QStringLiteral("CANCELLED");
inline const QString InternalError = QStringLiteral("INTERNAL_ERROR");
// Write tools (DESIGN.md, "Write tools and idempotency").
inline const QString ConfirmationDeclined = QStringLiteral("CONFIRMATION_DECLINED");
inline const QString IdempotencyConflict = QStringLiteral("IDEMPOTENCY_CONFLICT");
inline const QString ExecutionStatusUnknown = QStringLiteral("EXECUTION_STATUS_UNKNOWN");
inline const QString OperationInProgress = QStringLiteral("OPERATION_IN_PROGRESS");
// Bounds (DESIGN.md, "Bounds on everything from outside").
// More tool calls in one model message than the console runs: the extra calls do not run.
inline const QString ToolCallLimit = QStringLiteral("TOOL_CALL_LIMIT");
} // namespace ResultCode

enum class Language { English, Chinese };

// Chinese when the text holds any Han character, English otherwise: staff write mixed text
// ("A1001 where 到了"), and a single Chinese word means a Chinese-speaking reader. Every
// fixed sentence the console writes is chosen by this one rule.
Language languageOf(QStringView text);

// What a tool call produced, as the model is allowed to see it. `message` and `errors` are
// fixed, human-written sentences (see SafeText); exception text, SQL, URLs and hostnames never
// go here — they go to the local log.
struct ToolResult
{
    bool success = false;
    QString code;
    QString message;
    QJsonValue data;
    QStringList errors;

    static ToolResult ok(const QString &message, const QJsonValue &data);
    static ToolResult failure(const QString &code, const QString &message,
                              const QStringList &errors = {});
    // A failure whose sentences come from SafeText for `code`.
    static ToolResult failure(const QString &code, Language language,
                              const QStringList &errors = {});

    bool isNotFound() const;
    QJsonObject toJson() const;
    static ToolResult fromJson(const QJsonObject &json);

    friend bool operator==(const ToolResult &, const ToolResult &) = default;
};

// The fixed sentences for each failure code, in both languages the console speaks.
namespace SafeText {
QString messageFor(const QString &code, Language language);
QString retryHintFor(const QString &code, Language language);
} // namespace SafeText

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::ToolResult)
