#pragma once

#include <QObject>
#include <QString>
#include <QStringView>

#include <optional>

namespace AgentConsole {

// The stable result codes the model, the chat and exports see (DESIGN.md, "Failure taxonomy"):
// one enum, printable by name (Q_ENUM_NS), and the wire name of each, exactly as checkpoints,
// the ledger's result_json, agent-cli --json and the tests spell it. The wire names must never
// change: stored results are read back by them.
//
// The enum and its wire names are one list and live here, on the lowest floor that stores a
// code (ToolResult). What a code means (retried or not, what a write's ledger row becomes,
// severity, the words staff and the model read) is its row in the failure table
// (failuretable.h), and a domain's rows live with the domain: ORDER_NOT_FOUND's row is in
// core/support/supportfailures.cpp, so nothing below support knows what an order is.
namespace ResultCode {
Q_NAMESPACE

enum class Code {
    Ok,
    InvalidArgument,
    OrderNotFound,
    LogisticsNotFound,
    SkuNotFound,
    ContextMissing,
    UnknownTool,
    ToolTimeout,
    ToolUnavailable,
    ToolRejected,
    ToolAccessDenied,
    Cancelled,
    InternalError,
    // Write tools (DESIGN.md, "Write tools and idempotency").
    ConfirmationDeclined,
    IdempotencyConflict,
    ExecutionStatusUnknown,
    OperationInProgress,
    // A tool's server wants staff to sign in (MCP servers behind OAuth, docs/MCP.md).
    SignInRequired,
    // Bounds (DESIGN.md, "Bounds on everything from outside"): more tool calls in one model
    // message than the console runs; the extra calls do not run.
    ToolCallLimit, // keep last: codeCount counts up to it
};
Q_ENUM_NS(Code)

inline constexpr int codeCount = int(Code::ToolCallLimit) + 1;

// The wire names, as QString constants for comparing with ToolResult::code.
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
inline const QString ConfirmationDeclined = QStringLiteral("CONFIRMATION_DECLINED");
inline const QString IdempotencyConflict = QStringLiteral("IDEMPOTENCY_CONFLICT");
inline const QString ExecutionStatusUnknown = QStringLiteral("EXECUTION_STATUS_UNKNOWN");
inline const QString OperationInProgress = QStringLiteral("OPERATION_IN_PROGRESS");
inline const QString SignInRequired = QStringLiteral("SIGN_IN_REQUIRED");
inline const QString ToolCallLimit = QStringLiteral("TOOL_CALL_LIMIT");

// The wire name of `code` (one of the constants above; a switch the compiler checks).
const QString &wireName(Code code);
// The code a wire name stands for; empty for a name this console does not know (a newer
// version's code, a backend's own): callers keep such a code as it is.
std::optional<Code> fromWireName(QStringView name);

} // namespace ResultCode
} // namespace AgentConsole
