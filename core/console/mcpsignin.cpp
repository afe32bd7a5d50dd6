#include "mcpsignin.h"

#include "../llm/secretstore.h"
#include "../oauth/authorizer.h"
#include "../oauth/grantstore.h"

namespace AgentConsole {

namespace {

// Grants as keychain entries: one JSON value a server, under "mcp.<server>.oauth".
class KeychainGrants final : public OAuth::GrantStore
{
public:
    explicit KeychainGrants(std::shared_ptr<SecretStore> secrets)
        : m_secrets(std::move(secrets))
    {
    }

    void read(const QString &key, QObject *context, Done done) override
    {
        m_secrets->read(key, context, [done = std::move(done)](const SecretAnswer &answer) {
            done({answer.status != SecretAnswer::Status::Failed,
                  answer.status == SecretAnswer::Status::Found, answer.secret, answer.problem});
        });
    }
    void write(const QString &key, const QString &value, QObject *context, Done done) override
    {
        m_secrets->write(
            key, value, context, [done = std::move(done)](const SecretAnswer &answer) {
                done({answer.status != SecretAnswer::Status::Failed, false, {}, answer.problem});
            });
    }
    void remove(const QString &key, QObject *context, Done done) override
    {
        m_secrets->remove(key, context, [done = std::move(done)](const SecretAnswer &answer) {
            done({answer.status != SecretAnswer::Status::Failed, false, {}, answer.problem});
        });
    }

private:
    std::shared_ptr<SecretStore> m_secrets;
};

McpServerStatus::SignInProblem problemOf(OAuth::SignInFailure failure)
{
    using Problem = McpServerStatus::SignInProblem;
    using Failure = OAuth::SignInFailure;
    switch (failure) {
    case Failure::None:
    case Failure::NotSignedIn:
        return Problem::None;
    case Failure::Cancelled:
        return Problem::Cancelled;
    case Failure::TimedOut:
        return Problem::TimedOut;
    case Failure::Declined:
        return Problem::Declined;
    case Failure::Refused:
        return Problem::Refused;
    case Failure::Unreachable:
        return Problem::Unreachable;
    case Failure::Malformed:
    case Failure::NoMetadata:
    case Failure::ResourceMismatch:
    case Failure::NoPkce:
    case Failure::NoRegistration:
    case Failure::Insecure:
        return Problem::Unusable;
    case Failure::TooManyAttempts:
        return Problem::TooManyAttempts;
    case Failure::BrowserFailed:
        return Problem::NoBrowser;
    case Failure::KeychainFailed:
        return Problem::Keychain;
    }
    return Problem::Unusable;
}

} // namespace

std::shared_ptr<OAuth::GrantStore> keychainGrants(std::shared_ptr<SecretStore> secrets)
{
    if (!secrets)
        return {};
    return std::make_shared<KeychainGrants>(std::move(secrets));
}

void describeSignIn(const OAuth::Authorizer *authorizer, McpServerStatus *status)
{
    using SignIn = McpServerStatus::SignIn;
    if (!authorizer) {
        status->signIn = SignIn::None;
        return;
    }
    switch (authorizer->state()) {
    case OAuth::Authorizer::State::Loading:
    case OAuth::Authorizer::State::NotNeeded:
        status->signIn = SignIn::NotNeeded;
        break;
    case OAuth::Authorizer::State::SignedOut:
        status->signIn = SignIn::SignedOut;
        break;
    case OAuth::Authorizer::State::Refreshing:
    case OAuth::Authorizer::State::SigningIn:
        status->signIn = SignIn::SigningIn;
        break;
    case OAuth::Authorizer::State::SignedIn:
        status->signIn = SignIn::SignedIn;
        break;
    }
    status->signInProblem = problemOf(authorizer->lastError().failure);
}

} // namespace AgentConsole
