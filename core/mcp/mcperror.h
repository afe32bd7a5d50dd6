#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>

namespace AgentConsole::Mcp {
Q_NAMESPACE

// How an exchange with an MCP server went wrong, classified once where it happened (the
// transport or the session). The adapter (mcptool.h) turns it into the failure table's codes;
// `detail` is for the local log only and never reaches the model or the chat.
enum class Failure {
    None,
    Timeout, // no answer (or no progress) within the bound
    Cancelled, // our side cancelled the request (notifications/cancelled was sent)
    NotConnected, // the session is not ready (still starting, closed or down)
    TransportFailed, // the child could not start, the connection failed, HTTP 5xx or 429
    TransportClosed, // the child exited or the stream ended with the request unanswered
    Malformed, // the server sent something that is not JSON-RPC 2.0
    Oversized, // a message, line or list past its bound
    ProtocolVersion, // the server answered initialize with a version we do not speak
    RemoteError, // a JSON-RPC error object (code in Error::code)
    AccessDenied, // HTTP 401/403
    Rejected, // HTTP 4xx other than the above
    SessionExpired, // HTTP 404 for a request that carried our Mcp-Session-Id
    TooManyRequests, // more requests in flight than the session allows
    AuthRequired, // the server wants a sign-in (OAuth) that has not happened or failed;
                  // Error::code holds the OAuth::SignInFailure
};
Q_ENUM_NS(Failure)

// How the console runs an MCP tool's calls, as its annotations decide (DESIGN.md, "MCP
// tools"; policyOf() in mcptoolinfo.h). Here because a namespace has one Q_NAMESPACE.
enum class ToolPolicy {
    Read, // readOnlyHint: retried like the built-in lookups
    IdempotentWrite, // idempotentHint (not read-only): retried with one idempotency key
    Write, // anything else: confirmed by staff, a ledger claim, never retried blindly
};
Q_ENUM_NS(ToolPolicy)

// JSON-RPC 2.0's reserved error codes (and MCP's use of them).
namespace JsonRpcCode {
inline constexpr int ParseError = -32700;
inline constexpr int InvalidRequest = -32600;
inline constexpr int MethodNotFound = -32601;
inline constexpr int InvalidParams = -32602;
inline constexpr int InternalError = -32603;
} // namespace JsonRpcCode

struct Error
{
    Failure failure = Failure::None;
    int code = 0; // the JSON-RPC error code (RemoteError) or the HTTP status
    QString detail; // local log only

    bool isError() const { return failure != Failure::None; }
    static Error of(Failure failure, QString detail, int code = 0)
    {
        return {failure, code, std::move(detail)};
    }
    // "Timeout: no answer to tools/call in 2000 ms" for the log.
    QString describe() const;
};

// A JSON-RPC error is worth trying again only when the server says it failed internally; the
// transport failures that may heal are retryable, everything the server refused is not.
bool isTransient(const Error &error);

} // namespace AgentConsole::Mcp

Q_DECLARE_METATYPE(AgentConsole::Mcp::Error)
