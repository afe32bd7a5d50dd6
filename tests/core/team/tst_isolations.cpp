#include "core/ledger/postgresledger.h"
#include "core/resilience/circuitbreaker.h"
#include "core/team/isolations.h"
#include "core/team/isolationwords.h"

#include "testdatabases.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTest>
#include <QUrl>

#include <memory>
#include <optional>

using namespace AgentConsole;

namespace {

const QStringList KnownNames{QStringLiteral("logistics"), QStringLiteral("logistics:embedded"),
                             QStringLiteral("orders"), QStringLiteral("model:offline")};

// One console's part in this: its breakers and its isolations service.
struct Console
{
    CircuitBreakerRegistry breakers;
    Isolations isolations;

    CircuitBreaker *logistics() { return breakers.breaker(QStringLiteral("logistics:embedded")); }
};

} // namespace

class TestIsolations final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void cleanup();

    void leadIsolatesAndAnotherConsoleRefusesAtOnce();
    void aConsoleStartedLaterReadsTheIsolation();
    void reconnectAfterItsConnectionIsTerminatedReadsAgain();
    void liftingRestoresTheBreakers();
    void staffCannotIsolateOrLiftEvenWithCraftedSql();
    void theDatabaseSaysWhoWroteIt();
    void anEndTimeEndsItByTheConsolesClock();
    void anUnknownNameOrNoReasonIsRefusedInWords();
    void withoutATeamDatabaseNothingChanges();

private:
    // A URL of the test database as `role`.
    QString urlAs(const QString &role) const;
    std::unique_ptr<Console> console(const QString &role, const QString &staffId);
    bool connected(Console &console);
    Isolations::Answer ask(Console &console, quint64 request);
    QSqlDatabase adminOf(const QString &url, const QString &name);

    Testing::TestDatabases m_databases{QStringLiteral("isolation_test")};
    QString m_url; // this test's database, as the cluster's superuser
    QString m_lead;
    QString m_staff;
    QString m_adminUrl;
};

QSqlDatabase TestIsolations::adminOf(const QString &url, const QString &name)
{
    QString error;
    const std::optional<PostgresLocation> where = PostgresLocation::fromUrl(url, &error);
    QSqlDatabase db = QSqlDatabase::contains(name)
        ? QSqlDatabase::database(name)
        : QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), name);
    if (!where)
        return db;
    db.setHostName(where->host);
    db.setPort(where->port);
    db.setUserName(where->userName);
    db.setDatabaseName(where->database);
    db.open();
    return db;
}

void TestIsolations::initTestCase()
{
    m_adminUrl = qEnvironmentVariable(qPrintable(Testing::TestDatabases::variable()));
    if (m_adminUrl.isEmpty())
        QFAIL("AGENT_CONSOLE_TEST_PG is not set: the isolations need PostgreSQL. Run the suite "
              "through scripts/test.sh, or start scripts/pg-cluster.sh and set it.");
    const qint64 pid = QCoreApplication::applicationPid();
    m_lead = QStringLiteral("isolation_lead_%1").arg(pid);
    m_staff = QStringLiteral("isolation_staff_%1").arg(pid);
    QSqlDatabase admin = adminOf(m_adminUrl, QStringLiteral("isolation-admin"));
    QVERIFY2(admin.isOpen(), qPrintable(admin.lastError().text()));
    QSqlQuery query(admin);
    // The group roles as a DBA would make them (the migration makes them when missing too).
    QVERIFY2(query.exec(QStringLiteral(
                 "DO $$ BEGIN "
                 "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentconsole_staff') "
                 "THEN CREATE ROLE agentconsole_staff NOLOGIN; END IF; "
                 "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentconsole_lead') "
                 "THEN CREATE ROLE agentconsole_lead NOLOGIN; END IF; END $$")),
             qPrintable(query.lastError().text()));
    for (const QString &role : {m_lead, m_staff})
        query.exec(QStringLiteral("DROP ROLE IF EXISTS %1").arg(role));
    QVERIFY2(query.exec(
                 QStringLiteral("CREATE ROLE %1 LOGIN IN ROLE agentconsole_lead").arg(m_lead)),
             qPrintable(query.lastError().text()));
    QVERIFY2(query.exec(
                 QStringLiteral("CREATE ROLE %1 LOGIN IN ROLE agentconsole_staff").arg(m_staff)),
             qPrintable(query.lastError().text()));
}

void TestIsolations::cleanupTestCase()
{
    m_databases.dropAll();
    {
        QSqlDatabase admin = adminOf(m_adminUrl, QStringLiteral("isolation-admin"));
        QSqlQuery query(admin);
        for (const QString &role : {m_lead, m_staff})
            query.exec(QStringLiteral("DROP ROLE IF EXISTS %1").arg(role));
    }
    QSqlDatabase::removeDatabase(QStringLiteral("isolation-admin"));
}

void TestIsolations::init()
{
    QString error;
    m_url = m_databases.create(&error);
    QVERIFY2(!m_url.isEmpty(), qPrintable(error));
    // The first console of a team database is its owner's: it migrates (a staff role may not).
    Console owner;
    QVERIFY(owner.isolations.start(m_url, QStringLiteral("DBA"), &owner.breakers,
                                   [] { return KnownNames; }));
    QVERIFY(connected(owner));
}

void TestIsolations::cleanup()
{
    m_databases.dropAll();
}

QString TestIsolations::urlAs(const QString &role) const
{
    QUrl url(m_url);
    url.setUserName(role);
    return url.toString();
}

std::unique_ptr<Console> TestIsolations::console(const QString &role, const QString &staffId)
{
    auto made = std::make_unique<Console>();
    made->isolations.start(urlAs(role), staffId, &made->breakers, [] { return KnownNames; });
    return made;
}

bool TestIsolations::connected(Console &console)
{
    return QTest::qWaitFor(
        [&console] {
            return console.isolations.connection() == Isolations::Connection::Connected;
        },
        10000);
}

Isolations::Answer TestIsolations::ask(Console &console, quint64 request)
{
    std::optional<Isolations::Answer> answer;
    const QMetaObject::Connection connection = connect(
        &console.isolations, &Isolations::answered, this,
        [&answer, request](quint64 id, const Isolations::Answer &given) {
            if (id == request)
                answer = given;
        });
    if (!QTest::qWaitFor([&answer] { return answer.has_value(); }, 10000))
        qWarning("no answer within 10 s");
    disconnect(connection);
    return answer.value_or(Isolations::Answer{Isolations::Outcome::Unavailable, {}, {}});
}

void TestIsolations::leadIsolatesAndAnotherConsoleRefusesAtOnce()
{
    auto lead = console(m_lead, QStringLiteral("L-07"));
    auto staff = console(m_staff, QStringLiteral("S-12"));
    QVERIFY(connected(*lead));
    QVERIFY(connected(*staff));
    QVERIFY(lead->isolations.isLead());
    QVERIFY(!staff->isolations.isLead());
    CircuitBreaker *breaker = staff->logistics();
    QVERIFY(breaker->tryAcquire());
    breaker->release();

    QSignalSpy answered(&lead->isolations, &Isolations::answered);
    QElapsedTimer clock;
    clock.start();
    lead->isolations.isolate(QStringLiteral("logistics"),
                             QStringLiteral("logistics vendor outage"));
    // The other console's breaker refuses at once, within a second of the lead's command.
    QTRY_VERIFY_WITH_TIMEOUT(breaker->isIsolated(), 1000);
    const qint64 tookMs = clock.elapsed();
    qInfo("the staff console's breaker was isolated %lld ms after the lead's command", tookMs);
    QVERIFY(!breaker->tryAcquire());
    QTRY_COMPARE(answered.size(), 1);
    QCOMPARE(answered.constFirst().at(1).value<Isolations::Answer>().outcome,
             Isolations::Outcome::Done);

    const BreakerIsolation &isolation = breaker->isolation();
    QCOMPARE(isolation.dependency, QStringLiteral("logistics"));
    QCOMPARE(isolation.reason, QStringLiteral("logistics vendor outage"));
    QCOMPARE(isolation.leadStaffId, QStringLiteral("L-07"));
    QCOMPARE(isolation.leadRole, m_lead);
    QVERIFY(isolation.since.isValid());
    QVERIFY(!isolation.until.isValid());
    const QString words = IsolationWords::refusal(isolation);
    QVERIFY2(words.startsWith(QStringLiteral("Isolated by the shift lead (staff L-07) at ")),
             qPrintable(words));
    QVERIFY2(words.endsWith(QStringLiteral(": logistics vendor outage")), qPrintable(words));
    // Other routes of the same console are not touched, and both consoles see the same list.
    QVERIFY(staff->breakers.breaker(QStringLiteral("orders:embedded"))->tryAcquire());
    QCOMPARE(staff->isolations.current().size(), 1);
    QTRY_COMPARE(lead->isolations.current(), staff->isolations.current());
}

void TestIsolations::aConsoleStartedLaterReadsTheIsolation()
{
    auto lead = console(m_lead, QStringLiteral("L-07"));
    QVERIFY(connected(*lead));
    QCOMPARE(ask(*lead,
                 lead->isolations.isolate(QStringLiteral("model:offline"),
                                          QStringLiteral("provider outage")))
                 .outcome,
             Isolations::Outcome::Done);
    auto later = console(m_staff, QStringLiteral("S-12"));
    QVERIFY(connected(*later));
    // A breaker made after the read takes it too (routes' breakers are made on first use).
    QTRY_COMPARE(later->isolations.current().size(), 1);
    CircuitBreaker *model = later->breakers.breaker(QStringLiteral("model:offline"));
    QVERIFY(model->isIsolated());
    QVERIFY(!model->tryAcquire());
    QVERIFY(!later->logistics()->isIsolated());
}

void TestIsolations::reconnectAfterItsConnectionIsTerminatedReadsAgain()
{
    auto lead = console(m_lead, QStringLiteral("L-07"));
    auto staff = console(m_staff, QStringLiteral("S-12"));
    QVERIFY(connected(*lead));
    QVERIFY(connected(*staff));
    // Isolated before the connection goes: it must stay in force while the database is away.
    QCOMPARE(ask(*lead, lead->isolations.isolate(QStringLiteral("model:offline"),
                                                  QStringLiteral("provider outage")))
                 .outcome,
             Isolations::Outcome::Done);
    CircuitBreaker *model = staff->breakers.breaker(QStringLiteral("model:offline"));
    QTRY_VERIFY_WITH_TIMEOUT(model->isIsolated(), 1000);
    QList<Isolations::Connection> seen;
    bool keptWhileLost = true;
    QString lostText;
    connect(&staff->isolations, &Isolations::changed, this, [&] {
        seen.append(staff->isolations.connection());
        if (staff->isolations.connection() == Isolations::Connection::Lost) {
            keptWhileLost = keptWhileLost && model->isIsolated() && !model->tryAcquire();
            lostText = staff->isolations.connectionText();
        }
    });
    {
        QSqlDatabase admin = adminOf(m_adminUrl, QStringLiteral("isolation-admin"));
        QSqlQuery query(admin);
        QVERIFY2(query.exec(QStringLiteral("SELECT count(pg_terminate_backend(pid)) FROM "
                                           "pg_stat_activity WHERE usename = '%1'")
                                .arg(m_staff)),
                 qPrintable(query.lastError().text()));
        QVERIFY(query.next());
        QCOMPARE(query.value(0).toInt(), 1);
    }
    // Isolated while the staff console is not listening: it hears nothing, and reads it when
    // it is back.
    QCOMPARE(ask(*lead,
                 lead->isolations.isolate(QStringLiteral("logistics"),
                                          QStringLiteral("vendor outage")))
                 .outcome,
             Isolations::Outcome::Done);
    QTRY_VERIFY_WITH_TIMEOUT(staff->logistics()->isIsolated(), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(staff->isolations.connection(), Isolations::Connection::Connected,
                              10000);
    // It noticed: the connection was lost (the isolations read before stayed in force) and
    // came back.
    QVERIFY(seen.contains(Isolations::Connection::Lost));
    QVERIFY(keptWhileLost);
    QVERIFY2(lostText.startsWith(QStringLiteral("The team database cannot be reached; trying "
                                                "again. The isolations read at "))
                 && lostText.endsWith(QStringLiteral(" stay in force.")),
             qPrintable(lostText));
    QVERIFY(staff->isolations.connectionText().startsWith(QStringLiteral("Team database: ")));
    QCOMPARE(seen.constLast(), Isolations::Connection::Connected);
    // And it listens again: a lift reaches it within a second.
    QCOMPARE(ask(*lead, lead->isolations.lift(QStringLiteral("logistics"))).outcome,
             Isolations::Outcome::Done);
    QTRY_VERIFY_WITH_TIMEOUT(!staff->logistics()->isIsolated(), 1000);
}

void TestIsolations::liftingRestoresTheBreakers()
{
    auto lead = console(m_lead, QStringLiteral("L-07"));
    auto staff = console(m_staff, QStringLiteral("S-12"));
    QVERIFY(connected(*lead));
    QVERIFY(connected(*staff));
    CircuitBreaker *breaker = staff->logistics();
    QCOMPARE(ask(*lead,
                 lead->isolations.isolate(QStringLiteral("logistics"),
                                          QStringLiteral("vendor outage")))
                 .outcome,
             Isolations::Outcome::Done);
    QTRY_VERIFY_WITH_TIMEOUT(breaker->isIsolated(), 1000);
    QElapsedTimer clock;
    clock.start();
    QCOMPARE(ask(*lead, lead->isolations.lift(QStringLiteral("logistics"))).outcome,
             Isolations::Outcome::Done);
    QTRY_VERIFY_WITH_TIMEOUT(!breaker->isIsolated(), 1000);
    QVERIFY(breaker->tryAcquire());
    breaker->release();
    QCOMPARE(breaker->state(), CircuitBreaker::State::Closed);
    QVERIFY(staff->isolations.current().isEmpty());
    // Lifting what is not isolated says so.
    QCOMPARE(ask(*lead, lead->isolations.lift(QStringLiteral("logistics"))).outcome,
             Isolations::Outcome::NotIsolated);
}

void TestIsolations::staffCannotIsolateOrLiftEvenWithCraftedSql()
{
    auto lead = console(m_lead, QStringLiteral("L-07"));
    auto staff = console(m_staff, QStringLiteral("S-12"));
    QVERIFY(connected(*lead));
    QVERIFY(connected(*staff));
    const Isolations::Answer refused = ask(
        *staff, staff->isolations.isolate(QStringLiteral("logistics"), QStringLiteral("mine")));
    QCOMPARE(refused.outcome, Isolations::Outcome::NotLead);
    QVERIFY2(refused.message.contains(QStringLiteral("agentconsole_lead")),
             qPrintable(refused.message));
    QCOMPARE(ask(*lead,
                 lead->isolations.isolate(QStringLiteral("logistics"),
                                          QStringLiteral("vendor outage")))
                 .outcome,
             Isolations::Outcome::Done);
    QTRY_VERIFY_WITH_TIMEOUT(staff->logistics()->isIsolated(), 1000);
    QCOMPARE(ask(*staff, staff->isolations.lift(QStringLiteral("logistics"))).outcome,
             Isolations::Outcome::NotLead);

    // A client that lies about being a lead is refused by PostgreSQL itself.
    {
        QSqlDatabase own = adminOf(urlAs(m_staff), QStringLiteral("isolation-crafted"));
        QVERIFY2(own.isOpen(), qPrintable(own.lastError().text()));
        QSqlQuery query(own);
        const QStringList crafted{
            QStringLiteral("INSERT INTO team_isolations (dependency, reason, lead_staff_id, "
                           "lead_role, isolated_at) VALUES ('orders', 'x', 'L-07', '%1', now())")
                .arg(m_lead),
            QStringLiteral("UPDATE team_isolations SET lifted_by_staff_id = 'L-07'"),
            QStringLiteral("UPDATE team_isolations SET reason = 'forged'"),
            QStringLiteral("DELETE FROM team_isolations"),
            QStringLiteral("TRUNCATE team_isolations"),
        };
        for (const QString &sql : crafted) {
            QVERIFY2(!query.exec(sql), qPrintable(sql));
            QCOMPARE(query.lastError().nativeErrorCode(), QStringLiteral("42501"));
        }
        // It may read them: staff see every isolation.
        QVERIFY(query.exec(QStringLiteral("SELECT count(*) FROM team_isolations "
                                          "WHERE lifted_at IS NULL")));
        QVERIFY(query.next());
        QCOMPARE(query.value(0).toInt(), 1);
    }
    QSqlDatabase::removeDatabase(QStringLiteral("isolation-crafted"));
    QVERIFY(staff->logistics()->isIsolated());
}

void TestIsolations::theDatabaseSaysWhoWroteIt()
{
    // Even a lead's own crafted SQL cannot name another role, back-date a row, rewrite a
    // reason or delete one.
    {
        QSqlDatabase own = adminOf(urlAs(m_lead), QStringLiteral("isolation-lead-sql"));
        QVERIFY2(own.isOpen(), qPrintable(own.lastError().text()));
        QSqlQuery query(own);
        QVERIFY2(query.exec(QStringLiteral(
                     "INSERT INTO team_isolations (dependency, reason, lead_staff_id, "
                     "lead_role, isolated_at) VALUES ('orders', 'x', 'L-07', 'someone_else', "
                     "'2001-01-01')")),
                 qPrintable(query.lastError().text()));
        QVERIFY(query.exec(QStringLiteral("SELECT lead_role, isolated_at > now() - "
                                          "interval '1 minute' FROM team_isolations")));
        QVERIFY(query.next());
        QCOMPARE(query.value(0).toString(), m_lead);
        QVERIFY(query.value(1).toBool());
        QVERIFY(!query.exec(QStringLiteral("UPDATE team_isolations SET reason = 'forged'")));
        QCOMPARE(query.lastError().nativeErrorCode(), QStringLiteral("23514"));
        QVERIFY(!query.exec(QStringLiteral("DELETE FROM team_isolations")));
        QCOMPARE(query.lastError().nativeErrorCode(), QStringLiteral("42501"));
    }
    QSqlDatabase::removeDatabase(QStringLiteral("isolation-lead-sql"));
}

void TestIsolations::anEndTimeEndsItByTheConsolesClock()
{
    auto lead = console(m_lead, QStringLiteral("L-07"));
    auto staff = console(m_staff, QStringLiteral("S-12"));
    QDateTime now = QDateTime::currentDateTimeUtc();
    staff->isolations.setClock([&now] { return now; });
    QVERIFY(connected(*lead));
    QVERIFY(connected(*staff));
    const QDateTime until = QDateTime::currentDateTimeUtc().addSecs(3600);
    QCOMPARE(ask(*lead,
                 lead->isolations.isolate(QStringLiteral("logistics"),
                                          QStringLiteral("maintenance window"), until))
                 .outcome,
             Isolations::Outcome::Done);
    QTRY_VERIFY_WITH_TIMEOUT(staff->logistics()->isIsolated(), 1000);
    QCOMPARE(staff->logistics()->isolation().until.toSecsSinceEpoch(), until.toSecsSinceEpoch());
    QVERIFY(IsolationWords::refusal(staff->logistics()->isolation())
                .contains(QStringLiteral("(until ")));
    now = now.addSecs(3599);
    staff->isolations.applyEndTimes();
    QVERIFY(staff->logistics()->isIsolated());
    now = now.addSecs(2);
    staff->isolations.applyEndTimes();
    QVERIFY(!staff->logistics()->isIsolated());
    QVERIFY(staff->logistics()->tryAcquire());
    // An end time that has passed is refused before anything is written.
    QCOMPARE(ask(*lead,
                 lead->isolations.isolate(QStringLiteral("orders"), QStringLiteral("x"),
                                          QDateTime::currentDateTimeUtc().addSecs(-5)))
                 .outcome,
             Isolations::Outcome::EndTimePassed);
}

void TestIsolations::anUnknownNameOrNoReasonIsRefusedInWords()
{
    auto lead = console(m_lead, QStringLiteral("L-07"));
    QVERIFY(connected(*lead));
    const Isolations::Answer unknown = ask(
        *lead, lead->isolations.isolate(QStringLiteral("warehouse"), QStringLiteral("x")));
    QCOMPARE(unknown.outcome, Isolations::Outcome::UnknownName);
    QCOMPARE(unknown.message,
             QStringLiteral("warehouse is not a dependency this console knows. Known: "
                            "logistics, logistics:embedded, model:offline, orders."));
    const Isolations::Answer noReason = ask(
        *lead, lead->isolations.isolate(QStringLiteral("logistics"), QStringLiteral("  ")));
    QCOMPARE(noReason.outcome, Isolations::Outcome::ReasonMissing);
    QVERIFY(lead->isolations.current().isEmpty());
}

void TestIsolations::withoutATeamDatabaseNothingChanges()
{
    Console alone;
    QVERIFY(!alone.isolations.isEnabled());
    QCOMPARE(alone.isolations.connection(), Isolations::Connection::Off);
    QCOMPARE(ask(alone, alone.isolations.isolate(QStringLiteral("logistics"), QStringLiteral("x")))
                 .outcome,
             Isolations::Outcome::Off);
    QVERIFY(alone.logistics()->tryAcquire());
    QString error;
    QVERIFY(!alone.isolations.start(QStringLiteral("mysql://x"), QStringLiteral("S"),
                                    &alone.breakers, {}, &error));
    QVERIFY(!error.isEmpty());
}

QTEST_GUILESS_MAIN(TestIsolations)
#include "tst_isolations.moc"
