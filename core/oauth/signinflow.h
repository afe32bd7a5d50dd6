#pragma once

#include "bearerchallenge.h"
#include "oauthmetadata.h"
#include "signinerror.h"
#include "tokenset.h"

#include <QObject>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

class QOAuthHttpServerReplyHandler;

namespace AgentConsole::OAuth {

class Exchange;

// What the console says about itself to an authorization server.
struct ClientSettings
{
    QString clientName = QStringLiteral("Agent Console");
    // Pre-registered credentials (mcp.json's "oauth": clientId, and the secret from the
    // keychain); empty: none.
    QString clientId;
    QString clientSecret;
    // A Client ID Metadata Document URL this console is known by (SEP-991), used when the
    // authorization server advertises client_id_metadata_document_supported; empty: none.
    QString clientMetadataUrl;
    // Scopes to ask for when neither the server's challenge nor its metadata names any.
    QStringList scopes;
};

// Opens the authorization URL for the staff member (the system browser in the window, the
// terminal's text in agent-cli). False when it could not.
using BrowserOpener = std::function<bool(const QUrl &url)>;

// One authorization code sign-in with PKCE for one MCP server (MCP 2025-11-25
// "Authorization"), from the server's challenge to a grant:
//  1. Protected Resource Metadata (RFC 9728): the challenge's resource_metadata, else the
//     well-known URIs; none at all is a 2025-03-26 server, whose origin is its authorization
//     server. The metadata's resource must cover the server's URL.
//  2. Authorization server metadata (RFC 8414, OpenID discovery), else the 2025-03-26
//     default endpoints; PKCE S256 must be offered.
//  3. The client: pre-registered, a Client ID Metadata Document, an earlier dynamic
//     registration with the same redirect, else dynamic registration (RFC 7591).
//  4. The browser opened on the authorization URL (state, S256 challenge, resource, scope),
//     the code received on a loopback redirect listener on 127.0.0.1 (RFC 8252), its state
//     checked.
//  5. The code exchanged at the token endpoint with the verifier and the same resource.
// Every exchange is bounded and follows no redirect; the whole sign-in has its own bound.
class SignInFlow final : public QObject
{
    Q_OBJECT

public:
    struct Request
    {
        QUrl serverUrl;
        BearerChallenge challenge;
        QStringList heldScopes; // the current token's scopes: a step-up asks for them too
        ClientSettings client;
        std::optional<ClientIdentity> registered; // an earlier dynamic registration
        QUrl registeredIssuer;
        BrowserOpener openBrowser;
        int timeoutMs = 5 * 60 * 1000;
        int exchangeTimeoutMs = 15000;
    };

    SignInFlow(Request request, QObject *parent = nullptr);
    ~SignInFlow() override;

    void start();
    void cancel();
    QUrl authorizationUrl() const { return m_authorizationUrl; }

Q_SIGNALS:
    void browserOpened(const QUrl &url);
    void succeeded(const AgentConsole::OAuth::Grant &grant);
    void failed(const AgentConsole::OAuth::SignInError &error);

private:
    void fetchResourceMetadata(QList<QUrl> urls);
    void fetchServerMetadata(QList<QUrl> urls);
    void useAuthorizationServer(const AuthorizationServer &server);
    bool listen();
    void chooseClient();
    void registerClient();
    void authorize();
    void onRedirect(const QVariantMap &values);
    void exchangeCode(const QString &code);
    QStringList chosenScopes() const;
    ClientAuthMethod methodFor(bool hasSecret) const;
    void fail(SignInFailure failure, const QString &detail);

    Request m_request;
    Exchange *m_exchange;
    std::optional<ProtectedResource> m_resource; // empty: a 2025-03-26 server
    AuthorizationServer m_server;
    ClientIdentity m_client;
    QOAuthHttpServerReplyHandler *m_redirect = nullptr;
    QString m_redirectUri;
    QByteArray m_state;
    QByteArray m_verifier;
    QUrl m_authorizationUrl;
    QTimer m_timeout;
    bool m_done = false;
};

} // namespace AgentConsole::OAuth
