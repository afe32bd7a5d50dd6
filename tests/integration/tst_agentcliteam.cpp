// agent-cli's isolations on a real team database (docs/TEAM.md; AGENT_CONSOLE_TEST_PG): a lead
// isolates and lifts with --isolate/--lift, anyone lists with --isolations, a staff role is
// refused in words with exit 2, and the options are checked before anything starts.
#include "clirun.h"
#include "teamsetup.h"
#include "testdatabases.h"

#include "core/ledger/postgresledger.h"
#include "core/resilience/circuitbreaker.h"
#include "core/team/isolations.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

class tst_AgentCliTeam final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void aLeadIsolatesListsAndLifts();
    void staffAreRefusedInWords();
    void optionsAreChecked_data();
    void optionsAreChecked();

private:
    CliRun run(const QStringList &arguments);
    QString urlAs(const QString &role) const;

    TestDatabases m_databases{QStringLiteral("isolation_cli")};
    QTemporaryDir m_dir;
    QString m_url;
    QString m_lead;
    QString m_staff;
};

CliRun tst_AgentCliTeam::run(const QStringList &arguments)
{
    QProcess process;
    process.start(QStringLiteral(AGENT_CLI_PATH),
                  QStringList{QStringLiteral("--data-dir"), m_dir.path()} + arguments);
    CliRun result;
    if (!process.waitForFinished(60000)) {
        process.kill();
        process.waitForFinished();
        return result;
    }
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    if (process.exitStatus() == QProcess::NormalExit)
        result.exitCode = process.exitCode();
    return result;
}

QString tst_AgentCliTeam::urlAs(const QString &role) const
{
    QUrl url(m_url);
    url.setUserName(role);
    return url.toString();
}

void tst_AgentCliTeam::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QString error;
    m_url = m_databases.create(&error);
    QVERIFY2(!m_url.isEmpty(), qPrintable(error));
    const qint64 pid = QCoreApplication::applicationPid();
    m_lead = QStringLiteral("isolation_cli_lead_%1").arg(pid);
    m_staff = QStringLiteral("isolation_cli_staff_%1").arg(pid);
    {
        // The owner's console migrates the team database (and makes the group roles).
        CircuitBreakerRegistry breakers;
        Isolations owner;
        QVERIFY(
            owner.start(m_url, QStringLiteral("DBA"), &breakers, [] { return QStringList(); }));
        QTRY_COMPARE_WITH_TIMEOUT(owner.connection(), Isolations::Connection::Connected, 20000);
    }
    const auto where = PostgresLocation::fromUrl(m_url, &error);
    QVERIFY(where);
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"),
                                                    QStringLiteral("cli-admin"));
        db.setHostName(where->host);
        db.setPort(where->port);
        db.setUserName(where->userName);
        db.setDatabaseName(where->database);
        QVERIFY2(db.open(), qPrintable(db.lastError().text()));
        QSqlQuery query(db);
        for (const QString &role : {m_lead, m_staff})
            query.exec(QStringLiteral("DROP ROLE IF EXISTS %1").arg(role));
        // A lead is an agent too: in both groups (docs/TEAM.md, setup B).
        QVERIFY(query.exec(QStringLiteral("CREATE ROLE %1 LOGIN IN ROLE agentconsole_staff, "
                                          "agentconsole_lead")
                               .arg(m_lead)));
        QVERIFY(query.exec(
            QStringLiteral("CREATE ROLE %1 LOGIN IN ROLE agentconsole_staff").arg(m_staff)));
    }
    // The rest of the first start (the ledger, the journal) and who each role is.
    QVERIFY2(
        Testing::setUpTeamDatabase(m_url,
                                   {{m_lead, QStringLiteral("t-acme"), QStringLiteral("u-1002")},
                                    {m_staff, QStringLiteral("t-acme"), QStringLiteral("u-1001")}},
                                   &error),
        qPrintable(error));
}

void tst_AgentCliTeam::cleanupTestCase()
{
    {
        // Before the database goes: this connection is to it.
        QSqlQuery query(QSqlDatabase::database(QStringLiteral("cli-admin")));
        for (const QString &role : {m_lead, m_staff})
            QVERIFY2(query.exec(QStringLiteral("DROP ROLE IF EXISTS %1").arg(role)),
                     qPrintable(query.lastError().text()));
        QSqlDatabase::database(QStringLiteral("cli-admin")).close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("cli-admin"));
    m_databases.dropAll();
}

void tst_AgentCliTeam::aLeadIsolatesListsAndLifts()
{
    const QStringList lead{QStringLiteral("--team"), urlAs(m_lead), QStringLiteral("--user"),
                           QStringLiteral("u-1002")};
    const QStringList staff{QStringLiteral("--team"), urlAs(m_staff)};
    CliRun isolated = run(lead
                          + QStringList{QStringLiteral("--isolate"), QStringLiteral("logistics"),
                                        QStringLiteral("--reason"),
                                        QStringLiteral("logistics vendor outage")});
    QCOMPARE(isolated.exitCode, 0);
    QVERIFY2(isolated.out.contains("Done: every console of the team now refuses logistics."),
             isolated.out + isolated.err);

    const CliRun listed = run(staff + QStringList{QStringLiteral("--isolations")});
    QCOMPARE(listed.exitCode, 0);
    QVERIFY2(listed.out.startsWith("logistics: Isolated by the shift lead (staff u-1002) at "),
             listed.out + listed.err);
    QVERIFY(listed.out.contains(": logistics vendor outage\n"));

    const CliRun asJson = run(
        staff + QStringList{QStringLiteral("--isolations"), QStringLiteral("--json")});
    QCOMPARE(asJson.exitCode, 0);
    const QJsonArray rows = QJsonDocument::fromJson(asJson.out)
                                .object()
                                .value(QLatin1String("isolations"))
                                .toArray();
    QCOMPARE(rows.size(), 1);
    QCOMPARE(rows.at(0)[QLatin1String("leadRole")].toString(), m_lead);
    QCOMPARE(rows.at(0)[QLatin1String("leadStaffId")].toString(), QStringLiteral("u-1002"));

    const CliRun lifted = run(
        lead + QStringList{QStringLiteral("--lift"), QStringLiteral("logistics")});
    QCOMPARE(lifted.exitCode, 0);
    QVERIFY2(lifted.out.contains("Done: logistics is restored for every console of the team."),
             lifted.out + lifted.err);
    const CliRun none = run(staff + QStringList{QStringLiteral("--isolations")});
    QCOMPARE(none.exitCode, 0);
    QVERIFY(none.out.isEmpty());
    QVERIFY(none.err.contains("no dependency is isolated"));
    const CliRun again = run(lead
                             + QStringList{QStringLiteral("--lift"), QStringLiteral("logistics")});
    QCOMPARE(again.exitCode, 2);
    QVERIFY2(again.err.contains("logistics is not isolated."), again.err);
}

void tst_AgentCliTeam::staffAreRefusedInWords()
{
    const QStringList staff{QStringLiteral("--team"), urlAs(m_staff)};
    const CliRun isolate = run(staff
                               + QStringList{QStringLiteral("--isolate"),
                                             QStringLiteral("logistics"),
                                             QStringLiteral("--reason"), QStringLiteral("x")});
    QCOMPARE(isolate.exitCode, 2);
    QVERIFY2(isolate.err.contains("agent-cli: Only a shift lead can isolate or lift a "
                                  "dependency: your database role is not a member of "
                                  "agentconsole_lead. Nothing was changed."),
             isolate.err);
    const CliRun lift = run(staff
                            + QStringList{QStringLiteral("--lift"), QStringLiteral("logistics")});
    QCOMPARE(lift.exitCode, 2);
    QVERIFY(lift.err.contains("Only a shift lead"));
    const CliRun unknown = run(
        QStringList{QStringLiteral("--team"), urlAs(m_lead), QStringLiteral("--user"),
                    QStringLiteral("u-1002"), QStringLiteral("--isolate"),
                    QStringLiteral("warehouse"), QStringLiteral("--reason"), QStringLiteral("x")});
    QCOMPARE(unknown.exitCode, 2);
    QVERIFY2(unknown.err.contains("warehouse is not a dependency this console knows. Known: "),
             unknown.err);
    QVERIFY(unknown.err.contains("logistics"));
}

void tst_AgentCliTeam::optionsAreChecked_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("said");
    QTest::newRow("no team") << QStringList{QStringLiteral("--isolations")} << "need --team URL";
    QTest::newRow("no reason") << QStringList{QStringLiteral("--team"),
                                              QStringLiteral("postgresql://x@/db"),
                                              QStringLiteral("--isolate"),
                                              QStringLiteral("logistics")}
                               << "--isolate needs --reason TEXT";
    QTest::newRow("bad until")
        << QStringList{QStringLiteral("--team"),    QStringLiteral("postgresql://x@/db"),
                       QStringLiteral("--isolate"), QStringLiteral("logistics"),
                       QStringLiteral("--reason"),  QStringLiteral("r"),
                       QStringLiteral("--until"),   QStringLiteral("soon")}
        << "--until: expected an ISO 8601 time";
    QTest::newRow("two at once") << QStringList{QStringLiteral("--team"),
                                                QStringLiteral("postgresql://x@/db"),
                                                QStringLiteral("--isolations"),
                                                QStringLiteral("--lift"),
                                                QStringLiteral("logistics")}
                                 << "give one of --isolate, --lift and --isolations";
    QTest::newRow("password in URL")
        << QStringList{QStringLiteral("--team"), QStringLiteral("postgresql://x:pw@/db"),
                       QStringLiteral("--isolations")}
        << "--team: leave the password out of the address";
}

void tst_AgentCliTeam::optionsAreChecked()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, said);
    const CliRun refused = run(arguments);
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains(said.toUtf8()), refused.err);
}

QTEST_GUILESS_MAIN(tst_AgentCliTeam)
#include "tst_agentcliteam.moc"
