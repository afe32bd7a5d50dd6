// The audit trail of writes in the ledger's store (docs/AUDIT.md), on both backends: rows
// appended and read back newest first, the store refusing UPDATE and DELETE (and, on
// PostgreSQL, TRUNCATE and the grants), the filters, the redaction run on the database thread,
// rows kept while the store is out, and the migration from schema 3. The PostgreSQL rows need
// AGENT_CONSOLE_TEST_PG (scripts/test.sh starts a throwaway cluster and sets it) and fail
// without it, as a missing required server must.

#include "core/ledger/audittrail.h"
#include "core/ledger/ledgeropening.h"
#include "core/ledger/ledgerschema.h"
#include "core/ledger/postgresledger.h"
#include "testdatabases.h"

#include <QFutureWatcher>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <atomic>

using namespace AgentConsole;
using Event = AuditEntry::Event;
using AuditOutcome = AuditEntry::Outcome;
using Via = AuditEntry::Via;

namespace {

template <typename T> std::optional<T> await(const QFuture<T> &future)
{
    QFutureWatcher<T> watcher;
    QSignalSpy finished(&watcher, &QFutureWatcherBase::finished);
    watcher.setFuture(future);
    if (finished.isEmpty() && !finished.wait(60000))
        return std::nullopt;
    if (future.isCanceled() || future.resultCount() == 0)
        return std::nullopt;
    return future.result();
}

// A write's row as the write guard makes it, before the store stamps it.
AuditEntry row(Event event, const QString &orderId, const QString &staff = QStringLiteral("u-1"),
               const QString &tenant = QStringLiteral("t-acme"),
               const QString &request = QStringLiteral("r-1"))
{
    AuditEntry entry;
    entry.event = event;
    entry.staffId = staff;
    entry.tenantId = tenant;
    entry.conversationId = QStringLiteral("c-1");
    entry.requestId = request;
    entry.operationId = QStringLiteral("%1:c-1:%2:createTicket:0").arg(tenant, request);
    entry.toolName = QStringLiteral("createTicket");
    entry.idempotencyKey = entry.operationId;
    entry.arguments = {{QStringLiteral("orderId"), orderId},
                       {QStringLiteral("category"), QStringLiteral("DAMAGED")}};
    return entry;
}

AuditEntry outcome(AuditEntry entry, AuditOutcome result, const QString &objectOrCode = {},
                   Via via = Via::Backend)
{
    entry.event = via == Via::Resume || via == Via::Replay ? Event::Settlement : Event::Outcome;
    entry.outcome = result;
    entry.via = via;
    if (result == AuditOutcome::Succeeded)
        entry.objectId = objectOrCode;
    else
        entry.resultCode = objectOrCode;
    return entry;
}

// Runs SQL on a store directly (not through the ledger): what another client of the
// database, or someone at its prompt, could try.
class DirectConnection
{
public:
    explicit DirectConnection(const QString &spec)
    {
        QSqlDatabase db;
        if (spec.startsWith(QLatin1String("sqlite:"))) {
            db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), Name);
            db.setDatabaseName(spec.mid(7));
            db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=100"));
        } else {
            QString error;
            const auto location = PostgresLocation::fromUrl(spec, &error);
            db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), Name);
            db.setHostName(location->host);
            db.setPort(location->port);
            db.setUserName(location->userName);
            db.setDatabaseName(location->database);
        }
        m_open = db.open();
    }
    ~DirectConnection() { QSqlDatabase::removeDatabase(Name); }

    bool isOpen() const { return m_open; }
    QVariant value(const QString &sql) const
    {
        QSqlQuery query(QSqlDatabase::database(Name));
        if (!query.exec(sql) || !query.next())
            return {};
        return query.value(0);
    }
    QStringList column(const QString &sql) const
    {
        QStringList values;
        QSqlQuery query(QSqlDatabase::database(Name));
        if (!query.exec(sql))
            return {query.lastError().text()};
        while (query.next())
            values.append(query.value(0).toString());
        return values;
    }
    // The store's refusal, or empty when the statement ran.
    QString refusal(const QString &sql) const
    {
        QSqlQuery query(QSqlDatabase::database(Name));
        return query.exec(sql) ? QString() : query.lastError().text();
    }
    QSqlDatabase database() const { return QSqlDatabase::database(Name); }

private:
    static constexpr const char Name[] = "tst-audit-direct";
    bool m_open = false;
};

} // namespace

class TestAuditTrail : public QObject
{
    Q_OBJECT

private slots:
    void cleanup() { m_databases.dropAll(); }
    void rowsAreAppendedAndReadNewestFirst_data() { addBackendRows(); }
    void rowsAreAppendedAndReadNewestFirst();
    void updateAndDeleteAreRefused_data() { addBackendRows(); }
    void updateAndDeleteAreRefused();
    void filtersSelectRows_data() { addBackendRows(); }
    void filtersSelectRows();
    void pagesAreBounded_data() { addBackendRows(); }
    void pagesAreBounded();
    void theTurnsOfAnExportAreRead_data() { addBackendRows(); }
    void theTurnsOfAnExportAreRead();
    void argumentsAreRedactedOnTheDatabaseThread_data() { addBackendRows(); }
    void argumentsAreRedactedOnTheDatabaseThread();
    void aRowTheStoreCannotTakeIsKept();
    void aVersionThreeLedgerGetsTheTrail_data() { addBackendRows(); }
    void aVersionThreeLedgerGetsTheTrail();

private:
    static void addBackendRows()
    {
        QTest::addColumn<QString>("backend");
        QTest::newRow("sqlite") << QStringLiteral("sqlite");
        QTest::newRow("postgresql") << QStringLiteral("postgresql");
    }
    // A new empty store of the row's backend (null spec and the test failed if none).
    QString freshSpec();
    std::unique_ptr<IdempotencyLedger> open(const QString &spec,
                                            const QString &owner = QStringLiteral("console-a"));

    QTemporaryDir m_dir;
    int m_files = 0;
    Testing::TestDatabases m_databases{QStringLiteral("audit_test")};
};

QString TestAuditTrail::freshSpec()
{
    QFETCH(QString, backend);
    if (backend == QLatin1String("sqlite"))
        return QStringLiteral("sqlite:")
            + m_dir.filePath(QStringLiteral("ledger-%1.sqlite").arg(++m_files));
    QString error;
    const QString url = m_databases.create(&error);
    if (url.isEmpty())
        QTest::qFail(qPrintable(error), __FILE__, __LINE__);
    return url;
}

std::unique_ptr<IdempotencyLedger> TestAuditTrail::open(const QString &spec, const QString &owner)
{
    LedgerOptions options;
    options.owner = owner;
    options.synchronous = SqliteSynchronous::Normal;
    options.busyTimeout = std::chrono::milliseconds(100);
    LedgerOpening opening = openLedger(spec, QString(), options);
    if (!opening.ledger) {
        QTest::qFail(qPrintable(opening.error), __FILE__, __LINE__);
        return nullptr;
    }
    const auto opened = await(opening.ledger->open());
    if (!opened || !opened->ready()) {
        QTest::qFail(qPrintable(opened ? opened->detail : QStringLiteral("open() hung")), __FILE__,
                     __LINE__);
        return nullptr;
    }
    return std::move(opening.ledger);
}

void TestAuditTrail::rowsAreAppendedAndReadNewestFirst()
{
    const QString spec = freshSpec();
    if (spec.isEmpty())
        return;
    const auto ledger = open(spec);
    if (!ledger)
        return;
    AuditTrail *trail = ledger->auditTrail();
    QVERIFY(trail);

    const QDateTime before = QDateTime::currentDateTimeUtc().addSecs(-60);
    const AuditEntry confirmed = row(Event::Confirmed, QStringLiteral("A1001"));
    const AuditEntry succeeded = outcome(confirmed, AuditOutcome::Succeeded,
                                         QStringLiteral("T-000012"));
    const auto first = await(trail->append(confirmed));
    const auto second = await(trail->append(succeeded));
    QVERIFY(first && second);
    QCOMPARE(first->outcome, AuditAppend::Outcome::Appended);
    QCOMPARE(second->outcome, AuditAppend::Outcome::Appended);
    QVERIFY(second->id > first->id);

    const auto page = await(trail->read({}));
    QVERIFY(page);
    QVERIFY2(page->ok(), qPrintable(page->detail));
    QCOMPARE(page->rows.size(), 2);
    QVERIFY(!page->more);
    const AuditEntry &newest = page->rows.at(0);
    const AuditEntry &oldest = page->rows.at(1);
    QCOMPARE(newest.id, second->id);
    QCOMPARE(oldest.id, first->id);
    // What was appended, with what the store adds: the id, the time and the console.
    AuditEntry expected = succeeded;
    expected.id = newest.id;
    expected.at = newest.at;
    expected.consoleId = QStringLiteral("console-a");
    QCOMPARE(newest, expected);
    QCOMPARE(oldest.event, Event::Confirmed);
    QCOMPARE(oldest.outcome, AuditOutcome::None);
    QCOMPARE(oldest.via, Via::None);
    QCOMPARE(oldest.arguments, confirmed.arguments);
    QVERIFY(oldest.at.isValid());
    QVERIFY2(oldest.at >= before && oldest.at <= QDateTime::currentDateTimeUtc().addSecs(60),
             qPrintable(oldest.at.toString(Qt::ISODateWithMs)));
    QVERIFY(newest.at >= oldest.at);

    // A row reads back through JSON as it was (exports carry them).
    QString problem;
    QCOMPARE(AuditEntry::fromJson(newest.toJson(), &problem), newest);
    QCOMPARE(AuditEntry::fromJson(oldest.toJson(), &problem), oldest);
    QJsonObject unknown = newest.toJson();
    unknown.insert(QStringLiteral("approvedBy"), QStringLiteral("someone"));
    QVERIFY(!AuditEntry::fromJson(unknown, &problem));
    QVERIFY2(problem.contains(QLatin1String("approvedBy")), qPrintable(problem));
}

// Append-only, by the store itself: whoever connects (the console's own role, another client,
// someone at the prompt) cannot change or remove a row.
void TestAuditTrail::updateAndDeleteAreRefused()
{
    QFETCH(QString, backend);
    const QString spec = freshSpec();
    if (spec.isEmpty())
        return;
    const auto ledger = open(spec);
    if (!ledger)
        return;
    QVERIFY(await(ledger->auditTrail()->append(row(Event::Confirmed, QStringLiteral("A1001")))));
    QVERIFY(await(
        ledger->auditTrail()->append(outcome(row(Event::Confirmed, QStringLiteral("A1001")),
                                             AuditOutcome::Succeeded, QStringLiteral("T-1")))));

    DirectConnection direct(spec);
    QVERIFY(direct.isOpen());
    const QString update = direct.refusal(
        QStringLiteral("UPDATE audit_trail SET object_id = 'T-999' WHERE object_id = 'T-1'"));
    QVERIFY2(update.contains(QLatin1String("append-only")), qPrintable(update));
    const QString erase = direct.refusal(QStringLiteral("DELETE FROM audit_trail"));
    QVERIFY2(erase.contains(QLatin1String("append-only")), qPrintable(erase));
    if (backend == QLatin1String("postgresql")) {
        const QString truncate = direct.refusal(QStringLiteral("TRUNCATE audit_trail"));
        QVERIFY2(truncate.contains(QLatin1String("append-only")), qPrintable(truncate));
        // The grants as the migration left them: the role that made the table (the
        // console's) may read and insert, never update, delete or truncate.
        const QStringList grants = direct.column(
            QStringLiteral("SELECT privilege_type FROM information_schema.role_table_grants "
                           "WHERE table_name = 'audit_trail' AND grantee = current_user "
                           "ORDER BY privilege_type"));
        QVERIFY2(grants.contains(QLatin1String("INSERT")), qPrintable(grants.join(u',')));
        QVERIFY2(grants.contains(QLatin1String("SELECT")), qPrintable(grants.join(u',')));
        for (const char *refused : {"UPDATE", "DELETE", "TRUNCATE"})
            QVERIFY2(!grants.contains(QLatin1String(refused)), qPrintable(grants.join(u',')));
        QVERIFY(direct
                    .column(QStringLiteral("SELECT privilege_type FROM "
                                           "information_schema.role_table_grants WHERE "
                                           "table_name = 'audit_trail' AND grantee = 'PUBLIC'"))
                    .isEmpty());
    }
    QCOMPARE(direct.value(QStringLiteral("SELECT count(*) FROM audit_trail")).toInt(), 2);
    QCOMPARE(direct
                 .value(QStringLiteral("SELECT count(*) FROM audit_trail "
                                       "WHERE object_id = 'T-1'"))
                 .toInt(),
             1);
    // Appending still works, through the ledger and directly.
    QCOMPARE(await(ledger->auditTrail()->append(row(Event::Confirmed, QStringLiteral("A1002"))))
                 ->outcome,
             AuditAppend::Outcome::Appended);
    QCOMPARE(await(ledger->auditTrail()->read({}))->rows.size(), 3);
}

// By order (an argument's value), by staff member, by day, by tenant; every filter given holds.
void TestAuditTrail::filtersSelectRows()
{
    QFETCH(QString, backend);
    const QString spec = freshSpec();
    if (spec.isEmpty())
        return;
    const auto ledger = open(spec);
    if (!ledger)
        return;
    AuditTrail *trail = ledger->auditTrail();
    const QList<AuditEntry> rows{
        row(Event::Confirmed, QStringLiteral("A1001"), QStringLiteral("u-1")),
        row(Event::Confirmed, QStringLiteral("A1002"), QStringLiteral("u-1")),
        row(Event::Confirmed, QStringLiteral("A1001"), QStringLiteral("u-2")),
        row(Event::Confirmed, QStringLiteral("A1001"), QStringLiteral("u-1"),
            QStringLiteral("t-other")),
    };
    for (const AuditEntry &entry : rows)
        QCOMPARE(await(trail->append(entry))->outcome, AuditAppend::Outcome::Appended);
    // Two rows of other days, written as a store would have stamped them then.
    {
        DirectConnection direct(spec);
        QVERIFY(direct.isOpen());
        const bool sqlite = backend == QLatin1String("sqlite");
        const QString insert = QStringLiteral(
            "INSERT INTO audit_trail (recorded_at, event, staff_id, tenant_id, conversation_id, "
            "request_id, operation_id, tool_name, idempotency_key, arguments_json) VALUES "
            "(%1, 'CONFIRMED', 'u-1', 't-acme', 'c-0', 'r-0', 'op', 'createTicket', 'op', "
            "'{\"orderId\":\"A1001\",\"count\":1001}')");
        for (const char *at : {"2025-03-09T23:59:59.999", "2025-03-10T00:00:00.000"}) {
            const QDateTime local = QDateTime::fromString(QLatin1String(at), Qt::ISODateWithMs);
            const QString stamp = sqlite
                ? QStringLiteral("'%1'").arg(
                    local.toUTC().toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzzZ")))
                : QStringLiteral("CAST('%1' AS timestamptz)")
                      .arg(
                          local.toUTC().toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzz+00:00")));
            const QString refused = direct.refusal(insert.arg(stamp));
            QVERIFY2(refused.isEmpty(), qPrintable(refused));
        }
    }
    const auto countOf = [trail](const AuditQuery &query) {
        const auto page = await(trail->read(query));
        return page && page->ok() ? int(page->rows.size()) : -1;
    };
    AuditQuery acme;
    acme.tenantId = QStringLiteral("t-acme");
    QCOMPARE(countOf(acme), 5);
    QCOMPARE(countOf({}), 6);

    AuditQuery order = acme;
    order.argumentValue = QStringLiteral("A1001");
    QCOMPARE(countOf(order), 4);
    order.argumentValue = QStringLiteral("A100"); // exact, not a prefix
    QCOMPARE(countOf(order), 0);
    order.argumentValue = QStringLiteral("1001"); // a number is no order id
    QCOMPARE(countOf(order), 0);
    order.argumentValue = QStringLiteral("DAMAGED"); // whatever the argument is called
    QCOMPARE(countOf(order), 3);

    AuditQuery staff = acme;
    staff.staffId = QStringLiteral("u-2");
    QCOMPARE(countOf(staff), 1);
    staff.argumentValue = QStringLiteral("A1002");
    QCOMPARE(countOf(staff), 0);

    // A day is [its start, the next day's start) in the staff member's time.
    AuditQuery day = acme;
    day.from = QDate(2025, 3, 10).startOfDay();
    day.to = QDate(2025, 3, 11).startOfDay();
    QCOMPARE(countOf(day), 1);
    day.from = QDate(2025, 3, 9).startOfDay();
    day.to = QDate(2025, 3, 10).startOfDay();
    QCOMPARE(countOf(day), 1);
    day.from = QDateTime::currentDateTime().date().startOfDay();
    day.to = QDateTime::currentDateTime().date().addDays(1).startOfDay();
    QCOMPARE(countOf(day), 3);
    day.argumentValue = QStringLiteral("A1001");
    day.staffId = QStringLiteral("u-1");
    const auto today = await(trail->read(day));
    QCOMPARE(today->rows.size(), 1);
    QCOMPARE(today->rows.first().staffId, QStringLiteral("u-1"));
    QCOMPARE(today->rows.first().tenantId, QStringLiteral("t-acme"));
    QCOMPARE(today->rows.first().arguments.value(u"orderId").toString(), QStringLiteral("A1001"));
}

void TestAuditTrail::pagesAreBounded()
{
    const QString spec = freshSpec();
    if (spec.isEmpty())
        return;
    const auto ledger = open(spec);
    if (!ledger)
        return;
    AuditTrail *trail = ledger->auditTrail();
    for (int i = 0; i < 7; ++i)
        QCOMPARE(await(trail->append(row(Event::Confirmed, QStringLiteral("A%1").arg(2000 + i))))
                     ->outcome,
                 AuditAppend::Outcome::Appended);
    AuditQuery query;
    query.limit = 3;
    QStringList seen;
    int pages = 0;
    for (;;) {
        const auto page = await(trail->read(query));
        QVERIFY(page && page->ok());
        QVERIFY(page->rows.size() <= 3);
        for (const AuditEntry &entry : page->rows)
            seen.append(entry.arguments.value(u"orderId").toString());
        ++pages;
        if (!page->more)
            break;
        query.beforeId = page->rows.last().id;
    }
    QCOMPARE(pages, 3);
    QCOMPARE(seen, QStringList({"A2006", "A2005", "A2004", "A2003", "A2002", "A2001", "A2000"}));
    query = {};
    query.limit = 1'000'000; // held to the bound
    QCOMPARE(await(trail->read(query))->rows.size(), 7);
    query.limit = 0;
    QCOMPARE(await(trail->read(query))->rows.size(), 1);
    query.turns = QList<AuditTurn>(AuditQuery::maxTurns + 1, {QStringLiteral("c"), {}});
    QCOMPARE(await(trail->read(query))->outcome, AuditPage::Outcome::StoreError);
}

// An export reads its turns' rows: by conversation and request id together, in chunks the
// statements bind (1,200 turns here).
void TestAuditTrail::theTurnsOfAnExportAreRead()
{
    const QString spec = freshSpec();
    if (spec.isEmpty())
        return;
    const auto ledger = open(spec);
    if (!ledger)
        return;
    AuditTrail *trail = ledger->auditTrail();
    for (const char *request : {"r-1", "r-2", "r-3"})
        QCOMPARE(await(trail->append(row(Event::Confirmed, QStringLiteral("A1001"),
                                         QStringLiteral("u-1"), QStringLiteral("t-acme"),
                                         QLatin1String(request))))
                     ->outcome,
                 AuditAppend::Outcome::Appended);
    AuditQuery turns;
    for (int i = 0; i < 1200; ++i)
        turns.turns.append({QStringLiteral("c-1"), QStringLiteral("none-%1").arg(i)});
    turns.turns.insert(10, {QStringLiteral("c-1"), QStringLiteral("r-3")});
    turns.turns.append({QStringLiteral("c-1"), QStringLiteral("r-1")}); // in the last chunk
    turns.turns.append({QStringLiteral("c-other"), QStringLiteral("r-2")}); // not r-2 of c-1
    turns.limit = AuditQuery::maxPageSize;
    const auto page = await(trail->read(turns));
    QVERIFY(page && page->ok());
    QCOMPARE(page->rows.size(), 2);
    QCOMPARE(page->rows.at(0).requestId, QStringLiteral("r-3"));
    QCOMPARE(page->rows.at(1).requestId, QStringLiteral("r-1"));
    turns.limit = 1;
    const auto one = await(trail->read(turns));
    QCOMPARE(one->rows.size(), 1);
    QVERIFY(one->more);
    turns.turns = {{QStringLiteral("c-other"), QStringLiteral("r-1")}};
    turns.limit = 10;
    QVERIFY(await(trail->read(turns))->rows.isEmpty());
}

void TestAuditTrail::argumentsAreRedactedOnTheDatabaseThread()
{
    const QString spec = freshSpec();
    if (spec.isEmpty())
        return;
    const auto ledger = open(spec);
    if (!ledger)
        return;
    std::atomic<QThread *> ranOn{nullptr};
    AuditEntry entry = row(Event::Confirmed, QStringLiteral("A1001"));
    entry.arguments.insert(QStringLiteral("note"), QStringLiteral("key sk-live-1234567890abcdef"));
    const auto appended = await(
        ledger->auditTrail()->append(entry, [&ranOn](const QJsonObject &arguments) {
            ranOn = QThread::currentThread();
            QJsonObject redacted = arguments;
            redacted.insert(QStringLiteral("note"), QStringLiteral("key [redacted]"));
            return redacted;
        }));
    QCOMPARE(appended->outcome, AuditAppend::Outcome::Appended);
    QVERIFY(ranOn.load() != nullptr);
    QVERIFY(ranOn.load() != QThread::currentThread());
    DirectConnection direct(spec);
    const QString stored = direct.value(QStringLiteral("SELECT arguments_json FROM audit_trail"))
                               .toString();
    QVERIFY2(!stored.contains(QLatin1String("sk-live")), qPrintable(stored));
    QVERIFY2(stored.contains(QLatin1String("[redacted]")), qPrintable(stored));
    QVERIFY2(stored.contains(QLatin1String("A1001")), qPrintable(stored));
}

// SQLite busy past its timeout (another process holds the write lock): the row is kept and
// appended once the store takes writes again, before the ledger's next operation.
void TestAuditTrail::aRowTheStoreCannotTakeIsKept()
{
    QTemporaryDir dir;
    const QString spec = QStringLiteral("sqlite:") + dir.filePath(QStringLiteral("l.sqlite"));
    const auto ledger = open(spec);
    if (!ledger)
        return;
    AuditTrail *trail = ledger->auditTrail();
    QCOMPARE(await(trail->append(row(Event::Confirmed, QStringLiteral("A1001"))))->outcome,
             AuditAppend::Outcome::Appended);
    {
        DirectConnection locker(spec);
        QVERIFY(locker.isOpen());
        QVERIFY(locker.refusal(QStringLiteral("BEGIN EXCLUSIVE")).isEmpty());
        const AuditEntry confirmed = row(Event::Confirmed, QStringLiteral("A1002"));
        QCOMPARE(await(trail->append(confirmed))->outcome, AuditAppend::Outcome::Kept);
        QCOMPARE(await(trail->append(outcome(confirmed, AuditOutcome::Unknown,
                                             QStringLiteral("EXECUTION_STATUS_UNKNOWN"))))
                     ->outcome,
                 AuditAppend::Outcome::Kept);
        QCOMPARE(*await(ledger->recordKept()), 2);
        QVERIFY(locker.refusal(QStringLiteral("ROLLBACK")).isEmpty());
    }
    QCOMPARE(*await(ledger->recordKept()), 0);
    const auto page = await(trail->read({}));
    QCOMPARE(page->rows.size(), 3);
    // In the order they were made.
    QCOMPARE(page->rows.at(0).outcome, AuditOutcome::Unknown);
    QCOMPARE(page->rows.at(1).event, Event::Confirmed);
    QCOMPARE(page->rows.at(1).arguments.value(u"orderId").toString(), QStringLiteral("A1002"));
}

// A ledger of schema 3 (before the trail): its rows kept, the trail added, append-only.
void TestAuditTrail::aVersionThreeLedgerGetsTheTrail()
{
    QFETCH(QString, backend);
    const QString spec = freshSpec();
    if (spec.isEmpty())
        return;
    const bool sqlite = backend == QLatin1String("sqlite");
    const Internal::SqlDialect dialect = sqlite ? Internal::SqlDialect::Sqlite
                                                : Internal::SqlDialect::Postgres;
    {
        DirectConnection direct(spec);
        QVERIFY(direct.isOpen());
        QSqlDatabase db = direct.database();
        QList<Internal::SchemaMigration> upToThree = Internal::ledgerMigrations(dialect);
        QCOMPARE(upToThree.size(), 5);
        upToThree.resize(3);
        QCOMPARE(Internal::migrateSchema(db, dialect, upToThree).outcome,
                 Internal::MigrationResult::Outcome::Migrated);
        QVERIFY(direct
                    .refusal(QStringLiteral("INSERT INTO idempotency_ledger (idempotency_key, "
                                            "tool_name, request_hash, status, created_at, "
                                            "updated_at, owner) VALUES ('k-1', 'createTicket', "
                                            "'h', 'SUCCEEDED', %1, %1, 'console-a')")
                                 .arg(sqlite ? QStringLiteral("'2026-11-01T00:00:00.000Z'")
                                             : QStringLiteral("now()")))
                    .isEmpty());
        QVERIFY(!direct.refusal(QStringLiteral("SELECT count(*) FROM audit_trail")).isEmpty());
    }
    const auto ledger = open(spec);
    if (!ledger)
        return;
    QCOMPARE(await(ledger->lookup(QStringLiteral("k-1")))->row->status, LedgerStatus::Succeeded);
    QCOMPARE(
        await(ledger->auditTrail()->append(row(Event::Confirmed, QStringLiteral("A1"))))->outcome,
        AuditAppend::Outcome::Appended);
    DirectConnection direct(spec);
    QCOMPARE(direct
                 .value(sqlite ? QStringLiteral("PRAGMA user_version")
                               : QStringLiteral("SELECT max(version) FROM schema_version"))
                 .toInt(),
             5);
    QVERIFY(!direct.refusal(QStringLiteral("DELETE FROM audit_trail")).isEmpty());
    QCOMPARE(direct.value(QStringLiteral("SELECT count(*) FROM audit_trail")).toInt(), 1);
}

QTEST_GUILESS_MAIN(TestAuditTrail)
#include "tst_audittrail.moc"
