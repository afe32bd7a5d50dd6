#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QUrl>

namespace AgentConsole::OAuth {

// How the client proves itself at the token endpoint (RFC 8414's names).
enum class ClientAuthMethod { None, SecretBasic, SecretPost };

QString methodName(ClientAuthMethod method);

// Who this console is to one authorization server: pre-registered, a Client ID Metadata
// Document URL, or what dynamic registration gave.
struct ClientIdentity
{
    QString clientId;
    QString clientSecret; // empty for a public client
    ClientAuthMethod method = ClientAuthMethod::None;
    QString redirectUri; // the loopback redirect it was registered with (dynamic only)
    bool dynamic = false;
};

// What a sign-in leaves behind for one MCP server: kept in the OS keychain only (never in
// mcp.json, a log, an export or --json), as one JSON entry per server.
struct Grant
{
    QString accessToken;
    QString refreshToken;
    QDateTime expiresAt; // invalid: the server named no lifetime
    QStringList scopes; // what the token was issued for (or what was asked, if not said)
    QUrl tokenEndpoint;
    QUrl issuer;
    QString resource; // the RFC 8707 resource the token is for; empty: none was sent
    ClientIdentity client;

    bool isEmpty() const { return accessToken.isEmpty(); }
    bool expired(const QDateTime &now) const { return expiresAt.isValid() && now >= expiresAt; }

    QJsonObject toJson() const;
    static Grant fromJson(const QJsonObject &json);
};

} // namespace AgentConsole::OAuth

Q_DECLARE_METATYPE(AgentConsole::OAuth::Grant)
