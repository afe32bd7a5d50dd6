#include "storedapikey.h"

#include "../llm/apikeysource.h"
#include "../llm/secretstore.h"
#include "../telemetry/logging.h"

namespace AgentConsole {

StoredApiKey::StoredApiKey(std::shared_ptr<SecretStore> store, QObject *parent)
    : QObject(parent)
    , m_store(store ? std::move(store) : osKeychain(ApiKeySource::keychainService()))
{
}

StoredApiKey::~StoredApiKey() = default;

void StoredApiKey::check()
{
    m_store->read(ApiKeySource::primaryKeychainKey(), this, [this](const SecretAnswer &answer) {
        switch (answer.status) {
        case SecretAnswer::Status::Found:
            return Q_EMIT checked(answer.secret.trimmed().isEmpty() ? State::NotStored
                                                                    : State::Stored);
        case SecretAnswer::Status::NotFound:
        case SecretAnswer::Status::Done:
            return Q_EMIT checked(State::NotStored);
        case SecretAnswer::Status::Failed:
            qCWarning(lcAgent).noquote() << "keychain not available:" << answer.problem;
            return Q_EMIT checked(State::Unavailable);
        }
    });
}

void StoredApiKey::store(const QString &key)
{
    m_store->write(ApiKeySource::primaryKeychainKey(), key.trimmed(), this,
                   [this](const SecretAnswer &answer) {
                       if (answer.status == SecretAnswer::Status::Failed) {
                           qCWarning(lcAgent).noquote()
                               << "the API key was not stored:" << answer.problem;
                           return Q_EMIT stored(false);
                       }
                       qCInfo(lcAgent) << "an API key was stored in the keychain"; // never the key
                       Q_EMIT stored(true);
                   });
}

void StoredApiKey::forget()
{
    m_store->remove(ApiKeySource::primaryKeychainKey(), this, [this](const SecretAnswer &answer) {
        if (answer.status == SecretAnswer::Status::Failed) {
            qCWarning(lcAgent).noquote() << "the API key was not removed:" << answer.problem;
            return Q_EMIT forgotten(false);
        }
        Q_EMIT forgotten(true);
    });
}

} // namespace AgentConsole
