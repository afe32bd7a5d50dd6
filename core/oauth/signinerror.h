#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>

namespace AgentConsole::OAuth {
Q_NAMESPACE

// How a sign-in or a token refresh went wrong, classified where it happened. `detail` is for
// the local log only (it may name an endpoint); staff read the words of the failure table's
// SIGN_IN_REQUIRED row and the dock's reason for the failure.
enum class SignInFailure {
    None,
    NotSignedIn, // the server asks for a token and staff have not signed in (or must again)
    Cancelled, // staff cancelled the sign-in
    TimedOut, // no redirect came back within the sign-in's bound
    Declined, // the authorization server said access_denied at the redirect
    Refused, // the authorization server refused: a token or registration request 4xx
    Unreachable, // an endpoint did not answer (network, 5xx, timeout): may heal
    Malformed, // an endpoint answered something unreadable or past its bound
    NoMetadata, // no authorization server could be found for the server
    ResourceMismatch, // the metadata describes another resource than the server's URL
    NoPkce, // the authorization server does not offer PKCE with S256
    NoRegistration, // no client id: not pre-registered, no metadata documents, no registration
    Insecure, // an endpoint over plain http off loopback, or a redirect not followed
    TooManyAttempts, // the server kept refusing new tokens (scope step-up limit)
    BrowserFailed, // the browser could not be opened
    KeychainFailed, // the grant could not be stored or read
};
Q_ENUM_NS(SignInFailure)

struct SignInError
{
    SignInFailure failure = SignInFailure::None;
    QString detail;

    bool isError() const { return failure != SignInFailure::None; }
    // Faults of the server side that count against its circuit breaker (an endpoint that did
    // not answer or answered garbage); staff's choices, missing sign-in and refusals do not.
    bool isFault() const
    {
        return failure == SignInFailure::Unreachable || failure == SignInFailure::Malformed;
    }
    static SignInError of(SignInFailure failure, QString detail)
    {
        return {failure, std::move(detail)};
    }
    QString describe() const;
};

} // namespace AgentConsole::OAuth

Q_DECLARE_METATYPE(AgentConsole::OAuth::SignInError)
