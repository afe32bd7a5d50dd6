#include "authorizer.h"

#include "../telemetry/logging.h"
#include "../telemetry/logsecrets.h"
#include "grantstore.h"
#include "oauthexchange.h"
#include "tokenrequest.h"

#include <QJsonDocument>

namespace AgentConsole::OAuth {

Authorizer::Authorizer(Options options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_exchange(new Exchange(Exchange::Limits{m_options.exchangeTimeoutMs, 64 * 1024}, this))
{
    qRegisterMetaType<AgentConsole::OAuth::SignInError>();
}

Authorizer::~Authorizer() = default;

void Authorizer::load()
{
    if (!m_options.store) {
        setState(State::NotNeeded);
        QMetaObject::invokeMethod(this, &Authorizer::loaded, Qt::QueuedConnection);
        return;
    }
    m_options.store->read(m_options.storeKey, this, [this](const GrantStore::Answer &answer) {
        if (!answer.ok) {
            // Not fatal: the server may need no sign-in at all; if it does, staff sign in
            // and the keychain's problem is said again then.
            qCWarning(lcMcp).noquote()
                << "sign-in: the keychain could not be read:" << answer.problem.left(256);
            m_lastError = SignInError::of(SignInFailure::KeychainFailed, answer.problem.left(256));
        } else if (answer.found) {
            const QJsonObject json = QJsonDocument::fromJson(answer.value.toUtf8()).object();
            m_grant = Grant::fromJson(json);
            LogSecrets::add(knownSecrets());
            if (m_grant.client.dynamic) {
                m_registered = m_grant.client;
                m_registeredIssuer = m_grant.issuer;
            }
        }
        setState(m_grant.isEmpty() ? State::NotNeeded : State::SignedIn);
        Q_EMIT loaded();
    });
}

QUrl Authorizer::authorizationUrl() const
{
    return m_flow ? m_flow->authorizationUrl() : QUrl();
}

QByteArray Authorizer::authorizationHeader() const
{
    if (m_grant.isEmpty())
        return {};
    return "Bearer " + m_grant.accessToken.toUtf8();
}

void Authorizer::challenge(int status, const QByteArray &wwwAuthenticate)
{
    m_asked = true;
    const BearerChallenge challenge = parseBearerChallenge(wwwAuthenticate);
    if (challenge.present)
        m_challenge = challenge;
    if (m_state == State::Refreshing || m_state == State::SigningIn || m_state == State::Loading)
        return; // already under way: the held request goes again when it ends
    // A 401 with a token we hold: perhaps only expired. One refresh per refusal streak.
    if (status == 401 && !m_grant.refreshToken.isEmpty() && !m_refreshTried) {
        m_refreshTried = true;
        setState(State::Refreshing);
        refreshGrant(m_exchange, m_grant, [this](const TokenAnswer &answer) {
            if (!answer.error.isError()) {
                qCInfo(lcMcp) << "sign-in: token refreshed";
                m_grant = answer.grant;
                LogSecrets::add(knownSecrets());
                store();
                setState(State::SignedIn);
                Q_EMIT authorized();
                return;
            }
            qCWarning(lcMcp).noquote() << "sign-in: refresh failed:" << answer.error.describe();
            if (answer.error.failure == SignInFailure::Refused) {
                // invalid_grant and the like: the refresh token is dead, a sign-in is due.
                m_grant.accessToken.clear();
                m_grant.refreshToken.clear();
                // The keychain forgets them too: the next start would show the server signed
                // in on tokens the server refuses (a dynamic registration stays with it).
                store();
                setState(State::SignedOut);
                if (m_options.signInWhenAsked) {
                    startSignIn();
                    return;
                }
                refuse(SignInError::of(SignInFailure::NotSignedIn,
                                       QStringLiteral("the refresh token was refused")),
                       State::SignedOut);
                return;
            }
            refuse(answer.error, State::SignedIn);
        });
        return;
    }
    if (m_authorizations >= m_options.maxAuthorizations) {
        refuse(SignInError::of(SignInFailure::TooManyAttempts,
                               QStringLiteral("%1 sign-ins without an accepted request")
                                   .arg(m_authorizations)),
               State::SignedOut); // the token held is refused: staff must sign in again
        return;
    }
    if (!m_options.signInWhenAsked) {
        refuse(SignInError::of(SignInFailure::NotSignedIn,
                               status == 403 ? QStringLiteral("the server asks for more scopes")
                                             : QStringLiteral("the server asks for a sign-in")),
               State::SignedOut);
        return;
    }
    startSignIn();
}

void Authorizer::accepted()
{
    m_authorizations = 0;
    m_refreshTried = false;
}

void Authorizer::exhausted()
{
    if (m_state == State::SigningIn || m_state == State::Refreshing || m_state == State::Loading)
        return; // a sign-in under way may still bring a token the server takes
    // Without this the window went on saying "Signed in" while every call was refused, and a
    // front end that signs in by itself opened the browser again at the next call.
    m_authorizations = std::max(m_authorizations, m_options.maxAuthorizations);
    m_lastError = SignInError::of(SignInFailure::TooManyAttempts,
                                  QStringLiteral("the server kept refusing new tokens"));
    if (m_state == State::SignedOut)
        Q_EMIT stateChanged(m_state); // the reason changed: shown again
    setState(State::SignedOut);
}

void Authorizer::signIn()
{
    if (m_state == State::SigningIn || m_state == State::Refreshing || m_state == State::Loading)
        return;
    m_authorizations = 0; // staff asked: a fresh start
    startSignIn();
}

void Authorizer::signOut()
{
    cancelSignIn();
    m_grant = Grant();
    m_registered.reset();
    m_authorizations = 0;
    m_refreshTried = false;
    m_lastError = SignInError();
    if (m_options.store) {
        m_options.store->remove(m_options.storeKey, this, [](const GrantStore::Answer &answer) {
            if (!answer.ok)
                qCWarning(lcMcp).noquote() << "sign-out: the keychain entry could not be removed:"
                                           << answer.problem.left(256);
        });
    }
    setState(State::SignedOut);
}

void Authorizer::cancelSignIn()
{
    if (m_flow)
        m_flow->cancel(); // failed() follows at once, and with it refused()
}

QStringList Authorizer::knownSecrets() const
{
    QStringList secrets;
    for (const QString &value : {m_grant.accessToken, m_grant.refreshToken,
                                 m_grant.client.clientSecret, m_options.client.clientSecret}) {
        if (!value.isEmpty())
            secrets.append(value);
    }
    return secrets;
}

void Authorizer::startSignIn()
{
    ++m_authorizations;
    SignInFlow::Request request;
    request.serverUrl = m_options.serverUrl;
    request.challenge = m_challenge;
    request.heldScopes = m_grant.scopes;
    request.client = m_options.client;
    request.registered = m_registered;
    request.registeredIssuer = m_registeredIssuer;
    request.openBrowser = m_options.openBrowser;
    request.timeoutMs = m_options.signInTimeoutMs;
    request.exchangeTimeoutMs = m_options.exchangeTimeoutMs;
    auto *flow = new SignInFlow(std::move(request), this);
    m_flow = flow;
    connect(flow, &SignInFlow::browserOpened, this, &Authorizer::browserOpened);
    connect(flow, &SignInFlow::succeeded, this, &Authorizer::onGranted);
    connect(flow, &SignInFlow::failed, this, &Authorizer::onFailed);
    setState(State::SigningIn);
    flow->start();
}

void Authorizer::onGranted(const Grant &grant)
{
    if (m_flow)
        m_flow->deleteLater();
    m_grant = grant;
    LogSecrets::add(knownSecrets());
    if (grant.client.dynamic) {
        m_registered = grant.client;
        m_registeredIssuer = grant.issuer;
    }
    m_refreshTried = false;
    m_lastError = SignInError();
    store();
    setState(State::SignedIn);
    Q_EMIT authorized();
}

void Authorizer::onFailed(const SignInError &error)
{
    if (m_flow)
        m_flow->deleteLater();
    // Back to what it was: a server that never asked for a token (staff signed in of their
    // own accord) does not need a sign-in because one was cancelled or failed.
    const State state = !m_grant.isEmpty() ? State::SignedIn
        : m_asked                          ? State::SignedOut
                                           : State::NotNeeded;
    refuse(error, state);
}

void Authorizer::refuse(const SignInError &error, State state)
{
    m_lastError = error;
    setState(state);
    Q_EMIT refused(error);
}

void Authorizer::store()
{
    if (!m_options.store)
        return;
    const QString json = QString::fromUtf8(
        QJsonDocument(m_grant.toJson()).toJson(QJsonDocument::Compact));
    m_options.store->write(
        m_options.storeKey, json, this, [this](const GrantStore::Answer &answer) {
            if (answer.ok)
                return;
            // The token still works for this run; the next start signs in again.
            qCWarning(lcMcp).noquote() << "sign-in: the token could not be kept in the keychain:"
                                       << answer.problem.left(256);
            m_lastError = SignInError::of(SignInFailure::KeychainFailed, answer.problem.left(256));
        });
}

void Authorizer::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

} // namespace AgentConsole::OAuth
