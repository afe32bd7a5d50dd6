#pragma once

// An MCP server behind OAuth on 127.0.0.1, with its authorization server on the same origin
// (MCP authorization 2025-11-25): 401 with WWW-Authenticate, protected resource metadata
// (RFC 9728), authorization server metadata (RFC 8414), dynamic client registration
// (RFC 7591), an authorization endpoint that redirects at once (no login page: the test is
// the staff member who agreed), a token endpoint that checks PKCE S256, and refresh. Knobs
// make it misbehave the ways the sign-in must survive. Everything it issues has a value of
// its own, so that a test can look for it in every output (issuedSecrets()).
// And a browser stand-in that follows the authorization URL as a browser would.

#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QNetworkAccessManager>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QTcpServer>
#include <QUrl>

#include <memory>

class QHttpServer;
class QHttpServerRequest;
class QHttpServerResponse;

namespace AgentConsole::Testing {

class FakeOAuthServer final : public QObject
{
    Q_OBJECT

public:
    // One request as the server saw it (after routing; unrouted paths answer 404 unseen).
    struct Seen
    {
        QByteArray method;
        QString path;
        QByteArray authorization; // the Authorization header, as sent
        QByteArray body;
        QString rpcMethod;        // for /mcp: the JSON-RPC method, or empty
    };
    // How the MCP endpoint treats a token it did issue.
    enum class TokenPolicy {
        Accept,            // while not revoked
        Unauthorized,      // every token: 401 (a server that never takes ours)
        InsufficientScope, // every token: 403 insufficient_scope (a step-up that never ends)
    };

    explicit FakeOAuthServer(QObject *parent = nullptr);
    ~FakeOAuthServer() override;

    bool listen();
    QUrl origin() const;
    QUrl mcpUrl() const;

    // The protected resource and authorization server metadata answer 302 to the same path
    // at `elsewhere` (another origin), as a hijacked or misconfigured server would.
    void redirectMetadataTo(const QUrl &elsewhere) { m_redirectTo = elsewhere; }
    // Every token issued so far is refused from now on (expired or revoked).
    void revokeTokens() { m_valid.clear(); }
    void setTokenPolicy(TokenPolicy policy) { m_tokenPolicy = policy; }
    // The token endpoint refuses refresh tokens (invalid_grant).
    void setRefreshRefused(bool refused) { m_refreshRefused = refused; }
    // The MCP endpoint takes requests without a token too (it asks for no sign-in).
    void setOpen(bool open) { m_open = open; }
    // Issues a grant without a browser, as if signed in before (for a grant in the keychain).
    QString issueToken(QString *refreshToken);

    QList<Seen> seen() const { return m_seen; }
    int count(const QString &path) const;
    int rpcCount(const QString &method) const;
    // Every access token, refresh token and client secret it issued.
    QStringList issuedSecrets() const { return m_secrets; }
    QString lastAccessToken() const { return m_lastAccess; }

private:
    QHttpServerResponse mcp(const QHttpServerRequest &request);
    QHttpServerResponse resourceMetadata(const QHttpServerRequest &request);
    QHttpServerResponse serverMetadata(const QHttpServerRequest &request);
    QHttpServerResponse registration(const QHttpServerRequest &request);
    QHttpServerResponse authorization(const QHttpServerRequest &request);
    QHttpServerResponse token(const QHttpServerRequest &request);
    QHttpServerResponse refusal(int status, const QByteArray &error = {});
    QString secret(const char *prefix);
    void record(const QHttpServerRequest &request, const QString &rpcMethod = {});

    struct Code
    {
        QString clientId;
        QString redirectUri;
        QString challenge;
        QString scope;
    };

    std::unique_ptr<QHttpServer> m_http;
    quint16 m_port = 0;
    QUrl m_redirectTo;
    TokenPolicy m_tokenPolicy = TokenPolicy::Accept;
    bool m_refreshRefused = false;
    bool m_open = false;
    QHash<QString, QString> m_clients; // client_id -> secret
    QHash<QString, QString> m_clientRedirects;
    QHash<QString, Code> m_codes;
    QSet<QString> m_valid;    // access tokens accepted now
    QSet<QString> m_refresh;  // refresh tokens accepted now
    QStringList m_secrets;
    QString m_lastAccess;
    QList<Seen> m_seen;
    int m_serial = 0;
};

// Another origin on 127.0.0.1 that must never be spoken to: it only counts connections and
// keeps every byte it is sent.
class ForbiddenOrigin final : public QObject
{
    Q_OBJECT

public:
    explicit ForbiddenOrigin(QObject *parent = nullptr);
    bool listen() { return m_server.listen(QHostAddress::LocalHost, 0); }
    QUrl origin() const;
    int connections() const { return m_connections; }
    QByteArray received() const { return m_received; }

private:
    QTcpServer m_server;
    int m_connections = 0;
    QByteArray m_received;
};

// The staff member's browser: opened on the authorization URL, it follows the one redirect
// to the loopback redirect URI, as a browser would; or, when `follow` is off, it only keeps
// the address (the page stays open: a sign-in to cancel).
class FakeBrowser final : public QObject
{
    Q_OBJECT

public:
    explicit FakeBrowser(QObject *parent = nullptr);

    bool open(const QUrl &url);
    void setFollow(bool follow) { m_follow = follow; }
    QList<QUrl> opened() const { return m_opened; }
    // The redirect URIs it was sent to and fetched.
    QList<QUrl> redirects() const { return m_redirects; }

private:
    QNetworkAccessManager m_network;
    QList<QUrl> m_opened;
    QList<QUrl> m_redirects;
    bool m_follow = true;
};

} // namespace AgentConsole::Testing
