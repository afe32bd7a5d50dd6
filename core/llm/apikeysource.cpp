#include "apikeysource.h"

#include "../telemetry/logging.h"

#include <QTimer>

#ifdef AGENT_CONSOLE_HAVE_KEYCHAIN
#include <qt6keychain/keychain.h>
#endif

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
    return qEnvironmentVariable(variable.toLocal8Bit().constData()).trimmed();
}

ApiKeySource::ApiKeySource(QObject *parent)
    : QObject(parent)
{
}

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
#ifdef AGENT_CONSOLE_HAVE_KEYCHAIN
    // Deletes itself after finished (QKeychain's autoDelete default); parented for the case
    // that this source goes away first.
    auto *job = new QKeychain::ReadPasswordJob(keychainService(), this);
    job->setKey(m_keychainKey);
    connect(job, &QKeychain::Job::finished, this, [this](QKeychain::Job *done) {
        const auto *read = static_cast<QKeychain::ReadPasswordJob *>(done);
        if (read->error() != QKeychain::NoError) {
            // errorString() describes the keychain, never the secret.
            qCWarning(lcLlm) << "no API key in the OS keychain for" << m_keychainKey << ":"
                             << read->errorString();
            Q_EMIT finished(QString(), Origin::None);
            return;
        }
        const QString key = read->textData().trimmed();
        Q_EMIT finished(key, key.isEmpty() ? Origin::None : Origin::Keychain);
    });
    job->start();
#else
    qCWarning(lcLlm) << "no API key in" << m_variable << "and this build has no keychain support";
    QTimer::singleShot(0, this, [this] { Q_EMIT finished(QString(), Origin::None); });
#endif
}

} // namespace AgentConsole
