#pragma once

#include <QHash>
#include <QString>

#include <functional>
#include <memory>

QT_BEGIN_NAMESPACE
class QObject;
QT_END_NAMESPACE

namespace AgentConsole {

// What one keychain request came to. `secret` is set for Found only and is never logged;
// `problem` is the keychain's own description of a failure (it never contains the secret).
struct SecretAnswer
{
    enum class Status { Found, NotFound, Done, Failed };

    Status status = Status::Failed;
    QString secret;
    QString problem;
};

// Where secrets are kept: the OS keychain in the console, an in-process store in tests. The
// few calls the console needs and nothing else, so that the keychain itself stays behind one
// thin implementation. Every call answers asynchronously (a keychain may prompt or talk to
// D-Bus): `done` runs exactly once, on a later event-loop turn of the caller's thread, and not
// at all once `context` is gone.
class SecretStore
{
public:
    using Done = std::function<void(const SecretAnswer &)>;

    virtual ~SecretStore() = default;

    // Found with the secret, NotFound, or Failed.
    virtual void read(const QString &key, QObject *context, Done done) = 0;
    // Done or Failed.
    virtual void write(const QString &key, const QString &secret, QObject *context, Done done) = 0;
    // Done (also when there was nothing to remove) or Failed.
    virtual void remove(const QString &key, QObject *context, Done done) = 0;
};

// The OS keychain (a Secret Service such as GNOME Keyring or KWallet on Linux) through
// QtKeychain, its entries under `service`. In a build without QtKeychain every call fails
// with a sentence that says so.
std::shared_ptr<SecretStore> osKeychain(const QString &service);

// Secrets kept in this process only, for tests of what uses a SecretStore; failWith() makes
// every later call fail as an unavailable keychain would.
class MemorySecretStore final : public SecretStore
{
public:
    void read(const QString &key, QObject *context, Done done) override;
    void write(const QString &key, const QString &secret, QObject *context, Done done) override;
    void remove(const QString &key, QObject *context, Done done) override;

    void failWith(const QString &problem) { m_problem = problem; }
    bool contains(const QString &key) const { return m_secrets.contains(key); }
    int requestCount() const { return m_requests; }

private:
    void answer(QObject *context, Done done, SecretAnswer answer);

    QHash<QString, QString> m_secrets;
    QString m_problem;
    int m_requests = 0;
};

} // namespace AgentConsole
