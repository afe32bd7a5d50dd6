// agent-cli as one of a team (issue #43 §2, §3): `--team postgresql://…` puts the ledger, the
// turn journal and the audit trail on the team's PostgreSQL database, so that what one desk did
// is there at another; an address with a password is refused without repeating it; a database
// out of reach stops the start and says how to work alone, and working alone is marked in the
// export. Real processes, a real cluster (AGENT_CONSOLE_TEST_PG; fails without it, as a missing
// required server must).

#include "clirun.h"
#include "core/ledger/postgresledger.h"
#include "testdatabases.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <unistd.h>

using namespace AgentConsole;
using Testing::CliRun;

class tst_TeamConsole : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aPasswordInTheAddressIsRefusedUnrepeated();
    void theTeamHoldsTheLedgerAndTheLedgerOptionIsRefused();
    void aDatabaseOutOfReachStopsOrIsWorkedWithoutAlone();
    void whatOneDeskDidIsThereAtAnother();
    void anInterruptedRequestIsResumedAtAnotherDesk();

private:
    // agent-cli on the desk `desk` (its own data directory) with `arguments`.
    CliRun run(const QString &desk, const QStringList &arguments);
    QStringList team() const { return {QStringLiteral("--team"), m_url}; }
    QSqlQuery adminQuery(const QString &sql);

    std::unique_ptr<QTemporaryDir> m_dir;
    Testing::TestDatabases m_databases{QStringLiteral("team_console_test")};
    QString m_url;
    QString m_admin;
};

void tst_TeamConsole::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    QString error;
    m_url = m_databases.create(&error);
    if (m_url.isEmpty())
        QFAIL(qPrintable(error));
}

void tst_TeamConsole::cleanup()
{
    if (!m_admin.isEmpty()) {
        QSqlDatabase::database(m_admin, false).close();
        QSqlDatabase::removeDatabase(m_admin);
        m_admin.clear();
    }
    m_databases.dropAll();
    m_dir.reset();
}

CliRun tst_TeamConsole::run(const QString &desk, const QStringList &arguments)
{
    QProcess process;
    process.setChildProcessModifier([] { ::setsid(); });
    process.start(QStringLiteral(AGENT_CLI_PATH),
                  QStringList{QStringLiteral("--data-dir"), m_dir->filePath(desk)} + arguments);
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

QSqlQuery tst_TeamConsole::adminQuery(const QString &sql)
{
    if (m_admin.isEmpty()) {
        m_admin = QStringLiteral("team-console-admin");
        QString error;
        const std::optional<PostgresLocation> location = PostgresLocation::fromUrl(m_url, &error);
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), m_admin);
        db.setHostName(location->host);
        db.setPort(location->port);
        db.setUserName(location->userName);
        db.setDatabaseName(location->database);
        if (!db.open())
            qWarning().noquote() << db.lastError().text();
    }
    QSqlQuery query(QSqlDatabase::database(m_admin, false));
    if (!query.exec(sql))
        qWarning().noquote() << sql << query.lastError().text();
    return query;
}

void tst_TeamConsole::aPasswordInTheAddressIsRefusedUnrepeated()
{
    for (const QString &url :
         {QStringLiteral("postgresql://agent:hunter2@127.0.0.1:5432/team"),
          QStringLiteral("postgresql://agent@127.0.0.1/team?password=hunter2")}) {
        const CliRun refused = run(QStringLiteral("desk"),
                                   {QStringLiteral("--team"), url,
                                    QStringLiteral("Where is A1001?")});
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains("leave the password out"), refused.err.constData());
        QVERIFY(refused.err.contains("~/.pgpass"));
        QVERIFY(!refused.err.contains("hunter2"));
        QVERIFY(!refused.out.contains("hunter2"));
    }
    const CliRun notPostgres = run(QStringLiteral("desk"),
                                   {QStringLiteral("--team"), QStringLiteral("sqlite:/tmp/x"),
                                    QStringLiteral("Where is A1001?")});
    QCOMPARE(notPostgres.exitCode, 2);
    QVERIFY(notPostgres.err.contains("postgresql://user@host:port/database"));
}

void tst_TeamConsole::theTeamHoldsTheLedgerAndTheLedgerOptionIsRefused()
{
    const CliRun both = run(QStringLiteral("desk"),
                            team()
                                + QStringList{QStringLiteral("--ledger"), QStringLiteral("sqlite"),
                                              QStringLiteral("Where is A1001?")});
    QCOMPARE(both.exitCode, 2);
    QVERIFY2(both.err.contains("leave --ledger out"), both.err.constData());
}

void tst_TeamConsole::aDatabaseOutOfReachStopsOrIsWorkedWithoutAlone()
{
    QTcpServer probe; // a loopback port nobody listens on once it is closed
    QVERIFY(probe.listen(QHostAddress::LocalHost));
    const QString nowhere = QStringLiteral("postgresql://agent@127.0.0.1:%1/team")
                                .arg(probe.serverPort());
    probe.close();
    const CliRun stopped = run(QStringLiteral("desk"),
                               {QStringLiteral("--team"), nowhere, QStringLiteral("--json"),
                                QStringLiteral("Where is order A1001?")});
    QCOMPARE(stopped.exitCode, 2);
    QVERIFY2(stopped.err.contains("Cannot reach the team's database agent@127.0.0.1"), stopped.err.constData());
    QVERIFY(stopped.err.contains("--alone-if-unreachable"));
    QVERIFY(stopped.out.isEmpty());

    const QString exported = m_dir->filePath(QStringLiteral("alone.json"));
    const CliRun alone = run(QStringLiteral("desk"),
                             {QStringLiteral("--team"), nowhere,
                              QStringLiteral("--alone-if-unreachable"), QStringLiteral("--json"),
                              QStringLiteral("--export"), exported,
                              QStringLiteral("Where is order A1001?")});
    QCOMPARE(alone.exitCode, 0);
    QVERIFY(alone.turn().value(u"answer").toString().contains(QLatin1String("SF10010001")));
    QFile file(exported);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
    QCOMPARE(root.value(u"environment").toObject().value(u"store").toString(),
             QStringLiteral("alone"));
    // Its turns are on this desk, where a desk of its own keeps them.
    QVERIFY(QFile::exists(m_dir->filePath(QStringLiteral("desk/turns.sqlite"))));
}

// The ledger, the journal and the audit trail of one desk are read at another.
void tst_TeamConsole::whatOneDeskDidIsThereAtAnother()
{
    const QString exported = m_dir->filePath(QStringLiteral("team.json"));
    const CliRun wrote = run(
        QStringLiteral("desk-a"),
        team()
            + QStringList{QStringLiteral("--json"), QStringLiteral("--yes"),
                          QStringLiteral("--conversation"), QStringLiteral("c-team"),
                          QStringLiteral("--request-id"), QStringLiteral("r-1"),
                          QStringLiteral("--export"), exported,
                          QStringLiteral("Create an after-sales ticket for order A1001: the mug "
                                         "arrived broken")});
    QCOMPARE(wrote.exitCode, 0);
    QFile file(exported);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray exportText = file.readAll();
    QCOMPARE(QJsonDocument::fromJson(exportText)
                 .object()
                 .value(u"environment")
                 .toObject()
                 .value(u"store")
                 .toString(),
             QStringLiteral("team"));
    QVERIFY(!exportText.contains("postgresql://")); // never the database's address
    // Its turn is in the team's journal, its claim in the team's ledger; none on the desk.
    QSqlQuery rows = adminQuery(QStringLiteral("SELECT COUNT(*) FROM turn_checkpoints WHERE "
                                               "owner = 't-acme/u-1001' AND conversation_id = "
                                               "'c-team'"));
    QVERIFY(rows.next());
    QCOMPARE(rows.value(0).toInt(), 1);
    QSqlQuery claims = adminQuery(QStringLiteral("SELECT status FROM idempotency_ledger"));
    QVERIFY(claims.next());
    QCOMPARE(claims.value(0).toString(), QStringLiteral("SUCCEEDED"));
    QVERIFY(!QFile::exists(m_dir->filePath(QStringLiteral("desk-a/turns.sqlite"))));
    QVERIFY(!QFile::exists(m_dir->filePath(QStringLiteral("desk-a/ledger.sqlite"))));

    // At another desk: the same request asked again finds the ticket made, and makes none.
    const CliRun replay = run(
        QStringLiteral("desk-b"),
        team()
            + QStringList{QStringLiteral("--json"), QStringLiteral("--yes"),
                          QStringLiteral("--conversation"), QStringLiteral("c-team"),
                          QStringLiteral("--request-id"), QStringLiteral("r-1"),
                          QStringLiteral("Create an after-sales ticket for order A1001: the mug "
                                         "arrived broken")});
    QCOMPARE(replay.exitCode, 0);
    QCOMPARE(replay.turn().value(u"counters").toObject().value(u"idempotency_hit_count").toInt(),
             1);
    // And the audit trail read there names the write of desk A.
    const CliRun audit = run(
        QStringLiteral("desk-b"),
        team() + QStringList{QStringLiteral("--audit"), QStringLiteral("--json")});
    QCOMPARE(audit.exitCode, 0);
    const QJsonArray trail = QJsonDocument::fromJson(audit.out).object().value(u"audit").toArray();
    QVERIFY2(trail.size() >= 2, audit.out.constData());
    QCOMPARE(trail.last().toObject().value(u"event").toString(), QStringLiteral("CONFIRMED"));
    QCOMPARE(trail.last().toObject().value(u"requestId").toString(), QStringLiteral("r-1"));
}

// Issue #43 §3: a request interrupted at one desk is carried on at another by the same agent.
void tst_TeamConsole::anInterruptedRequestIsResumedAtAnotherDesk()
{
    QProcess killed;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("AGENT_CONSOLE_KILL_AT"),
                       QStringLiteral("checkpoint-PLANNED"));
    killed.setProcessEnvironment(environment);
    killed.start(
        QStringLiteral(AGENT_CLI_PATH),
        QStringList{QStringLiteral("--data-dir"), m_dir->filePath(QStringLiteral("desk-a"))}
            + team()
            + QStringList{QStringLiteral("--json"), QStringLiteral("--request-id"),
                          QStringLiteral("r-held"), QStringLiteral("Where is order A1001?")});
    QByteArray err;
    QVERIFY(QTest::qWaitFor(
        [&] { return (err += killed.readAllStandardError()).contains("kill point"); }, 30'000));
    killed.kill();
    QVERIFY(killed.waitForFinished(10'000));

    const CliRun resumed = run(
        QStringLiteral("desk-b"),
        team() + QStringList{QStringLiteral("--json"), QStringLiteral("--resume")});
    QCOMPARE(resumed.exitCode, 0);
    QCOMPARE(resumed.turns().size(), 1);
    const QJsonObject turn = resumed.turn();
    QCOMPARE(turn.value(u"requestId").toString(), QStringLiteral("r-held"));
    QCOMPARE(turn.value(u"status").toString(), QStringLiteral("completed"));
    QVERIFY(turn.value(u"answer").toString().contains(QLatin1String("SF10010001")));
    // Nothing is left to resume, at either desk.
    for (const QString &desk : {QStringLiteral("desk-a"), QStringLiteral("desk-b")}) {
        const CliRun again = run(
            desk, team() + QStringList{QStringLiteral("--json"), QStringLiteral("--resume")});
        QCOMPARE(again.exitCode, 0);
        QVERIFY(again.turns().isEmpty());
    }
}

QTEST_GUILESS_MAIN(tst_TeamConsole)
#include "tst_teamconsole.moc"
