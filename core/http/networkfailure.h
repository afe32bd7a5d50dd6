#pragma once

#include <QObject>
#include <QString>

namespace AgentConsole::Http {
Q_NAMESPACE

// What went wrong below HTTP in one exchange (QNetworkReply::NetworkError reduced to what a
// caller decides by). Each client maps these to its own outcome: the model client retries
// NeverConnected, ConnectionLost and TimedOut; a REST write asks "was the request sent?".
enum class NetworkFailure {
    None, // no error below HTTP
    NeverConnected, // refused, host not found, proxy refused or not found: nothing was sent
    ConnectionLost, // closed or reset, temporary failure, proxy closed or timed out, a broken
                    // HTTP exchange: the server or the path to it may recover
    TimedOut, // the socket timed out (QNetworkReply::TimeoutError)
    Aborted, // OperationCanceledError: our own abort() or the transfer timeout
    Configuration, // TLS handshake, insecure redirect, unknown scheme, invalid operation:
                   // trying again cannot help until someone changes the setup
    Other, // anything else (TLS internals, proxy authentication, content errors)
};
Q_ENUM_NS(NetworkFailure)

// `networkError` is a QNetworkReply::NetworkError (an int so that callers need not include
// QtNetwork).
NetworkFailure networkFailureOf(int networkError);

// The exchange failed below HTTP: an error, and either no status line arrived or the error is
// one of the connection or proxy errors (below 200), so no complete answer exists.
bool failedBelowHttp(int networkError, int httpStatus);

// The enum name of a QNetworkReply::NetworkError ("ConnectionRefusedError"), for the log.
QString networkErrorName(int networkError);

// What an HTTP status says, as the clients of this project read it. The model client and the
// REST backends then decide retry and wording from this plus their own special codes.
enum class StatusClass {
    NoResponse, // 0: no status line arrived
    Interim, // 1xx
    Success, // 2xx
    Redirect, // 3xx: never followed (DESIGN.md, "Bounds")
    AccessDenied, // 401, 403, 407
    NotFound, // 404
    Throttled, // 408 request timeout, 429 too many requests: worth waiting for
    ClientError, // any other 4xx: the request itself is wrong
    ServerError, // 5xx
    Invalid, // anything else
};
Q_ENUM_NS(StatusClass)

StatusClass statusClassOf(int httpStatus);

} // namespace AgentConsole::Http
