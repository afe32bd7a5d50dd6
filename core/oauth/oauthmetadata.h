#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

namespace AgentConsole::OAuth {

// RFC 9728 Protected Resource Metadata, as far as a client uses it.
struct ProtectedResource
{
    QUrl resource;
    QList<QUrl> authorizationServers;
    QStringList scopesSupported;
    bool scopesListed = false; // scopes_supported was present (it may be empty)
};

// RFC 8414 (or OpenID Connect Discovery) authorization server metadata.
struct AuthorizationServer
{
    QUrl issuer;
    QUrl authorizationEndpoint;
    QUrl tokenEndpoint;
    QUrl registrationEndpoint; // empty: no dynamic client registration
    QStringList scopesSupported;
    QStringList tokenEndpointAuthMethods; // empty: not listed (RFC 8414 default: basic)
    QStringList codeChallengeMethods;
    bool codeChallengeMethodsListed = false;
    QStringList grantTypes;
    bool clientIdMetadataDocuments = false; // client_id_metadata_document_supported
    bool fromFallback = false; // the 2025-03-26 default endpoints, no metadata document
};

// Where a client looks, in order (MCP 2025-11-25 "Authorization Server Discovery"):
// the path-inserted well-known URI of the server's path first, then the root one.
QList<QUrl> protectedResourceMetadataUrls(const QUrl &serverUrl);
// For an issuer with a path: RFC 8414 path insertion, OpenID path insertion, OpenID path
// appending; without a path: RFC 8414, then OpenID. Never the root documents for an issuer
// with a path (they describe another tenant).
QList<QUrl> authorizationServerMetadataUrls(const QUrl &issuer);
// The 2025-03-26 specification's defaults for a server without any metadata: /authorize,
// /token and /register at the MCP server's origin.
AuthorizationServer fallbackEndpoints(const QUrl &serverUrl);

// The server URL as RFC 8707's resource indicator: scheme and host in lower case, no
// fragment, no query, no trailing slash on a path (only the origin keeps "/").
QUrl canonicalResource(const QUrl &serverUrl);
// Whether metadata naming `resource` may be used for `serverUrl`: same origin, and the
// resource's path is the server's path or a parent of it.
bool resourceCovers(const QUrl &resource, const QUrl &serverUrl);
// http(s) only, and plain http only to a loopback host: tokens and codes never cross the
// network unencrypted.
bool acceptableEndpoint(const QUrl &url);

// Parsers; an empty optional-like result (invalid) when a required member is missing or not
// acceptable. `why` says what, for the local log.
bool parseProtectedResource(const QJsonObject &json, ProtectedResource *out, QString *why);
bool parseAuthorizationServer(const QJsonObject &json, AuthorizationServer *out, QString *why);

} // namespace AgentConsole::OAuth
