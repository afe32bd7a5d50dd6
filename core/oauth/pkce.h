#pragma once

#include <QByteArray>

namespace AgentConsole::OAuth {

// RFC 7636 with S256, the only method MCP allows when a client can compute it: a verifier of
// 64 unreserved characters from the system's random source, its challenge
// BASE64URL(SHA-256(verifier)) without padding. QtNetworkAuth 6.4 has no PKCE of its own.
struct Pkce
{
    QByteArray verifier;
    QByteArray challenge;

    static Pkce generate();
    static QByteArray challengeOf(const QByteArray &verifier);
};

// `bytes` random bytes from the system's source as base64url without padding: the `state`
// of an authorization request.
QByteArray randomUrlSafe(int bytes);

} // namespace AgentConsole::OAuth
