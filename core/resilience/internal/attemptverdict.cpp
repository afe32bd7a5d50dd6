#include "attemptverdict.h"

#include "../circuitbreaker.h"
#include "../failuretable.h"

#include <chrono>

namespace AgentConsole::Internal {

using Millis = std::chrono::milliseconds;

AttemptOutcome outcomeFor(FailureKind kind, const ToolResult &result)
{
    switch (kind) {
    case FailureKind::None:
        if (result.success)
            return AttemptOutcome::Succeeded;
        return result.code == ResultCode::ExecutionStatusUnknown ? AttemptOutcome::StatusUnknown
                                                                 : AttemptOutcome::BusinessFailure;
    case FailureKind::NotFound:
    case FailureKind::InvalidArgument:
        return AttemptOutcome::BusinessFailure;
    case FailureKind::Transient:
        return AttemptOutcome::TransientFailure;
    case FailureKind::AttemptTimeout:
        return AttemptOutcome::TimedOut;
    case FailureKind::Permanent:
        return AttemptOutcome::Rejected;
    case FailureKind::AccessDenied:
        return AttemptOutcome::AccessDenied;
    case FailureKind::Unexpected:
        return AttemptOutcome::Unexpected;
    case FailureKind::Cancelled:
        return AttemptOutcome::Cancelled;
    case FailureKind::CircuitOpen:
        return AttemptOutcome::CircuitOpen;
    }
    return AttemptOutcome::Unexpected;
}

ResultCode::Code codeFor(FailureKind kind)
{
    using Code = ResultCode::Code;
    switch (kind) {
    case FailureKind::AttemptTimeout:
        return Code::ToolTimeout;
    case FailureKind::Transient:
        return Code::ToolUnavailable;
    case FailureKind::CircuitOpen:
        return Code::ToolUnavailable;
    case FailureKind::Permanent:
        return Code::ToolRejected;
    case FailureKind::AccessDenied:
        return Code::ToolAccessDenied;
    case FailureKind::Cancelled:
        return Code::Cancelled;
    case FailureKind::InvalidArgument:
        return Code::InvalidArgument;
    case FailureKind::None:
    case FailureKind::NotFound:
    case FailureKind::Unexpected:
        break;
    }
    return Code::InternalError;
}

ToolResult failureFor(ResultCode::Code code, Language language, const QStringList &errors)
{
    return FailureTable::instance().failure(code, language, errors);
}

QString circuitOpenReason(Language language)
{
    return language == Language::Chinese
        ? QStringLiteral("该服务当前已知不可用（熔断器已打开），本次未调用")
        : QStringLiteral("The service is known to be down right now (circuit open); "
                         "it was not called");
}

QString isolatedReason(Language language)
{
    return language == Language::Chinese
        ? QStringLiteral("该服务已被值班主管暂时下线（隔离），本次未调用；请稍后再试")
        : QStringLiteral("The service was taken offline by the shift lead (isolated); it was "
                         "not called. Try again later");
}

void tellBreaker(CircuitBreaker *breaker, FailureKind kind, qint64 durationMs)
{
    if (!breaker)
        return;
    const Millis duration{durationMs};
    switch (kind) {
    case FailureKind::None:
    case FailureKind::NotFound:
        breaker->recordSuccess(duration);
        return;
    case FailureKind::Transient:
    case FailureKind::AttemptTimeout:
        breaker->recordFailure(duration);
        return;
    case FailureKind::InvalidArgument:
    case FailureKind::Permanent:
    case FailureKind::AccessDenied:
    case FailureKind::Unexpected:
    case FailureKind::Cancelled:
    case FailureKind::CircuitOpen:
        breaker->release();
        return;
    }
}

} // namespace AgentConsole::Internal
