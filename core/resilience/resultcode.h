#pragma once

#include <QObject>
#include <QString>
#include <QStringView>

#include <optional>

namespace AgentConsole {

// The result codes the model, the chat and exports see (DESIGN.md, "Failure taxonomy"): one
// type, ResultCode::Code, that a ToolResult carries and everyone compares.
//
// The enum lists the codes the mechanism itself produces (timeouts, unavailable, rejected,
// writes, bounds...), printable by name (Q_ENUM_NS). A domain numbers its own codes from
// firstDomainCode, as KJob's subclasses number their errors from UserDefinedError: the
// support domain's (ORDER_NOT_FOUND, ...) are SupportCode's, in core/support/supportfailures.h,
// so that nothing below support knows what an order is.
//
// Every code has one row in the failure table (failuretable.h), the mechanism's rows there and
// a domain's with the domain, and the row holds the code's wire name: the name checkpoints, the
// ledger's result_json, agent-cli --json, exports and scenario files spell. Wire names never
// change: stored results are read back by them. A name no row has (a newer version's code on a
// shared ledger, a newer backend's) is read as Unrecognized or UnrecognizedNotFound, and the
// result keeps the name as it was given (ToolResult::unrecognizedCode).
namespace ResultCode {
Q_NAMESPACE

enum class Code : quint16 {
    Ok,
    InvalidArgument,
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
    ToolCallLimit,
    // Read, never made: a wire name no row of the failure table has, kept as given. Its
    // rows say how such a result is told: a general failure, or, for a name that ends in
    // _NOT_FOUND (the REST API's way of saying nothing matched), an answer that found nothing.
    Unrecognized,
    UnrecognizedNotFound, // keep last: mechanismCodeCount counts up to it
};
Q_ENUM_NS(Code)
// ResultCode::ToolTimeout for ResultCode::Code::ToolTimeout.
using enum Code;

// The mechanism's codes are 0 .. mechanismCodeCount - 1; a domain's are numbered from
// firstDomainCode (domainCode(0), domainCode(1), ...). A number has one row (FailureTable
// asserts it, tst_failuretable checks it), so a second domain takes the numbers after the
// first's.
inline constexpr int mechanismCodeCount = int(Code::UnrecognizedNotFound) + 1;
inline constexpr int firstDomainCode = 64;
constexpr Code domainCode(int index)
{
    return Code(firstDomainCode + index);
}

// Unrecognized or UnrecognizedNotFound: a code read from a name no row has.
constexpr bool isUnrecognized(Code code)
{
    return code == Code::Unrecognized || code == Code::UnrecognizedNotFound;
}

// The wire name of a code that has a row in the failure table; empty for Unrecognized and
// UnrecognizedNotFound (each result keeps its own) and for a number no row has.
const QString &wireName(Code code);
// The code a wire name stands for; empty for a name no row has.
std::optional<Code> fromWireName(QStringView name);
// A code as read from the wire (a stored result, a backend's answer): the code the name stands
// for, else UnrecognizedNotFound for a name ending in _NOT_FOUND, else Unrecognized. The one
// place a code's text is judged.
Code read(QStringView name);

} // namespace ResultCode
} // namespace AgentConsole
