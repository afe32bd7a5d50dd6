#include "resultcode.h"

namespace AgentConsole::ResultCode {

const QString &wireName(Code code)
{
    switch (code) {
    case Code::Ok: return Ok;
    case Code::InvalidArgument: return InvalidArgument;
    case Code::OrderNotFound: return OrderNotFound;
    case Code::LogisticsNotFound: return LogisticsNotFound;
    case Code::SkuNotFound: return SkuNotFound;
    case Code::ContextMissing: return ContextMissing;
    case Code::UnknownTool: return UnknownTool;
    case Code::ToolTimeout: return ToolTimeout;
    case Code::ToolUnavailable: return ToolUnavailable;
    case Code::ToolRejected: return ToolRejected;
    case Code::ToolAccessDenied: return ToolAccessDenied;
    case Code::Cancelled: return Cancelled;
    case Code::InternalError: return InternalError;
    case Code::ConfirmationDeclined: return ConfirmationDeclined;
    case Code::IdempotencyConflict: return IdempotencyConflict;
    case Code::ExecutionStatusUnknown: return ExecutionStatusUnknown;
    case Code::OperationInProgress: return OperationInProgress;
    case Code::SignInRequired: return SignInRequired;
    case Code::ToolCallLimit: return ToolCallLimit;
    }
    Q_UNREACHABLE();
    return InternalError;
}

std::optional<Code> fromWireName(QStringView name)
{
    for (int value = 0; value < codeCount; ++value) {
        const auto code = Code(value);
        if (wireName(code) == name)
            return code;
    }
    return std::nullopt;
}

} // namespace AgentConsole::ResultCode
