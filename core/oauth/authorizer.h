#pragma once

#include "bearerchallenge.h"
#include "signinerror.h"
#include "signinflow.h"
#include "tokenset.h"

#include <QObject>
#include <QPointer>

#include <memory>

namespace AgentConsole::OAuth {

class Exchange;
class GrantStore;

// One MCP server's sign-in state: the grant it holds (from the keychain), the token its
// requests carry, and what happens when the server refuses one (401, or 403 with
// insufficient_scope): a refresh when a refresh token may help, else a sign-in; started at
// once when the front end may open a browser by itself (agent-cli, the conformance client),
// else left for staff to start (the window's MCP dock: Sign in). A server that keeps refusing
// new tokens is not signed in to again and again: after `maxAuthorizations` sign-ins without
// one accepted request, it fails with TooManyAttempts.
// Lives on the thread of the server's transport; asynchronous throughout.
class Authorizer final : public QObject
{
    Q_OBJECT

public:
    enum class State {
        Loading, // reading the keychain
        NotNeeded, // no grant, and the server asked for none (so far)
        SignedOut, // the server asks for a sign-in (or a new one): staff must sign in
        Refreshing, // a refresh token is being exchanged
        SigningIn, // the browser is open, waiting for the redirect
        SignedIn, // a token is held
    };
    Q_ENUM(State)

    struct Options
    {
        QUrl serverUrl;
        ClientSettings client;
        // Whether a refused request may start a sign-in by itself (it opens a browser).
        bool signInWhenAsked = false;
        BrowserOpener openBrowser;
        int signInTimeoutMs = 5 * 60 * 1000;
        int exchangeTimeoutMs = 15000;
        int maxAuthorizations = 3;
        std::shared_ptr<GrantStore> store; // null: nothing is kept between runs
        QString storeKey; // e.g. "mcp.<server>.oauth"
    };

    explicit Authorizer(Options options, QObject *parent = nullptr);
    ~Authorizer() override;

    // Reads the stored grant; loaded() follows (also when there is none or the store failed).
    void load();
    bool isLoaded() const { return m_state != State::Loading; }

    State state() const { return m_state; }
    // Why it is signed out or why the last sign-in failed (None when it did not).
    SignInError lastError() const { return m_lastError; }
    // The URL the browser was opened on, while signing in (for a front end that prints it).
    QUrl authorizationUrl() const;
    bool hasGrant() const { return !m_grant.isEmpty(); }
    QStringList grantedScopes() const { return m_grant.scopes; }

    // "Bearer <token>" while a token is held, else empty. Never logged.
    QByteArray authorizationHeader() const;
    // The transport: a request was refused; `status` 401 or 403, `wwwAuthenticate` the
    // header's value. authorized() follows when the request may be sent again with a new
    // token, refused() when it may not.
    void challenge(int status, const QByteArray &wwwAuthenticate);
    // The transport: a request with our token was accepted (the sign-in loop ends).
    void accepted();
    // The transport: a request was refused again after every new token it may be sent with
    // (HttpTransport::Options::maxAuthRetries). Nothing more is tried by itself: the state
    // says staff must sign in (TooManyAttempts) until they do or a request is accepted.
    void exhausted();

    // Staff: sign in now (the window's Sign in), sign out (the grant is forgotten here and in
    // the keychain), or give up a sign-in in progress.
    void signIn();
    void signOut();
    void cancelSignIn();

    // The secrets this authorizer holds, for the redactors of what leaves the console.
    QStringList knownSecrets() const;

Q_SIGNALS:
    void loaded();
    void stateChanged(AgentConsole::OAuth::Authorizer::State state);
    void authorized();
    void refused(const AgentConsole::OAuth::SignInError &error);
    void browserOpened(const QUrl &url);

private:
    void startSignIn();
    void onGranted(const Grant &grant);
    void onFailed(const SignInError &error);
    void refuse(const SignInError &error, State state);
    void store();
    void setState(State state);

    Options m_options;
    State m_state = State::Loading;
    Grant m_grant;
    std::optional<ClientIdentity> m_registered; // a dynamic registration kept for next time
    QUrl m_registeredIssuer;
    BearerChallenge m_challenge; // the last challenge: what a staff sign-in asks for
    SignInError m_lastError;
    Exchange *m_exchange;
    QPointer<SignInFlow> m_flow;
    int m_authorizations = 0; // sign-ins since the last accepted request
    bool m_asked = false; // the server has refused a request for want of a token
    bool m_refreshTried = false;
};

} // namespace AgentConsole::OAuth
