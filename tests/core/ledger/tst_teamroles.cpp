// A team that gives each agent a database role of their own (issue #43 §3, docs/TEAM.md): the
// row-level security the migrations ship keeps every role to its own conversations and to its
// tenant's ledger and audit trail, whatever SQL it sends on its own connection; a lead's role
// reads its tenant's conversations and changes none; a console started as another agent than
// its role is refused. Needs AGENT_CONSOLE_TEST_PG (fails without it, as a missing required
// server must); the roles it makes are its own (named by its pid) and dropped at the end.

#include "core/ledger/postgresledger.h"
#include "core/ledger/turnjournal.h"
#include "testdatabases.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTest>

#include <memory>

using namespace AgentConsole;

namespace {

template <typename T> T await(QFuture<T> future)
{
    future.waitForFinished(); // the journal's own database thread; nothing else waits here
    return future.result();
}

JournalEntry turn(const QString &owner, const QString &conversationId, const QString &words)
{
    JournalEntry entry;
    entry.owner = owner;
    entry.conversationId = conversationId;
    entry.requestId = QStringLiteral("r-1");
    entry.stage = QStringLiteral("PLANNED");
    entry.resumable = true;
    entry.state = QJsonObject{
        {QStringLiteral("conversation"),
         QJsonArray{QJsonObject{{QStringLiteral("role"), 1}, {QStringLiteral("content"), words}}}},
        {QStringLiteral("turnStart"), 0}};
    entry.title = words;
    entry.searchText = words;
    return entry;
}

} // namespace

class tst_TeamRoles : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void eachRoleReachesOnlyWhatRowSecurityAllows();
    void aConsoleStartedAsAnotherAgentIsRefused();

private:
    QString role(const QString &name) const
    {
        return QStringLiteral("%1_%2").arg(name).arg(QCoreApplication::applicationPid());
    }
    // A connection of `roleName`'s own, as its psql would be.
    QSqlDatabase connectAs(const QString &roleName);
    bool exec(const QString &roleName, const QString &sql, int *rows = nullptr);
    int count(const QString &roleName, const QString &sql);
    PostgresLocation locationAs(const QString &roleName) const;

    Testing::TestDatabases m_databases{QStringLiteral("team_roles_test")};
    std::optional<PostgresLocation> m_location;
    QStringList m_connections;
};

PostgresLocation tst_TeamRoles::locationAs(const QString &roleName) const
{
    PostgresLocation location = *m_location;
    location.userName = roleName;
    location.password.clear();
    return location;
}

QSqlDatabase tst_TeamRoles::connectAs(const QString &roleName)
{
    const QString name = QStringLiteral("as-") + roleName;
    if (!QSqlDatabase::contains(name)) {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), name);
        db.setHostName(m_location->host);
        db.setPort(m_location->port);
        db.setUserName(roleName);
        db.setDatabaseName(m_location->database);
        if (!db.open())
            qWarning().noquote() << roleName << db.lastError().text();
        m_connections.append(name);
    }
    return QSqlDatabase::database(name, false);
}

bool tst_TeamRoles::exec(const QString &roleName, const QString &sql, int *rows)
{
    QSqlQuery query(connectAs(roleName));
    if (!query.exec(sql))
        return false;
    if (rows)
        *rows = query.numRowsAffected();
    return true;
}

int tst_TeamRoles::count(const QString &roleName, const QString &sql)
{
    QSqlQuery query(connectAs(roleName));
    if (!query.exec(sql) || !query.next())
        return -1;
    return query.value(0).toInt();
}

void tst_TeamRoles::initTestCase()
{
    QString error;
    const QString url = m_databases.create(&error);
    if (url.isEmpty())
        QFAIL(qPrintable(error));
    m_location = PostgresLocation::fromUrl(url, &error);
    QVERIFY2(m_location, qPrintable(error));
    // The setup role (the cluster's superuser here) starts a console first: the migrations make
    // the tables, the group roles and the policies.
    {
        PostgresLedger ledger(*m_location, LedgerOptions{});
        QVERIFY(await(ledger.open()).ready());
        TurnJournal journal(*m_location, QStringLiteral("t-1/setup"),
                            {QStringLiteral("setup"), QStringLiteral("setup")});
        const JournalOpenResult opened = await(journal.open());
        QVERIFY2(opened.ok, qPrintable(opened.message + opened.detail));
    }
    const QString admin = m_location->userName.isEmpty() ? QStringLiteral("postgres")
                                                         : m_location->userName;
    // A database administrator's setup (docs/TEAM.md): a role per agent, and who each one is.
    const QList<std::pair<QString, QString>> members{
        {role(QStringLiteral("agent_a")), "t-1/agent-a"},
        {role(QStringLiteral("agent_b")), "t-1/agent-b"},
        {role(QStringLiteral("agent_x")), "t-2/agent-x"},
        {role(QStringLiteral("lead_l")), "t-1/lead-l"}};
    for (const auto &[name, agent] : members) {
        QVERIFY(exec(admin, QStringLiteral("DROP ROLE IF EXISTS %1").arg(name)));
        QVERIFY(exec(admin,
                     QStringLiteral("CREATE ROLE %1 LOGIN IN ROLE agentconsole_staff%2")
                         .arg(name,
                              name.startsWith(QLatin1String("lead"))
                                  ? QStringLiteral(", agentconsole_lead")
                                  : QString())));
        QVERIFY(exec(admin,
                     QStringLiteral("INSERT INTO team_members VALUES ('%1', '%2', '%3')")
                         .arg(name, agent.section(QLatin1Char('/'), 0, 0),
                              agent.section(QLatin1Char('/'), 1))));
    }
}

void tst_TeamRoles::cleanupTestCase()
{
    for (const QString &name : std::as_const(m_connections)) {
        QSqlDatabase::database(name, false).close();
        QSqlDatabase::removeDatabase(name);
    }
    m_connections.clear();
    m_databases.dropAll();
    QSqlDatabase admin = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"),
                                                   QStringLiteral("drop"));
    admin.setHostName(m_location->host);
    admin.setPort(m_location->port);
    admin.setUserName(m_location->userName);
    admin.setDatabaseName(QStringLiteral("postgres"));
    if (admin.open()) {
        for (const char *name : {"agent_a", "agent_b", "agent_x", "lead_l"})
            QSqlQuery(admin).exec(
                QStringLiteral("DROP ROLE IF EXISTS %1").arg(role(QLatin1String(name))));
    }
    admin.close();
    admin = QSqlDatabase();
    QSqlDatabase::removeDatabase(QStringLiteral("drop"));
}

void tst_TeamRoles::eachRoleReachesOnlyWhatRowSecurityAllows()
{
    const QString a = role(QStringLiteral("agent_a"));
    const QString b = role(QStringLiteral("agent_b"));
    const QString x = role(QStringLiteral("agent_x"));
    const QString lead = role(QStringLiteral("lead_l"));
    // Agent A's and agent X's consoles, each on its own role, save a turn and write.
    {
        TurnJournal journal(locationAs(a), QStringLiteral("t-1/agent-a"),
                            {QStringLiteral("a"), QStringLiteral("desk a")});
        const JournalOpenResult opened = await(journal.open());
        QVERIFY2(opened.ok, qPrintable(opened.message + opened.detail));
        const JournalWrite saved = await(journal.save(
            turn(QStringLiteral("t-1/agent-a"), QStringLiteral("c-a"), QStringLiteral("Li Wei"))));
        QVERIFY2(saved.ok, qPrintable(saved.detail));
        QVERIFY(await(journal.appendToolResult(QStringLiteral("c-a"), QStringLiteral("r-1"), 0,
                                               {{QStringLiteral("secret"), true}}))
                    .ok);
    }
    QVERIFY(exec(a,
                 QStringLiteral("INSERT INTO idempotency_ledger (idempotency_key, tool_name, "
                                "request_hash, status, created_at, updated_at, owner) VALUES "
                                "('t-1:c-a:r-1:createTicket:0', 'createTicket', 'h', "
                                "'SUCCEEDED', now(), now(), 'desk-a')")));
    QVERIFY(exec(a,
                 QStringLiteral("INSERT INTO audit_trail (event, staff_id, tenant_id, "
                                "conversation_id, request_id, operation_id, tool_name, "
                                "idempotency_key, arguments_json) VALUES ('CONFIRMED', "
                                "'agent-a', 't-1', 'c-a', 'r-1', 'op', 'createTicket', 'k', "
                                "'{}')")));
    QVERIFY(exec(x,
                 QStringLiteral("INSERT INTO idempotency_ledger (idempotency_key, tool_name, "
                                "request_hash, status, created_at, updated_at, owner) VALUES "
                                "('t-2:c-x:r-1:createTicket:0', 'createTicket', 'h', "
                                "'SUCCEEDED', now(), now(), 'desk-x')")));

    int refused = 0;
    int rows = -1;
    const auto none = [&](const QString &who, const QString &sql) {
        ++refused;
        return count(who, sql) == 0;
    };
    const auto changesNothing = [&](const QString &who, const QString &sql) {
        ++refused;
        return exec(who, sql, &rows) && rows == 0;
    };
    const auto isRefused = [&](const QString &who, const QString &sql) {
        ++refused;
        return !exec(who, sql);
    };
    for (const QString &intruder : {b, x}) {
        // Reading agent A's conversation, its parts and results, by any statement.
        QVERIFY(none(intruder, QStringLiteral("SELECT COUNT(*) FROM turn_checkpoints")));
        QVERIFY(none(intruder,
                     QStringLiteral("SELECT COUNT(*) FROM turn_checkpoints WHERE owner "
                                    "= 't-1/agent-a'")));
        QVERIFY(none(intruder, QStringLiteral("SELECT COUNT(*) FROM conversation_segments")));
        QVERIFY(none(intruder, QStringLiteral("SELECT COUNT(*) FROM turn_tool_results")));
        // Taking its turn over, dismissing it, deleting it.
        QVERIFY(changesNothing(intruder,
                               QStringLiteral("UPDATE turn_checkpoints SET desk = "
                                              "'mine' WHERE owner = 't-1/agent-a'")));
        QVERIFY(changesNothing(intruder,
                               QStringLiteral("UPDATE turn_checkpoints SET resumable = "
                                              "0")));
        QVERIFY(changesNothing(intruder, QStringLiteral("DELETE FROM turn_checkpoints")));
        QVERIFY(changesNothing(intruder, QStringLiteral("DELETE FROM conversation_segments")));
        // Writing as agent A.
        QVERIFY(isRefused(intruder,
                          QStringLiteral("INSERT INTO turn_checkpoints (owner, conversation_id, "
                                         "request_id, stage, resumable, state_json, "
                                         "counters_json, created_at, updated_at) VALUES "
                                         "('t-1/agent-a', 'c-a', 'r-2', 'PLANNED', 1, '{}', "
                                         "'{}', '', '')")));
        QVERIFY(isRefused(intruder,
                          QStringLiteral("INSERT INTO turn_tool_results VALUES ('t-1/agent-a', "
                                         "'c-a', 'r-1', 1, '{}', '')")));
    }
    // Another tenant's ledger and audit trail: neither read nor written.
    QVERIFY(none(x,
                 QStringLiteral("SELECT COUNT(*) FROM idempotency_ledger WHERE "
                                "idempotency_key LIKE 't-1:%'")));
    QVERIFY(none(x, QStringLiteral("SELECT COUNT(*) FROM audit_trail")));
    QVERIFY(none(a,
                 QStringLiteral("SELECT COUNT(*) FROM idempotency_ledger WHERE "
                                "idempotency_key LIKE 't-2:%'")));
    QVERIFY(changesNothing(x,
                           QStringLiteral("UPDATE idempotency_ledger SET status = "
                                          "'FAILED_FINAL' WHERE idempotency_key LIKE 't-1:%'")));
    QVERIFY(isRefused(x,
                      QStringLiteral("INSERT INTO idempotency_ledger (idempotency_key, "
                                     "tool_name, request_hash, status, created_at, "
                                     "updated_at) VALUES ('t-1:c:r:createTicket:9', "
                                     "'createTicket', 'h', 'PROCESSING', now(), now())")));
    // An audit row in another staff member's name, or changed afterwards.
    QVERIFY(isRefused(b,
                      QStringLiteral("INSERT INTO audit_trail (event, staff_id, tenant_id, "
                                     "conversation_id, request_id, operation_id, tool_name, "
                                     "idempotency_key, arguments_json) VALUES ('CONFIRMED', "
                                     "'agent-a', 't-1', 'c', 'r', 'op', 'createTicket', 'k', "
                                     "'{}')")));
    QVERIFY(isRefused(a, QStringLiteral("UPDATE audit_trail SET staff_id = 'agent-b'")));
    QVERIFY(isRefused(a, QStringLiteral("DELETE FROM audit_trail")));
    // Team members are the administrator's: an agent cannot make itself another.
    QVERIFY(isRefused(b, QStringLiteral("UPDATE team_members SET staff_id = 'agent-a'")));
    QVERIFY(isRefused(b,
                      QStringLiteral("INSERT INTO team_members VALUES ('someone', 't-1', "
                                     "'agent-a')")));
    // Nor escape the policies by changing who it is.
    QVERIFY(isRefused(b, QStringLiteral("SET ROLE %1").arg(a)));
    QVERIFY(refused >= 20);

    // Agent B reads the tenant's audit trail (staff see who confirmed what), not its ledger
    // rows' absence: the same tenant's ledger is shared, for duplicate checks.
    QCOMPARE(count(b, QStringLiteral("SELECT COUNT(*) FROM audit_trail")), 1);
    QCOMPARE(count(b, QStringLiteral("SELECT COUNT(*) FROM idempotency_ledger")), 1);
    // The lead reads the tenant's conversations and changes none; not another tenant's.
    QCOMPARE(count(lead,
                   QStringLiteral("SELECT COUNT(*) FROM turn_checkpoints WHERE owner = "
                                  "'t-1/agent-a'")),
             1);
    QVERIFY(exec(lead, QStringLiteral("UPDATE turn_checkpoints SET resumable = 0"), &rows));
    QCOMPARE(rows, 0);
    // Agent A's rows are whole.
    QCOMPARE(count(a,
                   QStringLiteral("SELECT COUNT(*) FROM turn_checkpoints WHERE resumable = 1 "
                                  "AND desk = 'a'")),
             1);
    QCOMPARE(count(a, QStringLiteral("SELECT COUNT(*) FROM turn_tool_results")), 1);
    QCOMPARE(count(a, QStringLiteral("SELECT COUNT(*) FROM conversation_segments")), 1);
}

void tst_TeamRoles::aConsoleStartedAsAnotherAgentIsRefused()
{
    // Agent B's role, started as agent A (a mistyped --user, or a lie).
    TurnJournal journal(locationAs(role(QStringLiteral("agent_b"))), QStringLiteral("t-1/agent-a"),
                        {QStringLiteral("b"), QStringLiteral("desk b")});
    const JournalOpenResult opened = await(journal.open());
    QVERIFY(!opened.ok);
    QVERIFY2(opened.message.contains(QLatin1String("belongs to t-1/agent-b, not to t-1/agent-a")),
             qPrintable(opened.message));
    // A role the administrator has not named is refused too.
    const QString stranger = role(QStringLiteral("stranger"));
    QVERIFY(
        exec(m_location->userName.isEmpty() ? QStringLiteral("postgres") : m_location->userName,
             QStringLiteral("CREATE ROLE %1 LOGIN IN ROLE agentconsole_staff").arg(stranger)));
    {
        TurnJournal unnamed(locationAs(stranger), QStringLiteral("t-1/agent-a"),
                            {QStringLiteral("s"), QStringLiteral("desk s")});
        const JournalOpenResult refused = await(unnamed.open());
        QVERIFY(!refused.ok);
        QVERIFY2(refused.message.contains(QLatin1String("is not in the team's members")),
                 qPrintable(refused.message));
    }
    for (const QString &name : std::as_const(m_connections)) {
        QSqlDatabase::database(name, false).close();
        QSqlDatabase::removeDatabase(name);
    }
    m_connections.clear();
    QVERIFY(
        exec(m_location->userName.isEmpty() ? QStringLiteral("postgres") : m_location->userName,
             QStringLiteral("DROP ROLE %1").arg(stranger)));
}

QTEST_GUILESS_MAIN(tst_TeamRoles)
#include "tst_teamroles.moc"
