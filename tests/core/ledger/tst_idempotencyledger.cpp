// IdempotencyLedger on both backends: every transition of DESIGN.md's table, migrations,
// durability across reopening, and 8 processes racing the same keys. Each case runs on SQLite
// and on PostgreSQL; the PostgreSQL rows need AGENT_CONSOLE_TEST_PG (scripts/test.sh starts a
// throwaway cluster and sets it) and fail without it, as a missing required server must.

#include "core/ledger/ledgeropening.h"
#include "core/ledger/ledgerschema.h"
#include "core/ledger/postgresledger.h"
#include "core/ledger/requesthash.h"
#include "core/ledger/settledrows.h"
#include "sanitizerbuild.h"
#include "testdatabases.h"
#include "throwawaycluster.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QJsonDocument>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <QUuid>

using namespace AgentConsole;
using Outcome = LedgerClaim::Outcome;

namespace {

const QString Tool = QStringLiteral("createTicket");

// Waits for a ledger future the way a caller does, through a QFutureWatcher, with a generous
// bound so that a hang fails the test instead of blocking ctest.
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

QByteArray hashOf(const char *orderId)
{
    return requestHash(QJsonObject{{QStringLiteral("orderId"), QLatin1String(orderId)},
                                   {QStringLiteral("category"), QStringLiteral("refund")}});
}

QString uniqueKey()
{
    return QStringLiteral("tenant-1:conv:") + QUuid::createUuid().toString(QUuid::Id128)
        + QStringLiteral(":createTicket:0");
}

// A fresh, empty store per test: a file in a temporary directory, or a new PostgreSQL
// database on the test cluster (dropped in cleanup()).
class StoreFactory
{
public:
    // Empty on success; otherwise why the store could not be made.
    QString make(const QString &backend, QString *spec)
    {
        if (backend == QLatin1String("sqlite")) {
            if (!m_dir.isValid())
                return QStringLiteral("no temporary directory");
            *spec = QStringLiteral("sqlite:")
                + m_dir.filePath(QStringLiteral("ledger-%1.sqlite").arg(++m_counter));
            return {};
        }
        QString error;
        *spec = m_databases.create(&error);
        return error;
    }

    void dropAll() { m_databases.dropAll(); }

private:
    QTemporaryDir m_dir;
    int m_counter = 0;
    Testing::TestDatabases m_databases{QStringLiteral("ledger_test")};
};

// Runs SQL on a store directly (not through the ledger), to inspect or tamper with it.
class DirectConnection
{
public:
    explicit DirectConnection(const QString &spec)
    {
        QSqlDatabase db;
        if (spec.startsWith(QLatin1String("sqlite:"))) {
            db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), Name);
            db.setDatabaseName(spec.mid(7));
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
    bool exec(const QString &sql) const
    {
        return QSqlQuery(QSqlDatabase::database(Name)).exec(sql);
    }
    QSqlDatabase database() const { return QSqlDatabase::database(Name); }

private:
    static constexpr const char Name[] = "tst-ledger-direct";
    bool m_open = false;
};

} // namespace

class TestIdempotencyLedger : public QObject
{
    Q_OBJECT

private slots:
    void cleanup();

    void newKeyIsClaimed_data() { addBackendRows(); }
    void newKeyIsClaimed();
    void beginAfter_data();
    void beginAfter();
    void retryableIsReclaimedOnce_data() { addBackendRows(); }
    void retryableIsReclaimedOnce();
    void recoverTakesOverOnlyItsOwnOrphan_data() { addBackendRows(); }
    void recoverTakesOverOnlyItsOwnOrphan();
    void completeMovesOnlyProcessing_data() { addBackendRows(); }
    void completeMovesOnlyProcessing();
    void migrationsAreIdempotent_data() { addBackendRows(); }
    void migrationsAreIdempotent();
    void newerSchemaIsRefused_data() { addBackendRows(); }
    void newerSchemaIsRefused();
    void ownersKeepTheirClaims_data() { addBackendRows(); }
    void ownersKeepTheirClaims();
    void aVersionOneLedgerIsUpgraded();
    void aVersionTwoLedgerIsUpgraded_data() { addBackendRows(); }
    void aVersionTwoLedgerIsUpgraded();
    void anUnknownOutcomeIsSettledForGood_data() { addBackendRows(); }
    void anUnknownOutcomeIsSettledForGood();
    void aLostConnectionIsMadeAgain_data();
    void aLostConnectionIsMadeAgain();
    void recentSuccessesAreTheTenantsOwn_data() { addBackendRows(); }
    void recentSuccessesAreTheTenantsOwn();
    void reopenKeepsRows_data() { addBackendRows(); }
    void reopenKeepsRows();
    void operationsBeforeOpenFailCleanly_data() { addBackendRows(); }
    void operationsBeforeOpenFailCleanly();
    void settledRowsAreBounded();
    void racingProcessesClaimEachKeyOnce_data() { addBackendRows(); }
    void racingProcessesClaimEachKeyOnce();

    void specs_data();
    void specs();
    void unreachableServerIsOneLine();
    void aCompletionTheStoreCannotTakeIsKept();

private:
    static void addBackendRows();
    // A fresh store of the current row's backend, opened; null (and the test failed) if not.
    std::unique_ptr<IdempotencyLedger> freshLedger(QString *spec = nullptr);
    std::unique_ptr<IdempotencyLedger> reopen(const QString &spec, const QString &owner = {});

    StoreFactory m_stores;
};

void TestIdempotencyLedger::cleanup()
{
    m_stores.dropAll();
}

void TestIdempotencyLedger::addBackendRows()
{
    QTest::addColumn<QString>("backend");
    QTest::newRow("sqlite") << QStringLiteral("sqlite");
    QTest::newRow("postgresql") << QStringLiteral("postgresql");
}

std::unique_ptr<IdempotencyLedger> TestIdempotencyLedger::freshLedger(QString *specOut)
{
    QFETCH(QString, backend);
    QString spec;
    const QString error = m_stores.make(backend, &spec);
    if (!error.isEmpty()) {
        QTest::qFail(qPrintable(error), __FILE__, __LINE__);
        return nullptr;
    }
    if (specOut)
        *specOut = spec;
    return reopen(spec);
}

std::unique_ptr<IdempotencyLedger> TestIdempotencyLedger::reopen(const QString &spec,
                                                                 const QString &owner)
{
    LedgerOptions options;
    options.owner = owner;
    options.synchronous = SqliteSynchronous::Normal; // the tests need no power-loss safety
    LedgerOpening opening = openLedger(spec, QString(), options);
    if (!opening.ledger) {
        QTest::qFail(qPrintable(opening.error), __FILE__, __LINE__);
        return nullptr;
    }
    const auto opened = await(opening.ledger->open());
    if (!opened || !opened->ready()) {
        QTest::qFail(qPrintable(opened ? opened->message + QStringLiteral(" / ") + opened->detail
                                       : QStringLiteral("open() did not finish")),
                     __FILE__, __LINE__);
        return nullptr;
    }
    return std::move(opening.ledger);
}

// Shortens every case: begin and wait, failing the test when the future never finishes.
#define BEGIN(ledger, key, hash) await((ledger).begin((key), Tool, (hash)))

void TestIdempotencyLedger::newKeyIsClaimed()
{
    const auto ledger = freshLedger();
    if (!ledger)
        return;
    const QString key = uniqueKey();
    const auto before = await(ledger->lookup(key));
    QVERIFY(before);
    QCOMPARE(before->outcome, LedgerLookup::Outcome::NotFound);

    const auto claim = BEGIN(*ledger, key, hashOf("A1001"));
    QVERIFY(claim);
    QCOMPARE(claim->outcome, Outcome::Claimed);
    QVERIFY(claim->storedResult.isEmpty());

    const auto found = await(ledger->lookup(key));
    QVERIFY(found);
    QCOMPARE(found->outcome, LedgerLookup::Outcome::Found);
    QCOMPARE(found->row->idempotencyKey, key);
    QCOMPARE(found->row->toolName, Tool);
    QCOMPARE(found->row->requestHash, hashOf("A1001"));
    QCOMPARE(found->row->status, LedgerStatus::Processing);
    QVERIFY(found->row->result.isEmpty());
    QVERIFY(found->row->createdAt.isValid());
    QVERIFY(qAbs(found->row->createdAt.secsTo(QDateTime::currentDateTimeUtc())) < 300);
    QCOMPARE(found->row->updatedAt, found->row->createdAt);
}

// DESIGN.md's table: what a second begin() answers, by the state the first one left and
// whether it carries the same request hash.
void TestIdempotencyLedger::beginAfter_data()
{
    QTest::addColumn<QString>("backend");
    QTest::addColumn<std::optional<LedgerStatus>>("completedAs"); // none: still PROCESSING
    QTest::addColumn<bool>("sameHash");
    QTest::addColumn<Outcome>("expected");
    QTest::addColumn<bool>("returnsStoredResult");

    struct Row
    {
        const char *name;
        std::optional<LedgerStatus> completedAs;
        bool sameHash;
        Outcome expected;
        bool returnsStoredResult;
    };
    const Row rows[] = {
        {"processing, same hash", std::nullopt, true, Outcome::InProgress, false},
        {"processing, other hash", std::nullopt, false, Outcome::Conflict, false},
        {"succeeded, same hash", LedgerStatus::Succeeded, true, Outcome::AlreadySucceeded, true},
        {"succeeded, other hash", LedgerStatus::Succeeded, false, Outcome::Conflict, false},
        // Claimed again, with what the earlier run recorded (did it act? ToolRound::onClaim).
        {"retryable, same hash", LedgerStatus::FailedRetryable, true, Outcome::Claimed, true},
        {"retryable, other hash", LedgerStatus::FailedRetryable, false, Outcome::Conflict, false},
        {"final, same hash", LedgerStatus::FailedFinal, true, Outcome::FailedFinal, true},
        {"final, other hash", LedgerStatus::FailedFinal, false, Outcome::Conflict, false},
    };
    for (const char *backend : {"sqlite", "postgresql"}) {
        for (const Row &row : rows) {
            QTest::addRow("%s: %s", backend, row.name)
                << QString::fromLatin1(backend) << row.completedAs << row.sameHash << row.expected
                << row.returnsStoredResult;
        }
    }
}

void TestIdempotencyLedger::beginAfter()
{
    QFETCH(std::optional<LedgerStatus>, completedAs);
    QFETCH(bool, sameHash);
    QFETCH(Outcome, expected);
    QFETCH(bool, returnsStoredResult);

    QString spec;
    const auto ledger = freshLedger(&spec);
    if (!ledger)
        return;
    const QString key = uniqueKey();
    const QJsonObject stored{{QStringLiteral("ticketId"), QStringLiteral("T-77")},
                             {QStringLiteral("note"), QStringLiteral("已创建")}};
    QCOMPARE(BEGIN(*ledger, key, hashOf("A1001"))->outcome, Outcome::Claimed);
    if (completedAs) {
        const auto done = await(ledger->complete(key, *completedAs, stored));
        QVERIFY(done);
        QCOMPARE(done->outcome, LedgerCompletion::Outcome::Completed);
    }

    const auto second = BEGIN(*ledger, key, sameHash ? hashOf("A1001") : hashOf("A1002"));
    QVERIFY(second);
    QCOMPARE(second->outcome, expected);
    QCOMPARE(second->storedResult, returnsStoredResult ? stored : QJsonObject());
    QCOMPARE(second->mayExecute(), expected == Outcome::Claimed);

    // The same hash for another tool under one key is a conflict too: keys name their tool.
    const auto otherTool = await(ledger->begin(key, QStringLiteral("refund"), hashOf("A1001")));
    QVERIFY(otherTool);
    QCOMPARE(otherTool->outcome, Outcome::Conflict);

    // A row settled for good (SUCCEEDED, FAILED_FINAL) is answered from the ledger's memory
    // on the calling thread: the future is finished when begin() returns. The store, as
    // another console or the next start sees it, answers the same.
    const bool settled = completedAs == LedgerStatus::Succeeded
        || completedAs == LedgerStatus::FailedFinal;
    if (settled && expected != Outcome::Claimed) {
        const QFuture<LedgerClaim> remembered = ledger->begin(
            key, Tool, sameHash ? hashOf("A1001") : hashOf("A1002"));
        QVERIFY(remembered.isFinished());
        QCOMPARE(remembered.result().outcome, expected);
    }
    const auto elsewhere = reopen(spec, QStringLiteral("another-console"));
    QVERIFY(elsewhere);
    const auto fromStore = BEGIN(*elsewhere, key, sameHash ? hashOf("A1001") : hashOf("A1002"));
    QVERIFY(fromStore);
    // The retryable row was re-claimed above by the first ledger: PROCESSING now.
    QCOMPARE(fromStore->outcome, expected == Outcome::Claimed ? Outcome::InProgress : expected);
    QCOMPARE(fromStore->storedResult,
             returnsStoredResult && expected != Outcome::Claimed ? stored : QJsonObject());
}

// The memory of settled rows is bounded: the oldest are forgotten (the store still answers
// them), a large result is never kept, and only what is final is answered from it.
void TestIdempotencyLedger::settledRowsAreBounded()
{
    using Internal::SettledRow;
    using Internal::SettledRows;
    SettledRows rows;
    const QJsonObject small{{QStringLiteral("ticketId"), QStringLiteral("T-1")}};
    for (qsizetype i = 0; i <= SettledRows::MaxRows; ++i)
        rows.remember(QStringLiteral("k%1").arg(i),
                      SettledRow{Tool, hashOf("A1001"), LedgerStatus::Succeeded, small});
    QVERIFY(!rows.claim(QStringLiteral("k0"), Tool, hashOf("A1001")));
    const auto newest = rows.claim(QStringLiteral("k%1").arg(SettledRows::MaxRows), Tool,
                                   hashOf("A1001"));
    QVERIFY(newest);
    QCOMPARE(newest->outcome, Outcome::AlreadySucceeded);
    QCOMPARE(newest->storedResult, small);
    const auto other = rows.claim(QStringLiteral("k1"), Tool, hashOf("A1002"));
    QVERIFY(other);
    QCOMPARE(other->outcome, Outcome::Conflict);

    const QJsonObject large{
        {QStringLiteral("text"), QString(SettledRows::MaxResultBytes, QLatin1Char('x'))}};
    rows.remember(QStringLiteral("large"),
                  SettledRow{Tool, hashOf("A1001"), LedgerStatus::FailedFinal, large});
    QVERIFY(!rows.claim(QStringLiteral("large"), Tool, hashOf("A1001")));
}

void TestIdempotencyLedger::retryableIsReclaimedOnce()
{
    const auto ledger = freshLedger();
    if (!ledger)
        return;
    const QString key = uniqueKey();
    QCOMPARE(BEGIN(*ledger, key, hashOf("A1001"))->outcome, Outcome::Claimed);
    const QJsonObject failure{{QStringLiteral("code"), QStringLiteral("TOOL_UNAVAILABLE")}};
    QCOMPARE(await(ledger->complete(key, LedgerStatus::FailedRetryable, failure))->outcome,
             LedgerCompletion::Outcome::Completed);
    QCOMPARE(await(ledger->lookup(key))->row->result, failure);

    // Two callers retry: the first re-claims, the second finds it in progress.
    const QFuture<LedgerClaim> first = ledger->begin(key, Tool, hashOf("A1001"));
    const QFuture<LedgerClaim> second = ledger->begin(key, Tool, hashOf("A1001"));
    QCOMPARE(await(first)->outcome, Outcome::Claimed);
    QCOMPARE(await(second)->outcome, Outcome::InProgress);

    const auto row = await(ledger->lookup(key))->row;
    QCOMPARE(row->status, LedgerStatus::Processing);
    QVERIFY(row->result.isEmpty()); // the old failure is not mistaken for this attempt's

    const QJsonObject success{{QStringLiteral("ticketId"), QStringLiteral("T-9")}};
    QCOMPARE(await(ledger->complete(key, LedgerStatus::Succeeded, success))->outcome,
             LedgerCompletion::Outcome::Completed);
    const auto replay = BEGIN(*ledger, key, hashOf("A1001"));
    QCOMPARE(replay->outcome, Outcome::AlreadySucceeded);
    QCOMPARE(replay->storedResult, success);
}

// A resumed turn recovers the PROCESSING row its interrupted run left: that run may have
// reached the backend, so the claim says mayHaveRun. Every other row answers as begin().
void TestIdempotencyLedger::recoverTakesOverOnlyItsOwnOrphan()
{
    const auto ledger = freshLedger();
    if (!ledger)
        return;
    const QString orphan = uniqueKey();
    const auto first = BEGIN(*ledger, orphan, hashOf("A1001"));
    QCOMPARE(first->outcome, Outcome::Claimed);
    QVERIFY(!first->mayHaveRun); // a new key: nothing can have run
    QCOMPARE(BEGIN(*ledger, orphan, hashOf("A1001"))->outcome, Outcome::InProgress);

    const auto recovered = await(ledger->recover(orphan, Tool, hashOf("A1001")));
    QCOMPARE(recovered->outcome, Outcome::Claimed);
    QVERIFY(recovered->mayHaveRun);
    QCOMPARE(await(ledger->lookup(orphan))->row->status, LedgerStatus::Processing);
    // Other arguments under the same key are still a conflict, never a take-over.
    QCOMPARE(await(ledger->recover(orphan, Tool, hashOf("A2002")))->outcome, Outcome::Conflict);

    const QJsonObject success{{QStringLiteral("ticketId"), QStringLiteral("T-7")}};
    QVERIFY(await(ledger->complete(orphan, LedgerStatus::Succeeded, success))->completed());
    const auto replay = await(ledger->recover(orphan, Tool, hashOf("A1001")));
    QCOMPARE(replay->outcome, Outcome::AlreadySucceeded);
    QCOMPARE(replay->storedResult, success);

    // A key nobody claimed yet is simply claimed.
    const auto fresh = await(ledger->recover(uniqueKey(), Tool, hashOf("A1001")));
    QCOMPARE(fresh->outcome, Outcome::Claimed);
    QVERIFY(!fresh->mayHaveRun);

    // A retryable failure re-claimed by begin() may have reached the backend too.
    const QString retryable = uniqueKey();
    QCOMPARE(BEGIN(*ledger, retryable, hashOf("A1001"))->outcome, Outcome::Claimed);
    QVERIFY(await(ledger->complete(retryable, LedgerStatus::FailedRetryable, {}))->completed());
    const auto again = BEGIN(*ledger, retryable, hashOf("A1001"));
    QCOMPARE(again->outcome, Outcome::Claimed);
    QVERIFY(again->mayHaveRun);
}

void TestIdempotencyLedger::completeMovesOnlyProcessing()
{
    using Completion = LedgerCompletion::Outcome;
    const auto ledger = freshLedger();
    if (!ledger)
        return;
    const QJsonObject result{{QStringLiteral("ticketId"), QStringLiteral("T-1")}};

    // No row: nothing to complete, and nothing is created.
    const QString unknown = uniqueKey();
    QCOMPARE(await(ledger->complete(unknown, LedgerStatus::Succeeded, result))->outcome,
             Completion::NotProcessing);
    QCOMPARE(await(ledger->lookup(unknown))->outcome, LedgerLookup::Outcome::NotFound);

    const QString key = uniqueKey();
    QCOMPARE(BEGIN(*ledger, key, hashOf("A1001"))->outcome, Outcome::Claimed);
    // PROCESSING is not a completion.
    QCOMPARE(await(ledger->complete(key, LedgerStatus::Processing, {}))->outcome,
             Completion::NotProcessing);
    QCOMPARE(await(ledger->complete(key, LedgerStatus::Succeeded, result))->outcome,
             Completion::Completed);

    // Once final, no later completion (a late duplicate, a confused retry) changes it.
    for (const LedgerStatus late :
         {LedgerStatus::Succeeded, LedgerStatus::FailedRetryable, LedgerStatus::FailedFinal}) {
        const QJsonObject other{{QStringLiteral("ticketId"), QStringLiteral("T-2")}};
        QCOMPARE(await(ledger->complete(key, late, other))->outcome, Completion::NotProcessing);
    }
    const auto row = await(ledger->lookup(key))->row;
    QCOMPARE(row->status, LedgerStatus::Succeeded);
    QCOMPARE(row->result, result);
    QVERIFY(row->updatedAt >= row->createdAt);
}

// What a write's PriorWritesCheck reads: this tenant's SUCCEEDED rows of the tool, newest first,
// within the window; never another tenant's (a prefix, not a LIKE pattern: '_' is no
// wildcard), another tool's or an unsettled row.
void TestIdempotencyLedger::recentSuccessesAreTheTenantsOwn()
{
    const auto ledger = freshLedger();
    if (!ledger)
        return;
    const auto succeed = [&](const QString &key, const QString &tool, const QString &ticket) {
        QCOMPARE(await(ledger->begin(key, tool, hashOf(key.toUtf8())))->outcome, Outcome::Claimed);
        const QJsonObject result{
            {QStringLiteral("data"), QJsonObject{{QStringLiteral("ticketId"), ticket}}}};
        QCOMPARE(await(ledger->complete(key, LedgerStatus::Succeeded, result))->outcome,
                 LedgerCompletion::Outcome::Completed);
    };
    const QString id = QUuid::createUuid().toString(QUuid::Id128);
    succeed(QStringLiteral("t_a:%1:r1:createTicket:0").arg(id), Tool, QStringLiteral("T-1"));
    succeed(QStringLiteral("t_a:%1:r2:createTicket:0").arg(id), Tool, QStringLiteral("T-2"));
    // Another tenant whose id the first one's would match as a LIKE pattern.
    succeed(QStringLiteral("tXa:%1:r3:createTicket:0").arg(id), Tool, QStringLiteral("T-3"));
    succeed(QStringLiteral("t_a:%1:r4:refund:0").arg(id), QStringLiteral("refund"),
            QStringLiteral("R-1"));
    // Claimed, not settled.
    QCOMPARE(await(ledger->begin(QStringLiteral("t_a:%1:r5:createTicket:0").arg(id), Tool,
                                 hashOf("r5")))
                 ->outcome,
             Outcome::Claimed);

    const auto recent = await(
        ledger->recentSuccesses(QStringLiteral("t_a:"), Tool, std::chrono::hours(1), 50));
    QVERIFY(recent);
    QCOMPARE(recent->outcome, LedgerRecent::Outcome::Found);
    QStringList tickets;
    QDateTime newer;
    for (const LedgerRow &row : recent->rows) {
        QCOMPARE(row.status, LedgerStatus::Succeeded);
        QVERIFY(row.createdAt.isValid());
        // Newest first (rows of one millisecond of SQLite's clock tie).
        QVERIFY(!newer.isValid() || row.createdAt <= newer);
        newer = row.createdAt;
        tickets.append(row.result.value(QLatin1String("data"))
                           .toObject()
                           .value(QLatin1String("ticketId"))
                           .toString());
    }
    tickets.sort();
    QCOMPARE(tickets, (QStringList{QStringLiteral("T-1"), QStringLiteral("T-2")}));

    // The limit.
    const auto one = await(
        ledger->recentSuccesses(QStringLiteral("t_a:"), Tool, std::chrono::hours(1), 1));
    QCOMPARE(one->rows.size(), 1);
    const auto noTenant = await(
        ledger->recentSuccesses(QStringLiteral("t-b:"), Tool, std::chrono::hours(1), 50));
    QVERIFY(noTenant->rows.isEmpty());
}

void TestIdempotencyLedger::migrationsAreIdempotent()
{
    QString spec;
    {
        const auto ledger = freshLedger(&spec);
        if (!ledger)
            return;
        QCOMPARE(BEGIN(*ledger, uniqueKey(), hashOf("A1"))->outcome, Outcome::Claimed);
    }
    for (int again = 0; again < 2; ++again) {
        const auto ledger = reopen(spec);
        if (!ledger)
            return;
    }
    DirectConnection direct(spec);
    QVERIFY(direct.isOpen());
    if (spec.startsWith(QLatin1String("sqlite:"))) {
        QCOMPARE(direct.value(QStringLiteral("PRAGMA user_version")).toInt(), 5);
        QCOMPARE(direct.value(QStringLiteral("PRAGMA journal_mode")).toString(),
                 QStringLiteral("wal"));
    } else {
        QCOMPARE(direct.value(QStringLiteral("SELECT count(*) FROM schema_version")).toInt(), 5);
        QCOMPARE(direct.value(QStringLiteral("SELECT max(version) FROM schema_version")).toInt(),
                 5);
    }
    QCOMPARE(direct.value(QStringLiteral("SELECT count(*) FROM idempotency_ledger")).toInt(), 1);
}

void TestIdempotencyLedger::newerSchemaIsRefused()
{
    QString spec;
    {
        const auto ledger = freshLedger(&spec);
        if (!ledger)
            return;
    }
    {
        DirectConnection direct(spec);
        QVERIFY(direct.isOpen());
        QVERIFY(direct.exec(spec.startsWith(QLatin1String("sqlite:"))
                                ? QStringLiteral("PRAGMA user_version = 99")
                                : QStringLiteral("INSERT INTO schema_version (version) "
                                                 "VALUES (99)")));
    }
    LedgerOpening opening = openLedger(spec, QString());
    QVERIFY(opening.ledger);
    const auto opened = await(opening.ledger->open());
    QVERIFY(opened);
    QCOMPARE(opened->outcome, LedgerOpenResult::Outcome::SchemaTooNew);
    QCOMPARE(opened->schemaVersion, 0);
    QVERIFY2(opened->message.contains(QLatin1String("newer")), qPrintable(opened->message));
    QVERIFY(opened->message.contains(QLatin1String("99")));
    QVERIFY(!opened->message.contains(QLatin1Char('\n')));

    // Nothing runs against a store it does not understand.
    const auto claim = BEGIN(*opening.ledger, uniqueKey(), hashOf("A1"));
    QCOMPARE(claim->outcome, Outcome::StoreError);
}

// The team's PostgreSQL server drops the ledger's connection (a restart, a network cut): the
// operation that met the loss answers StoreError (its write is not run), and the ledger
// connects again for the next one instead of failing closed until the console restarts.
// Two consoles share one ledger: each completes and takes over only the claims it made, so
// one console's recovery never touches another's running write.
void TestIdempotencyLedger::ownersKeepTheirClaims()
{
    QString spec;
    if (!freshLedger(&spec))
        return;
    const auto a = reopen(spec, QStringLiteral("console-a"));
    const auto b = reopen(spec, QStringLiteral("console-b"));
    if (!a || !b)
        return;
    const QString key = uniqueKey();
    QCOMPARE(BEGIN(*a, key, hashOf("A1"))->outcome, Outcome::Claimed);
    QCOMPARE(await(b->recover(key, Tool, hashOf("A1")))->outcome, Outcome::InProgress);
    QCOMPARE(await(b->complete(key, LedgerStatus::FailedRetryable, {}))->outcome,
             LedgerCompletion::Outcome::NotProcessing);
    const auto taken = await(a->recover(key, Tool, hashOf("A1")));
    QCOMPARE(taken->outcome, Outcome::Claimed);
    QVERIFY(taken->mayHaveRun);
    QVERIFY(await(a->complete(key, LedgerStatus::Succeeded, {}))->completed());
    QCOMPARE(BEGIN(*b, key, hashOf("A1"))->outcome, Outcome::AlreadySucceeded);

    // A retryable row re-claimed by another console is that console's claim from then on.
    const QString retried = uniqueKey();
    QCOMPARE(BEGIN(*a, retried, hashOf("A2"))->outcome, Outcome::Claimed);
    QVERIFY(await(a->complete(retried, LedgerStatus::FailedRetryable, {}))->completed());
    QCOMPARE(BEGIN(*b, retried, hashOf("A2"))->outcome, Outcome::Claimed);
    QCOMPARE(await(a->complete(retried, LedgerStatus::Succeeded, {}))->outcome,
             LedgerCompletion::Outcome::NotProcessing);
    QVERIFY(await(b->complete(retried, LedgerStatus::Succeeded, {}))->completed());
}

// A ledger made before claims had owners: migrated in place, its rows kept; a row without an
// owner belongs to the console that has none (the ledger's users before the migration).
void TestIdempotencyLedger::aVersionOneLedgerIsUpgraded()
{
    QTemporaryDir dir;
    const QString spec = QStringLiteral("sqlite:") + dir.filePath(QStringLiteral("v1.sqlite"));
    {
        DirectConnection direct(spec);
        QVERIFY(direct.isOpen());
        QVERIFY(direct.exec(QStringLiteral(
            "CREATE TABLE idempotency_ledger (idempotency_key TEXT NOT NULL PRIMARY KEY, "
            "tool_name TEXT NOT NULL, request_hash TEXT NOT NULL, status TEXT NOT NULL, "
            "result_json TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL) "
            "WITHOUT ROWID")));
        QVERIFY(direct.exec(
            QStringLiteral(
                "INSERT INTO idempotency_ledger VALUES ('k-old', 'createTicket', '%1', "
                "'PROCESSING', NULL, '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')")
                .arg(QString::fromLatin1(hashOf("A1")))));
        QVERIFY(direct.exec(QStringLiteral("PRAGMA user_version = 1")));
    }
    const auto ledger = reopen(spec);
    if (!ledger)
        return;
    {
        DirectConnection direct(spec);
        QCOMPARE(direct.value(QStringLiteral("PRAGMA user_version")).toInt(), 5);
    }
    const auto taken = await(ledger->recover(QStringLiteral("k-old"), Tool, hashOf("A1")));
    QCOMPARE(taken->outcome, Outcome::Claimed);
    QVERIFY(taken->mayHaveRun);
    const auto other = reopen(spec, QStringLiteral("console-b"));
    QCOMPARE(await(other->complete(QStringLiteral("k-old"), LedgerStatus::Succeeded, {}))->outcome,
             LedgerCompletion::Outcome::NotProcessing);
}

// A ledger made before OUTCOME_UNKNOWN existed (schema 2, whose CHECK refuses it): migrated in
// place on both backends, every row and its owner kept, the new state accepted and the check
// still refusing a state nobody knows.
void TestIdempotencyLedger::aVersionTwoLedgerIsUpgraded()
{
    QFETCH(QString, backend);
    QString spec;
    const QString error = m_stores.make(backend, &spec);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const bool sqlite = backend == QLatin1String("sqlite");
    const Internal::SqlDialect dialect = sqlite ? Internal::SqlDialect::Sqlite
                                                : Internal::SqlDialect::Postgres;
    const QString at = sqlite ? QStringLiteral("'2026-11-01T00:00:00.000Z'")
                              : QStringLiteral("'2026-11-01T00:00:00Z'");
    {
        DirectConnection direct(spec);
        QVERIFY(direct.isOpen());
        QSqlDatabase db = direct.database();
        QList<Internal::SchemaMigration> upToTwo = Internal::ledgerMigrations(dialect);
        upToTwo.resize(2);
        QCOMPARE(Internal::migrateSchema(db, dialect, upToTwo).outcome,
                 Internal::MigrationResult::Outcome::Migrated);
        const QString insert = QStringLiteral(
            "INSERT INTO idempotency_ledger (idempotency_key, tool_name, request_hash, status, "
            "result_json, created_at, updated_at, owner) VALUES ('%1', 'createTicket', '%2', "
            "'%3', %4, %5, %5, '%6')");
        QVERIFY(direct.exec(insert.arg(QStringLiteral("k-done"), QString::fromLatin1(hashOf("A1")),
                                       QStringLiteral("SUCCEEDED"),
                                       QStringLiteral("'{\"ticketId\":\"T-1\"}'"), at,
                                       QStringLiteral("console-a"))));
        QVERIFY(direct.exec(insert.arg(QStringLiteral("k-open"), QString::fromLatin1(hashOf("A2")),
                                       QStringLiteral("PROCESSING"), QStringLiteral("NULL"), at,
                                       QStringLiteral("console-a"))));
        // Schema 2 has no such state.
        QVERIFY(
            !direct.exec(QStringLiteral("UPDATE idempotency_ledger SET status = "
                                        "'OUTCOME_UNKNOWN' WHERE idempotency_key = 'k-open'")));
    }
    const auto ledger = reopen(spec, QStringLiteral("console-a"));
    if (!ledger)
        return;
    const auto done = BEGIN(*ledger, QStringLiteral("k-done"), hashOf("A1"));
    QCOMPARE(done->outcome, Outcome::AlreadySucceeded);
    QCOMPARE(done->storedResult.value(u"ticketId").toString(), QStringLiteral("T-1"));
    const auto taken = await(ledger->recover(QStringLiteral("k-open"), Tool, hashOf("A2")));
    QCOMPARE(taken->outcome, Outcome::Claimed); // the owner survived the table's rebuild
    QVERIFY(await(ledger->complete(QStringLiteral("k-open"), LedgerStatus::OutcomeUnknown, {}))
                ->completed());
    DirectConnection direct(spec);
    QVERIFY(direct.isOpen());
    QCOMPARE(direct
                 .value(sqlite ? QStringLiteral("PRAGMA user_version")
                               : QStringLiteral("SELECT max(version) FROM schema_version"))
                 .toInt(),
             5);
    QCOMPARE(direct
                 .value(QStringLiteral("SELECT status FROM idempotency_ledger "
                                       "WHERE idempotency_key = 'k-open'"))
                 .toString(),
             QStringLiteral("OUTCOME_UNKNOWN"));
    QVERIFY(!direct.exec(QStringLiteral("UPDATE idempotency_ledger SET status = 'MAYBE' "
                                        "WHERE idempotency_key = 'k-done'")));
    QCOMPARE(direct.value(QStringLiteral("SELECT count(*) FROM idempotency_ledger")).toInt(), 2);
}

// A write nobody can learn the outcome of is settled as such: every later claim (a replay, a
// resume, another console) is answered from the row and nothing moves it again.
void TestIdempotencyLedger::anUnknownOutcomeIsSettledForGood()
{
    QString spec;
    const auto ledger = freshLedger(&spec);
    if (!ledger)
        return;
    const QString key = uniqueKey();
    const QJsonObject unknown{
        {QStringLiteral("code"), QStringLiteral("EXECUTION_STATUS_UNKNOWN")}};
    QCOMPARE(BEGIN(*ledger, key, hashOf("A1"))->outcome, Outcome::Claimed);
    QVERIFY(await(ledger->complete(key, LedgerStatus::OutcomeUnknown, unknown))->completed());

    const auto again = BEGIN(*ledger, key, hashOf("A1"));
    QCOMPARE(again->outcome, Outcome::OutcomeUnknown);
    QVERIFY(!again->mayExecute());
    QCOMPARE(again->storedResult, unknown);
    QCOMPARE(await(ledger->recover(key, Tool, hashOf("A1")))->outcome, Outcome::OutcomeUnknown);
    for (const LedgerStatus late :
         {LedgerStatus::Succeeded, LedgerStatus::FailedRetryable, LedgerStatus::FailedFinal}) {
        QCOMPARE(await(ledger->complete(key, late, {}))->outcome,
                 LedgerCompletion::Outcome::NotProcessing);
    }
    // Another console, or this one after a restart (no settled-row memory), reads the store.
    const auto other = reopen(spec, QStringLiteral("console-b"));
    if (!other)
        return;
    const auto stored = BEGIN(*other, key, hashOf("A1"));
    QCOMPARE(stored->outcome, Outcome::OutcomeUnknown);
    QCOMPARE(stored->storedResult, unknown);
    QCOMPARE(BEGIN(*other, key, hashOf("A2"))->outcome, Outcome::Conflict);
    QCOMPARE(await(other->lookup(key))->row->status, LedgerStatus::OutcomeUnknown);
}

void TestIdempotencyLedger::aLostConnectionIsMadeAgain_data()
{
    QTest::addColumn<QString>("backend"); // only a server can drop a connection
    QTest::newRow("postgresql") << QStringLiteral("postgresql");
}

void TestIdempotencyLedger::aLostConnectionIsMadeAgain()
{
    QString spec;
    const auto ledger = freshLedger(&spec);
    if (!ledger)
        return;
    const QString before = uniqueKey();
    QCOMPARE(BEGIN(*ledger, before, hashOf("A1"))->outcome, Outcome::Claimed);
    const QString answered = uniqueKey();
    QCOMPARE(BEGIN(*ledger, answered, hashOf("A4"))->outcome, Outcome::Claimed);
    {
        DirectConnection direct(spec);
        QVERIFY(direct.isOpen());
        QVERIFY(direct.exec(
            QStringLiteral("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE datname = current_database() AND pid <> pg_backend_pid()")));
    }
    // A completion that meets the loss is made again on the new connection: it can only move
    // this ledger's PROCESSING row, so it is safe twice, and a finished write must not read
    // "in progress".
    QVERIFY(await(ledger->complete(answered, LedgerStatus::Succeeded, {}))->completed());
    QCOMPARE(await(ledger->lookup(answered))->row->status, LedgerStatus::Succeeded);
    // A claim that meets a loss fails closed; the ones after it are served again.
    {
        DirectConnection direct(spec);
        QVERIFY(direct.exec(
            QStringLiteral("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE datname = current_database() AND pid <> pg_backend_pid()")));
    }
    const auto met = BEGIN(*ledger, uniqueKey(), hashOf("A2"));
    QVERIFY(met->outcome == Outcome::StoreError || met->outcome == Outcome::Claimed);
    const auto after = BEGIN(*ledger, uniqueKey(), hashOf("A3"));
    QCOMPARE(after->outcome, Outcome::Claimed);
    const auto found = await(ledger->lookup(before));
    QCOMPARE(found->outcome, LedgerLookup::Outcome::Found);
    QCOMPARE(found->row->status, LedgerStatus::Processing);
}

void TestIdempotencyLedger::reopenKeepsRows()
{
    QString spec;
    const QString done = uniqueKey();
    const QString pending = uniqueKey();
    const QJsonObject result{{QStringLiteral("ticketId"), QStringLiteral("T-42")}};
    {
        const auto ledger = freshLedger(&spec);
        if (!ledger)
            return;
        QCOMPARE(BEGIN(*ledger, done, hashOf("A1"))->outcome, Outcome::Claimed);
        QCOMPARE(await(ledger->complete(done, LedgerStatus::Succeeded, result))->outcome,
                 LedgerCompletion::Outcome::Completed);
        QCOMPARE(BEGIN(*ledger, pending, hashOf("A2"))->outcome, Outcome::Claimed);
    } // the ledger, its thread and its connection are gone
    const auto ledger = reopen(spec);
    if (!ledger)
        return;
    const auto replay = BEGIN(*ledger, done, hashOf("A1"));
    QCOMPARE(replay->outcome, Outcome::AlreadySucceeded);
    QCOMPARE(replay->storedResult, result);
    // A claim whose owner went away stays in progress: only the owner (or recovery, after
    // asking the backend) may complete it, never a blind second execution.
    QCOMPARE(BEGIN(*ledger, pending, hashOf("A2"))->outcome, Outcome::InProgress);
    QCOMPARE(await(ledger->complete(pending, LedgerStatus::FailedFinal, {}))->outcome,
             LedgerCompletion::Outcome::Completed);
}

void TestIdempotencyLedger::operationsBeforeOpenFailCleanly()
{
    QFETCH(QString, backend);
    QString spec;
    const QString error = m_stores.make(backend, &spec);
    if (!error.isEmpty())
        QFAIL(qPrintable(error));
    LedgerOpening opening = openLedger(spec, QString());
    QVERIFY(opening.ledger);
    // Queued before open(): answered StoreError, not executed on a half-made connection.
    const QFuture<LedgerClaim> early = opening.ledger->begin(uniqueKey(), Tool, hashOf("A"));
    const QFuture<LedgerOpenResult> opened = opening.ledger->open();
    // Queued after open(): waits for it.
    const QFuture<LedgerClaim> late = opening.ledger->begin(uniqueKey(), Tool, hashOf("A"));
    QCOMPARE(await(early)->outcome, Outcome::StoreError);
    QVERIFY(await(opened)->ready());
    QCOMPARE(await(late)->outcome, Outcome::Claimed);
    // Opening twice is harmless.
    QVERIFY(await(opening.ledger->open())->ready());
}

void TestIdempotencyLedger::racingProcessesClaimEachKeyOnce()
{
    if (AgentConsole::Testing::threadSanitized)
        QSKIP(AgentConsole::Testing::childProcessUnderTsan);
    constexpr int Racers = 8;
    constexpr int Keys = 50;
    QString spec;
    {
        // Only to make the store; the racers migrate it themselves, concurrently, on SQLite.
        QFETCH(QString, backend);
        const QString error = m_stores.make(backend, &spec);
        if (!error.isEmpty())
            QFAIL(qPrintable(error));
    }
    const QString prefix = QUuid::createUuid().toString(QUuid::Id128);

    std::vector<std::unique_ptr<QProcess>> racers;
    auto stopAll = qScopeGuard([&racers] {
        for (const auto &racer : racers) {
            if (racer->state() != QProcess::NotRunning) {
                racer->kill();
                racer->waitForFinished(5000);
            }
        }
    });
    for (int i = 0; i < Racers; ++i) {
        auto racer = std::make_unique<QProcess>();
        racer->setProcessChannelMode(QProcess::SeparateChannels);
        racer->start(QStringLiteral(LEDGER_RACE_PATH), {spec, prefix, QString::number(Keys)});
        racers.push_back(std::move(racer));
    }
    // Every racer has opened (and migrated) before any begins, so they start together.
    for (const auto &racer : racers) {
        QTRY_VERIFY_WITH_TIMEOUT(racer->canReadLine() || racer->state() == QProcess::NotRunning,
                                 60000);
        QCOMPARE(racer->readLine().trimmed(), QByteArray("ready"));
    }
    for (const auto &racer : racers)
        racer->write("go\n");

    QHash<QString, int> claims;
    QHash<QString, int> answers;
    for (const auto &racer : racers) {
        QVERIFY(racer->waitForFinished(120000));
        QCOMPARE(racer->exitStatus(), QProcess::NormalExit);
        QVERIFY2(racer->exitCode() == 0, racer->readAllStandardError().constData());
        const QList<QByteArray> lines = racer->readAllStandardOutput().trimmed().split('\n');
        QCOMPARE(lines.size(), Keys);
        for (const QByteArray &line : lines) {
            const QList<QByteArray> fields = line.split(' ');
            QCOMPARE(fields.size(), 2);
            const QString key = QString::fromLatin1(fields.at(0));
            const QByteArray outcome = fields.at(1);
            ++answers[key];
            if (outcome == "Claimed")
                ++claims[key];
            else
                QVERIFY2(outcome == "InProgress" || outcome == "AlreadySucceeded",
                         line.constData());
        }
    }
    QCOMPARE(answers.size(), Keys);
    QCOMPARE(claims.size(), Keys);
    for (auto it = claims.cbegin(); it != claims.cend(); ++it)
        QVERIFY2(it.value() == 1,
                 qPrintable(it.key() + QStringLiteral(" claimed %1 times").arg(it.value())));

    const auto ledger = reopen(spec);
    if (!ledger)
        return;
    for (int i = 0; i < Keys; ++i) {
        const auto found = await(ledger->lookup(prefix + QLatin1Char('-') + QString::number(i)));
        QVERIFY(found && found->row);
        QCOMPARE(found->row->status, LedgerStatus::Succeeded);
    }
}

void TestIdempotencyLedger::specs_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<QString>("descriptionContains");

    QTest::newRow("empty") << QString() << true << QStringLiteral("/data/ledger.sqlite");
    QTest::newRow("sqlite") << QStringLiteral("sqlite") << true
                            << QStringLiteral("/data/ledger.sqlite");
    QTest::newRow("sqlite file") << QStringLiteral("sqlite:/var/tmp/x.sqlite") << true
                                 << QStringLiteral("/var/tmp/x.sqlite");
    QTest::newRow("sqlite without file") << QStringLiteral("sqlite:") << false << QString();
    QTest::newRow("postgresql") << QStringLiteral("postgresql://agent:secret@db.local:6543/team")
                                << true << QStringLiteral("agent@db.local:6543/team");
    QTest::newRow("postgres scheme") << QStringLiteral("postgres://agent:secret@db/team") << true
                                     << QStringLiteral("agent@db:5432/team");
    QTest::newRow("socket directory")
        << QStringLiteral("postgresql://agent@/team?host=/run/pg&port=5433") << true
        << QStringLiteral("agent@/run/pg:5433/team");
    QTest::newRow("bad port") << QStringLiteral("postgresql://agent:secret@/db?port=x") << false
                              << QString();
    QTest::newRow("other scheme") << QStringLiteral("mysql://agent:secret@db/team") << false
                                  << QString();
    QTest::newRow("garbage") << QStringLiteral("secret") << false << QString();
}

void TestIdempotencyLedger::specs()
{
    QFETCH(QString, spec);
    QFETCH(bool, valid);
    QFETCH(QString, descriptionContains);

    const LedgerOpening opening = openLedger(spec, QStringLiteral("/data"));
    QCOMPARE(bool(opening.ledger), valid);
    if (valid) {
        QVERIFY(opening.error.isEmpty());
        QVERIFY2(opening.ledger->description().contains(descriptionContains),
                 qPrintable(opening.ledger->description()));
        QVERIFY(!opening.ledger->description().contains(QLatin1String("secret")));
    } else {
        QVERIFY(!opening.error.isEmpty());
        QVERIFY(!opening.error.contains(QLatin1Char('\n')));
        QVERIFY2(!opening.error.contains(QLatin1String("secret")), qPrintable(opening.error));
    }
}

void TestIdempotencyLedger::unreachableServerIsOneLine()
{
    QTemporaryDir empty; // a socket directory with no server in it: fails at once
    QVERIFY(empty.isValid());
    const QString spec = QStringLiteral("postgresql://agent:secret@/team?host=%1&port=5999")
                             .arg(empty.path());
    LedgerOpening opening = openLedger(spec, QString());
    QVERIFY(opening.ledger);
    const auto opened = await(opening.ledger->open());
    QVERIFY(opened);
    QCOMPARE(opened->outcome, LedgerOpenResult::Outcome::Unreachable);
    QVERIFY(!opened->message.contains(QLatin1Char('\n')));
    QVERIFY2(opened->message.contains(QLatin1String("agent@")), qPrintable(opened->message));
    QVERIFY(!opened->message.contains(QLatin1String("secret")));
    QVERIFY(!opened->detail.isEmpty()); // the driver's words, for the log
}

// PostgreSQL stops (-m immediate) after a write was claimed and before its answer is recorded,
// on a cluster of this test's own (the shared one serves the suites beside it). The
// completion is kept, in the ledger and in its file, and recorded once the server is back,
// before the next operation: the same request reads the stored result, never "in progress".
// A console closed during the outage records what it kept at its next start.
void TestIdempotencyLedger::aCompletionTheStoreCannotTakeIsKept()
{
    if (AgentConsole::Testing::threadSanitized)
        QSKIP(AgentConsole::Testing::childProcessUnderTsan); // the cluster's script is a child
    Testing::ThrowawayCluster cluster;
    QTemporaryDir data;
    QVERIFY(data.isValid());
    QVERIFY(cluster.start());
    const QString url = cluster.url();
    const QString keptFile = data.filePath(QStringLiteral("ledger-kept.json"));
    LedgerOptions options;
    options.owner = QStringLiteral("console-a");
    const QString first = uniqueKey();
    const QString second = uniqueKey();
    const QJsonObject ticket{{QStringLiteral("ticketId"), QStringLiteral("T-1")}};
    {
        LedgerOpening opening = openLedger(url, data.path(), options);
        QVERIFY(opening.ledger);
        IdempotencyLedger &ledger = *opening.ledger;
        QVERIFY(await(ledger.open())->ready());
        QCOMPARE(BEGIN(ledger, first, hashOf("A1"))->outcome, Outcome::Claimed);
        QCOMPARE(BEGIN(ledger, second, hashOf("A2"))->outcome, Outcome::Claimed);

        QVERIFY(cluster.stop()); // the write's answer is in
        QCOMPARE(await(ledger.complete(first, LedgerStatus::Succeeded, ticket))->outcome,
                 LedgerCompletion::Outcome::Kept);
        QVERIFY(QFileInfo::exists(keptFile));
        QCOMPARE(BEGIN(ledger, first, hashOf("A1"))->outcome, Outcome::StoreError); // fails closed
        QCOMPARE(*await(ledger.recordKept()), 1);

        QVERIFY(cluster.start());
        const auto replay = BEGIN(ledger, first, hashOf("A1"));
        QCOMPARE(replay->outcome, Outcome::AlreadySucceeded);
        QCOMPARE(replay->storedResult, ticket);
        QVERIFY(!QFileInfo::exists(keptFile));

        QVERIFY(cluster.stop());
        QCOMPARE(await(ledger.complete(second, LedgerStatus::FailedFinal, {}))->outcome,
                 LedgerCompletion::Outcome::Kept);
    } // the console closes during the outage
    QVERIFY(QFileInfo::exists(keptFile));
    QVERIFY(cluster.start());
    LedgerOpening reopened = openLedger(url, data.path(), options);
    QVERIFY(await(reopened.ledger->open())->ready());
    QCOMPARE(await(reopened.ledger->lookup(second))->row->status, LedgerStatus::FailedFinal);
    QCOMPARE(await(reopened.ledger->lookup(first))->row->status, LedgerStatus::Succeeded);
    QVERIFY(!QFileInfo::exists(keptFile));
}

QTEST_GUILESS_MAIN(TestIdempotencyLedger)
#include "tst_idempotencyledger.moc"
