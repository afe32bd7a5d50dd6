// The team database's password (issue #43 §2, docs/TEAM.md) comes from ~/.pgpass (PGPASSFILE)
// or the OS keychain, never from the address, and never reaches the output or the local log; a
// refused password is told as refused, not as an outage. On a cluster of this suite's own whose
// agent role signs in with a password (scram-sha-256).

#include "clirun.h"
#include "core/console/agentruntime.h"
#include "core/console/runtimemonitor.h"
#include "core/console/runtimestartup.h"
#include "core/llm/secretstore.h"
#include "runtimestart.h"
#include "throwawaycluster.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QUrlQuery>

#include <memory>
#include <unistd.h>

using namespace AgentConsole;
using Testing::CliRun;

namespace {

const QString kRole = QStringLiteral("pwagent");
const QString kPassword = QStringLiteral("s3cret-Tea-Pot");

} // namespace

class tst_TeamPassword : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void aPgpassFileSignsTheConsoleIn();
    void aMissingPasswordIsToldAsRefused();
    void theKeychainSignsTheConsoleIn();

private:
    CliRun run(const QStringList &arguments, const QProcessEnvironment &environment);
    QString teamUrl() const;

    Testing::ThrowawayCluster m_cluster;
    QTemporaryDir m_dir;
    QString m_socketDir;
};

void tst_TeamPassword::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY(m_cluster.start());
    const QUrlQuery query{QUrl(m_cluster.url())};
    m_socketDir = query.queryItemValue(QStringLiteral("host"));
    QVERIFY(!m_socketDir.isEmpty());
    // The agent's role signs in with a password over the socket; the superuser stays trusted.
    {
        QSqlDatabase admin = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"),
                                                       QStringLiteral("admin"));
        admin.setHostName(m_socketDir);
        admin.setPort(query.queryItemValue(QStringLiteral("port")).toInt());
        admin.setUserName(QStringLiteral("postgres"));
        admin.setDatabaseName(QStringLiteral("postgres"));
        QVERIFY2(admin.open(), qPrintable(admin.lastError().text()));
        QSqlQuery sql(admin);
        QVERIFY(sql.exec(QStringLiteral("CREATE ROLE %1 LOGIN CREATEROLE PASSWORD '%2'")
                             .arg(kRole, kPassword)));
        QVERIFY(sql.exec(QStringLiteral("CREATE DATABASE team OWNER %1").arg(kRole)));
        QVERIFY(sql.exec(QStringLiteral("SELECT setting FROM pg_settings WHERE name = "
                                        "'hba_file'")));
        QVERIFY(sql.next());
        QFile hba(sql.value(0).toString());
        QVERIFY(hba.open(QIODevice::ReadOnly));
        const QByteArray rules = hba.readAll();
        hba.close();
        QVERIFY(hba.open(QIODevice::WriteOnly | QIODevice::Truncate));
        hba.write("local all " + kRole.toUtf8() + " scram-sha-256\n" + rules);
        hba.close();
        QVERIFY(sql.exec(QStringLiteral("SELECT pg_reload_conf()")));
        sql.finish();
        admin.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("admin"));
}

void tst_TeamPassword::cleanupTestCase()
{
    m_cluster.stop();
}

QString tst_TeamPassword::teamUrl() const
{
    return QStringLiteral("postgresql://%1@/team?host=%2&port=5432").arg(kRole, m_socketDir);
}

CliRun tst_TeamPassword::run(const QStringList &arguments, const QProcessEnvironment &environment)
{
    QProcess process;
    process.setProcessEnvironment(environment);
    process.setChildProcessModifier([] { ::setsid(); });
    process.start(QStringLiteral(AGENT_CLI_PATH),
                  QStringList{QStringLiteral("--data-dir"), m_dir.filePath(QStringLiteral("desk"))}
                      + arguments);
    if (!process.waitForStarted(10'000))
        qFatal("agent-cli did not start");
    process.closeWriteChannel();
    if (!process.waitForFinished(60'000)) {
        process.kill();
        qFatal("agent-cli did not finish");
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput(), process.readAllStandardError()};
}

void tst_TeamPassword::aPgpassFileSignsTheConsoleIn()
{
    const QString pgpass = m_dir.filePath(QStringLiteral("pgpass"));
    QFile file(pgpass);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QStringLiteral("%1:5432:*:%2:%3\n").arg(m_socketDir, kRole, kPassword).toUtf8());
    file.close();
    QVERIFY(file.setPermissions(QFile::ReadOwner | QFile::WriteOwner)); // libpq insists
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("PGPASSFILE"), pgpass);
    environment.insert(QStringLiteral("HOME"), m_dir.path());
    const CliRun answered = run({QStringLiteral("--team"), teamUrl(), QStringLiteral("--json"),
                                 QStringLiteral("Where is order A1001?")},
                                environment);
    QVERIFY2(answered.exitCode == 0, answered.err.constData());
    QVERIFY(answered.turn().value(u"answer").toString().contains(QLatin1String("SF10010001")));
    QVERIFY(!answered.out.contains(kPassword.toUtf8()));
    QVERIFY(!answered.err.contains(kPassword.toUtf8()));
    // Nor in the local log of the data directory.
    QDir logs(m_dir.filePath(QStringLiteral("desk")));
    for (const QFileInfo &entry : logs.entryInfoList(QDir::Files)) {
        QFile log(entry.absoluteFilePath());
        QVERIFY(log.open(QIODevice::ReadOnly));
        QVERIFY2(!log.readAll().contains(kPassword.toUtf8()), qPrintable(entry.fileName()));
    }
}

void tst_TeamPassword::aMissingPasswordIsToldAsRefused()
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("HOME"), m_dir.path()); // no ~/.pgpass there
    environment.insert(QStringLiteral("PGPASSFILE"), m_dir.filePath(QStringLiteral("none")));
    const CliRun refused = run({QStringLiteral("--team"), teamUrl(), QStringLiteral("--json"),
                                QStringLiteral("Where is order A1001?")},
                               environment);
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains("refused the sign-in"), refused.err.constData());
    QVERIFY(!refused.err.contains("Cannot reach"));
}

void tst_TeamPassword::theKeychainSignsTheConsoleIn()
{
    QTemporaryDir dataDir;
    RuntimeOptions options;
    options.dataDirectory = dataDir.path();
    options.teamSpec = teamUrl();
    auto keychain = std::make_shared<MemorySecretStore>();
    const QString database = QStringLiteral("%1@%2:5432/team").arg(kRole, m_socketDir);
    bool stored = false;
    QObject context;
    keychain->write(teamKeychainKey(database), kPassword, &context,
                    [&stored](const SecretAnswer &) { stored = true; });
    QTRY_VERIFY(stored);
    options.secrets = keychain;
    qputenv("PGPASSFILE", m_dir.filePath(QStringLiteral("none")).toUtf8());
    AgentRuntime runtime(options);
    QVERIFY(Testing::startAndWait(runtime));
    QCOMPARE(runtime.monitor()->team().database, database);
    QVERIFY(!runtime.monitor()->team().alone);
}

QTEST_GUILESS_MAIN(tst_TeamPassword)
#include "tst_teampassword.moc"
