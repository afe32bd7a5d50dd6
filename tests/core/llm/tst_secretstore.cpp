// The keychain interface against the real thing: QtKeychain talking to GNOME Keyring (a Secret
// Service) on a D-Bus session bus that this test starts itself, in a temporary home, and stops
// again; nothing of the machine's own keychain is touched. The in-process store used by the UI
// suites is held to the same contract. Both daemons are required: missing, the suite fails.
#include "core/llm/apikeysource.h"
#include "core/llm/secretstore.h"

#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;

namespace {

constexpr int keychainTimeoutMs = 15000;

// Runs one call of a store and waits (without blocking the event loop) for its answer.
SecretAnswer answerOf(const std::function<void(QObject *, SecretStore::Done)> &call, bool *answered)
{
    QObject context;
    std::optional<SecretAnswer> got;
    call(&context, [&got](const SecretAnswer &answer) { got = answer; });
    *answered = QTest::qWaitFor([&got] { return got.has_value(); }, keychainTimeoutMs);
    return got.value_or(SecretAnswer());
}

} // namespace

class tst_SecretStore final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void storeContract_data();
    void storeContract();
    void variableWinsOverTheKeychain();
    void keyComesFromTheKeychainWhenTheVariableIsUnset();
    void noDeliveryAfterTheCallerIsGone();

private:
    std::shared_ptr<SecretStore> store(const QString &kind);

    QTemporaryDir m_home;
    QProcess m_bus;
    QProcess m_keyring;
    std::shared_ptr<SecretStore> m_keychain;
    std::shared_ptr<MemorySecretStore> m_memory = std::make_shared<MemorySecretStore>();
};

void tst_SecretStore::initTestCase()
{
    QVERIFY(m_home.isValid());
    const QString dbusDaemon = QStandardPaths::findExecutable(QStringLiteral("dbus-daemon"));
    const QString keyringDaemon =
        QStandardPaths::findExecutable(QStringLiteral("gnome-keyring-daemon"));
    QVERIFY2(!dbusDaemon.isEmpty(), "dbus-daemon is required (Debian package dbus-daemon)");
    QVERIFY2(!keyringDaemon.isEmpty(),
             "gnome-keyring-daemon is required (Debian packages gnome-keyring libsecret-1-0)");

    // A private session bus on a socket in the temporary home.
    const QString socket = m_home.filePath(QStringLiteral("bus"));
    m_bus.setProgram(dbusDaemon);
    m_bus.setArguments({QStringLiteral("--session"), QStringLiteral("--nofork"),
                        QStringLiteral("--nopidfile"),
                        QStringLiteral("--address=unix:path=") + socket});
    m_bus.start();
    QVERIFY(m_bus.waitForStarted(5000));
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(socket), 5000);
    const QByteArray address = "unix:path=" + socket.toLocal8Bit();

    // Before any D-Bus or libsecret connection of this process exists.
    qputenv("DBUS_SESSION_BUS_ADDRESS", address);
    const QString runtimeDir = m_home.filePath(QStringLiteral("run"));
    QVERIFY(QDir().mkpath(runtimeDir));
    QFile::setPermissions(runtimeDir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("HOME"), m_home.path());
    env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.filePath(QStringLiteral("data")));
    env.insert(QStringLiteral("XDG_RUNTIME_DIR"), runtimeDir);
    env.insert(QStringLiteral("DBUS_SESSION_BUS_ADDRESS"), QString::fromLocal8Bit(address));
    m_keyring.setProcessEnvironment(env);
    m_keyring.setProgram(keyringDaemon);
    // --unlock reads the new login keyring's password from standard input.
    m_keyring.setArguments({QStringLiteral("--foreground"), QStringLiteral("--unlock"),
                            QStringLiteral("--components=secrets")});
    m_keyring.start();
    QVERIFY(m_keyring.waitForStarted(5000));
    m_keyring.write("test-password\n");
    m_keyring.closeWriteChannel();

    QDBusConnection bus = QDBusConnection::sessionBus();
    QVERIFY2(bus.isConnected(), qPrintable(bus.lastError().message()));
    QTRY_VERIFY_WITH_TIMEOUT(
        bus.interface()->isServiceRegistered(QStringLiteral("org.freedesktop.secrets")), 10000);
    m_keychain = osKeychain(QStringLiteral("agent-console-test"));
}

void tst_SecretStore::cleanupTestCase()
{
    for (QProcess *process : {&m_keyring, &m_bus}) {
        if (process->state() == QProcess::NotRunning)
            continue;
        process->terminate();
        if (!process->waitForFinished(5000))
            process->kill();
        process->waitForFinished(5000);
    }
}

std::shared_ptr<SecretStore> tst_SecretStore::store(const QString &kind)
{
    return kind == QLatin1String("keychain") ? m_keychain
                                             : std::static_pointer_cast<SecretStore>(m_memory);
}

void tst_SecretStore::storeContract_data()
{
    QTest::addColumn<QString>("kind");
    QTest::newRow("GNOME Keyring over D-Bus") << QStringLiteral("keychain");
    QTest::newRow("in-process") << QStringLiteral("memory");
}

void tst_SecretStore::storeContract()
{
    QFETCH(QString, kind);
    const std::shared_ptr<SecretStore> secrets = store(kind);
    const QString key = QStringLiteral("contract");
    bool answered = false;

    SecretAnswer answer = answerOf([&](QObject *c, SecretStore::Done d) {
        secrets->read(key, c, d);
    }, &answered);
    QVERIFY(answered);
    QCOMPARE(int(answer.status), int(SecretAnswer::Status::NotFound));

    answer = answerOf([&](QObject *c, SecretStore::Done d) {
        secrets->write(key, QStringLiteral("sk-contract-1"), c, d);
    }, &answered);
    QVERIFY(answered);
    QVERIFY2(answer.status == SecretAnswer::Status::Done, qPrintable(answer.problem));

    answer = answerOf([&](QObject *c, SecretStore::Done d) { secrets->read(key, c, d); }, &answered);
    QVERIFY(answered);
    QCOMPARE(int(answer.status), int(SecretAnswer::Status::Found));
    QCOMPARE(answer.secret, QStringLiteral("sk-contract-1"));

    // Replaced, not added beside.
    answer = answerOf([&](QObject *c, SecretStore::Done d) {
        secrets->write(key, QStringLiteral("sk-contract-2"), c, d);
    }, &answered);
    QVERIFY(answered);
    answer = answerOf([&](QObject *c, SecretStore::Done d) { secrets->read(key, c, d); }, &answered);
    QCOMPARE(answer.secret, QStringLiteral("sk-contract-2"));

    answer = answerOf([&](QObject *c, SecretStore::Done d) { secrets->remove(key, c, d); },
                   &answered);
    QVERIFY(answered);
    QVERIFY2(answer.status == SecretAnswer::Status::Done, qPrintable(answer.problem));
    answer = answerOf([&](QObject *c, SecretStore::Done d) { secrets->read(key, c, d); }, &answered);
    QCOMPARE(int(answer.status), int(SecretAnswer::Status::NotFound));
    // Removing what is not there is not a failure.
    answer = answerOf([&](QObject *c, SecretStore::Done d) { secrets->remove(key, c, d); },
                   &answered);
    QCOMPARE(int(answer.status), int(SecretAnswer::Status::Done));
}

void tst_SecretStore::variableWinsOverTheKeychain()
{
    bool answered = false;
    answerOf([&](QObject *c, SecretStore::Done d) {
        m_keychain->write(ApiKeySource::primaryKeychainKey(), QStringLiteral("sk-keychain"), c, d);
    }, &answered);
    QVERIFY(answered);
    qputenv("TST_SECRETSTORE_KEY", "sk-from-variable");
    ApiKeySource source(m_keychain);
    source.setVariable(QStringLiteral("TST_SECRETSTORE_KEY"));
    QSignalSpy finished(&source, &ApiKeySource::finished);
    source.lookup();
    QVERIFY(finished.wait(keychainTimeoutMs));
    QCOMPARE(finished.first().at(0).toString(), QStringLiteral("sk-from-variable"));
    QCOMPARE(finished.first().at(1).value<ApiKeySource::Origin>(),
             ApiKeySource::Origin::Environment);
    qunsetenv("TST_SECRETSTORE_KEY");
}

void tst_SecretStore::keyComesFromTheKeychainWhenTheVariableIsUnset()
{
    bool answered = false;
    answerOf([&](QObject *c, SecretStore::Done d) {
        m_keychain->write(ApiKeySource::primaryKeychainKey(), QStringLiteral(" sk-keychain \n"),
                          c, d);
    }, &answered);
    QVERIFY(answered);
    qunsetenv("TST_SECRETSTORE_KEY");
    ApiKeySource source(m_keychain);
    source.setVariable(QStringLiteral("TST_SECRETSTORE_KEY"));
    QSignalSpy finished(&source, &ApiKeySource::finished);
    source.lookup();
    QVERIFY(finished.wait(keychainTimeoutMs));
    QCOMPARE(finished.first().at(0).toString(), QStringLiteral("sk-keychain")); // trimmed
    QCOMPARE(finished.first().at(1).value<ApiKeySource::Origin>(),
             ApiKeySource::Origin::Keychain);
}

void tst_SecretStore::noDeliveryAfterTheCallerIsGone()
{
    for (const QString &kind : {QStringLiteral("keychain"), QStringLiteral("memory")}) {
        bool delivered = false;
        auto context = std::make_unique<QObject>();
        store(kind)->read(QStringLiteral("gone"), context.get(),
                          [&delivered](const SecretAnswer &) { delivered = true; });
        context.reset();
        // A later call of the same store answers; the first one never does.
        bool answered = false;
        answerOf([&](QObject *c, SecretStore::Done d) {
            store(kind)->read(QStringLiteral("gone"), c, d);
        }, &answered);
        QVERIFY(answered);
        QVERIFY2(!delivered, qPrintable(kind));
    }
}

QTEST_GUILESS_MAIN(tst_SecretStore)
#include "tst_secretstore.moc"
