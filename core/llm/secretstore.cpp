#include "secretstore.h"

#include "../telemetry/logsecrets.h"

#include <QObject>
#include <QTimer>

#ifdef AGENT_CONSOLE_HAVE_KEYCHAIN
#include <qt6keychain/keychain.h>
#endif

namespace AgentConsole {
namespace {

#ifdef AGENT_CONSOLE_HAVE_KEYCHAIN

// QtKeychain's jobs, one per call. A job has no parent and deletes itself after finished
// (QtKeychain's autoDelete default): deleting it while libsecret's answer is on its way would
// leave that answer a dangling job. Its answer reaches `done` through `context`, so that a
// context that goes first gets none.
class QtKeychainStore final : public SecretStore
{
public:
    explicit QtKeychainStore(QString service)
        : m_service(std::move(service))
    {
    }

    void read(const QString &key, QObject *context, Done done) override
    {
        auto *job = new QKeychain::ReadPasswordJob(m_service);
        job->setKey(key);
        QObject::connect(
            job, &QKeychain::Job::finished, context,
            [done = std::move(done)](QKeychain::Job *finished) {
                const auto *read = static_cast<QKeychain::ReadPasswordJob *>(finished);
                if (read->error() == QKeychain::EntryNotFound)
                    return done({SecretAnswer::Status::NotFound, {}, {}});
                if (read->error() != QKeychain::NoError)
                    return done({SecretAnswer::Status::Failed, {}, read->errorString()});
                LogSecrets::add(read->textData()); // a keychain's value never reaches the log
                done({SecretAnswer::Status::Found, read->textData(), {}});
            });
        job->start();
    }

    void write(const QString &key, const QString &secret, QObject *context, Done done) override
    {
        LogSecrets::add(secret);
        auto *job = new QKeychain::WritePasswordJob(m_service);
        job->setKey(key);
        job->setTextData(secret);
        QObject::connect(job, &QKeychain::Job::finished, context,
                         [done = std::move(done)](QKeychain::Job *finished) {
                             done(statusOf(finished));
                         });
        job->start();
    }

    void remove(const QString &key, QObject *context, Done done) override
    {
        auto *job = new QKeychain::DeletePasswordJob(m_service);
        job->setKey(key);
        QObject::connect(job, &QKeychain::Job::finished, context,
                         [done = std::move(done)](QKeychain::Job *finished) {
                             // Removing what is not there leaves the keychain as asked.
                             if (finished->error() == QKeychain::EntryNotFound)
                                 return done({SecretAnswer::Status::Done, {}, {}});
                             done(statusOf(finished));
                         });
        job->start();
    }

private:
    static SecretAnswer statusOf(const QKeychain::Job *job)
    {
        if (job->error() != QKeychain::NoError)
            return {SecretAnswer::Status::Failed, {}, job->errorString()};
        return {SecretAnswer::Status::Done, {}, {}};
    }

    const QString m_service;
};

#else

class NoKeychainStore final : public SecretStore
{
public:
    void read(const QString &, QObject *context, Done done) override { refuse(context, done); }
    void write(const QString &, const QString &, QObject *context, Done done) override
    {
        refuse(context, done);
    }
    void remove(const QString &, QObject *context, Done done) override { refuse(context, done); }

private:
    static void refuse(QObject *context, Done done)
    {
        QTimer::singleShot(0, context, [done = std::move(done)] {
            done({SecretAnswer::Status::Failed,
                  {},
                  QStringLiteral("this build has no keychain support (QtKeychain)")});
        });
    }
};

#endif

} // namespace

std::shared_ptr<SecretStore> osKeychain(const QString &service)
{
#ifdef AGENT_CONSOLE_HAVE_KEYCHAIN
    return std::make_shared<QtKeychainStore>(service);
#else
    Q_UNUSED(service)
    return std::make_shared<NoKeychainStore>();
#endif
}

void MemorySecretStore::answer(QObject *context, Done done, SecretAnswer answer)
{
    ++m_requests;
    if (!m_problem.isEmpty())
        answer = {SecretAnswer::Status::Failed, {}, m_problem};
    QTimer::singleShot(0, context, [done = std::move(done), answer] { done(answer); });
}

void MemorySecretStore::read(const QString &key, QObject *context, Done done)
{
    const auto it = m_secrets.constFind(key);
    if (it != m_secrets.cend())
        LogSecrets::add(*it); // as the OS keychain's store does

    answer(context, std::move(done),
           it == m_secrets.cend() ? SecretAnswer{SecretAnswer::Status::NotFound, {}, {}}
                                  : SecretAnswer{SecretAnswer::Status::Found, *it, {}});
}

void MemorySecretStore::write(const QString &key, const QString &secret, QObject *context,
                              Done done)
{
    LogSecrets::add(secret);
    if (m_problem.isEmpty())
        m_secrets.insert(key, secret);
    answer(context, std::move(done), {SecretAnswer::Status::Done, {}, {}});
}

void MemorySecretStore::remove(const QString &key, QObject *context, Done done)
{
    if (m_problem.isEmpty())
        m_secrets.remove(key);
    answer(context, std::move(done), {SecretAnswer::Status::Done, {}, {}});
}

} // namespace AgentConsole
