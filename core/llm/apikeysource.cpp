#include "apikeysource.h"

#include "../telemetry/logging.h"
#include "../telemetry/logsecrets.h"
#include "secretstore.h"

#include <QTimer>

namespace AgentConsole {

bool ApiKeySource::hasKeychain()
{
#ifdef AGENT_CONSOLE_HAVE_KEYCHAIN
    return true;
#else
    return false;
#endif
}

QString ApiKeySource::fromEnvironment(const QString &variable)
{
    const QString key = qEnvironmentVariable(variable.toLocal8Bit().constData()).trimmed();
    LogSecrets::add(key); // whoever reads it, it never reaches the local log
    return key;
}

ApiKeySource::ApiKeySource(std::shared_ptr<SecretStore> store, QObject *parent)
    : QObject(parent)
    , m_store(store ? std::move(store) : osKeychain(keychainService()))
{
}

ApiKeySource::~ApiKeySource() = default;

void ApiKeySource::lookup()
{
    const QString key = fromEnvironment(m_variable);
    if (!key.isEmpty()) {
        // Asynchronous like the keychain path, so that callers have one code path.
        QTimer::singleShot(0, this, [this, key] { Q_EMIT finished(key, Origin::Environment); });
        return;
    }
    lookupKeychain();
}

void ApiKeySource::lookupKeychain()
{
    m_store->read(m_keychainKey, this, [this](const SecretAnswer &answer) {
        if (answer.status == SecretAnswer::Status::Failed) {
            // The problem describes the keychain, never the secret.
            qCWarning(lcLlm).noquote()
                << "the keychain could not be read for" << m_keychainKey << ":" << answer.problem;
        }
        const QString key = answer.status == SecretAnswer::Status::Found ? answer.secret.trimmed()
                                                                         : QString();
        Q_EMIT finished(key, key.isEmpty() ? Origin::None : Origin::Keychain);
    });
}

} // namespace AgentConsole
