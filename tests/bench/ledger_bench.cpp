// ledger_bench: how many idempotent executions per second the ledger records durably.
//
//   exec     begin() -> Claimed, then complete(SUCCEEDED), one execution after the other from
//            one caller through the asynchronous API (QFutureWatcher on this thread, the SQL
//            on the ledger's database thread); each claim and each completion is its own
//            commit at the store's durability setting
//   exec x8  the same with 8 executions in flight (8 independent callers)
//   replay   begin() on SUCCEEDED keys -> AlreadySucceeded, one after the other: keys this
//            ledger settled itself (answered from its memory of settled rows, on the calling
//            thread), and keys it has not seen (a second ledger on the same file, as another
//            console or the next start would: one SELECT on the database thread)
//   bare     the baseline: a plain INSERT of a PROCESSING row, then an UPDATE to SUCCEEDED,
//            through Qt Sql on one connection that lives on one database thread of its own
//            (a QThreadPool of one thread, QtConcurrent::run), each statement's answer
//            delivered to this thread by a QFutureWatcher: the same two hand-offs per execution
//            that DESIGN.md's threading rule asks of the ledger ("SQL runs on one database
//            thread"; the caller is the GUI thread), with nothing of the ledger's around them
//            (its conditional statements, its queue, its memory of settled rows)
//   sql      the same statements on this thread, no hand-off: what the SQL alone costs
//            (for information; a console may not do this, its caller is the GUI thread)
//
// on SQLite WAL with synchronous NORMAL and FULL, and on PostgreSQL when AGENT_CONSOLE_TEST_PG
// holds a connection URL (scripts/pg-cluster.sh start DIR prints one).
//
// Run by hand: build/tests/bench/ledger_bench [executions]   (see docs/PERFORMANCE.md)
// The last line is machine-readable (SQLite WAL NORMAL, sequential executions):
//   sqlite_exec_per_s=X sqlite_ratio_to_bare_handoff=R replay_us=M store_replay_us=S
//   (R = ledger exec/s / bare exec/s behind the hand-off, the median over 10 rounds that
//   alternate the baselines and the ledger; M and S the two replay figures, microseconds each)
// Exit status 0 when R >= 0.8 (the target) and the journal saved, 3 when R is short of it, 1
// when the journal could not save.

#include "core/ledger/ledgeropening.h"
#include "core/ledger/requesthash.h"
#include "core/ledger/turnjournal.h"

#include "benchhost.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFutureWatcher>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QUrl>
#include <QtConcurrent>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

using namespace AgentConsole;

namespace {

constexpr int kInFlight = 8;
// The ledger's sequential executions against bare SQLite behind the same hand-off, at least.
constexpr double kRatioTarget = 0.8;
// Sequential executions alternate with the baselines in this many rounds.
constexpr int kRounds = 10;

const QString Tool = QStringLiteral("createTicket");

QJsonObject ticketResult(int i)
{
    return {{QStringLiteral("ticketId"), QStringLiteral("T-%1").arg(i)},
            {QStringLiteral("status"), QStringLiteral("OPEN")}};
}

// One caller doing `count` executions (or replays) back to back, each step delivered by a
// QFutureWatcher as a real caller would receive it. Calls `done` after the last one.
class Caller final : public QObject
{
public:
    enum class Mode { Execute, Replay };

    Caller(IdempotencyLedger &ledger, Mode mode, QStringList keys, std::function<void()> done)
        : m_ledger(ledger), m_mode(mode), m_keys(std::move(keys)), m_done(std::move(done))
    {
        connect(&m_claimWatcher, &QFutureWatcherBase::finished, this, &Caller::claimed);
        connect(&m_completeWatcher, &QFutureWatcherBase::finished, this, &Caller::next);
    }

    void start() { next(); }
    int failures() const { return m_failures; }

private:
    void next()
    {
        if (m_index == m_keys.size()) {
            m_done();
            return;
        }
        const QString &key = m_keys.at(m_index);
        m_claimWatcher.setFuture(m_ledger.begin(key, Tool, m_hash));
    }

    void claimed()
    {
        const LedgerClaim claim = m_claimWatcher.result();
        const QString &key = m_keys.at(m_index);
        ++m_index;
        if (m_mode == Mode::Replay) {
            if (claim.outcome != LedgerClaim::Outcome::AlreadySucceeded)
                ++m_failures;
            next();
            return;
        }
        if (!claim.mayExecute()) {
            ++m_failures;
            next();
            return;
        }
        // The write itself would run here; the bench measures only the ledger around it.
        m_completeWatcher.setFuture(
            m_ledger.complete(key, LedgerStatus::Succeeded, ticketResult(m_index)));
    }

    IdempotencyLedger &m_ledger;
    Mode m_mode;
    QStringList m_keys;
    std::function<void()> m_done;
    const QByteArray m_hash = requestHash(QJsonObject{{QStringLiteral("orderId"),
                                                       QStringLiteral("A1001")}});
    QFutureWatcher<LedgerClaim> m_claimWatcher;
    QFutureWatcher<LedgerCompletion> m_completeWatcher;
    qsizetype m_index = 0;
    int m_failures = 0;
};

QStringList keys(const QString &prefix, int from, int count)
{
    QStringList list;
    list.reserve(count);
    for (int i = from; i < from + count; ++i)
        list.append(QStringLiteral("tenant-1:conv-%1:req:createTicket:%2").arg(prefix).arg(i));
    return list;
}

// Runs `callers` callers over `keys` split evenly and returns operations per second.
double drive(IdempotencyLedger &ledger, Caller::Mode mode, const QStringList &all, int callers,
             int *failures)
{
    QEventLoop loop;
    int running = callers;
    std::vector<std::unique_ptr<Caller>> list;
    const qsizetype share = all.size() / callers;
    for (int c = 0; c < callers; ++c) {
        list.push_back(std::make_unique<Caller>(ledger, mode, all.mid(c * share, share),
                                                [&running, &loop] {
                                                    if (--running == 0)
                                                        loop.quit();
                                                }));
    }
    QElapsedTimer timer;
    timer.start();
    for (const auto &caller : list)
        caller->start();
    loop.exec();
    const double seconds = timer.nsecsElapsed() / 1e9;
    for (const auto &caller : list)
        *failures += caller->failures();
    return double(share * callers) / seconds;
}

std::unique_ptr<IdempotencyLedger> openOrReport(const QString &spec, SqliteSynchronous sync)
{
    LedgerOptions options;
    options.synchronous = sync;
    LedgerOpening opening = openLedger(spec, QString(), options);
    if (!opening.ledger) {
        std::printf("    cannot make the ledger: %s\n", qPrintable(opening.error));
        return nullptr;
    }
    // A bench's setup, before anything is measured: waiting here is fine.
    QFuture<LedgerOpenResult> opened = opening.ledger->open();
    opened.waitForFinished();
    if (!opened.result().ready()) {
        std::printf("    cannot open: %s\n", qPrintable(opened.result().message));
        return nullptr;
    }
    return std::move(opening.ledger);
}

// The bare table and statements, for either side of the baseline.
struct BareStatements
{
    QSqlDatabase db;
    std::unique_ptr<QSqlQuery> insert;
    std::unique_ptr<QSqlQuery> update;
    QString hash;

    bool open(const QString &connection, const QString &file)
    {
        db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
        db.setDatabaseName(file);
        if (!db.open())
            return false;
        QSqlQuery setup(db);
        setup.exec(QStringLiteral("PRAGMA journal_mode = WAL"));
        setup.exec(QStringLiteral("PRAGMA synchronous = NORMAL"));
        setup.exec(QStringLiteral("CREATE TABLE t (idempotency_key TEXT NOT NULL PRIMARY KEY, "
                                  "tool_name TEXT NOT NULL, request_hash TEXT NOT NULL, "
                                  "status TEXT NOT NULL, result_json TEXT, created_at TEXT "
                                  "NOT NULL, updated_at TEXT NOT NULL) WITHOUT ROWID"));
        insert = std::make_unique<QSqlQuery>(db);
        insert->prepare(QStringLiteral(
            "INSERT INTO t VALUES (?, ?, ?, 'PROCESSING', NULL, "
            "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"));
        update = std::make_unique<QSqlQuery>(db);
        update->prepare(QStringLiteral(
            "UPDATE t SET status = 'SUCCEEDED', result_json = ?, "
            "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE idempotency_key = ?"));
        hash = QString::fromLatin1(
            requestHash(QJsonObject{{QStringLiteral("orderId"), QStringLiteral("A1001")}}));
        return true;
    }
    bool claim(const QString &key)
    {
        insert->addBindValue(key);
        insert->addBindValue(Tool);
        insert->addBindValue(hash);
        return insert->exec();
    }
    bool record(const QString &key, int i)
    {
        update->addBindValue(QString::fromUtf8(
            QJsonDocument(ticketResult(i)).toJson(QJsonDocument::Compact)));
        update->addBindValue(key);
        return update->exec();
    }
    void close(const QString &connection)
    {
        insert.reset();
        update.reset();
        db.close();
        db = QSqlDatabase();
        QSqlDatabase::removeDatabase(connection);
    }
};

// The baseline: the same two statements on one database thread of their own (the connection
// made and used only there), each answer delivered to this thread by a QFutureWatcher, one
// execution after the other: the hand-offs the threading rule asks for, nothing of the
// ledger's.
class BareHandoffCaller final : public QObject
{
public:
    BareHandoffCaller(QThreadPool &pool, BareStatements &sql, QStringList keys,
                      std::function<void()> done)
        : m_pool(pool), m_sql(sql), m_keys(std::move(keys)), m_done(std::move(done))
    {
        connect(&m_claimWatcher, &QFutureWatcherBase::finished, this,
                &BareHandoffCaller::claimed);
        connect(&m_recordWatcher, &QFutureWatcherBase::finished, this, &BareHandoffCaller::next);
    }
    void start() { next(); }
    int failures() const { return m_failures; }

private:
    void next()
    {
        if (m_index == m_keys.size()) {
            m_done();
            return;
        }
        m_claimWatcher.setFuture(QtConcurrent::run(
            &m_pool, [sql = &m_sql, key = m_keys.at(m_index)] { return sql->claim(key); }));
    }
    void claimed()
    {
        m_failures += m_claimWatcher.result() ? 0 : 1;
        const int i = int(m_index++);
        m_recordWatcher.setFuture(
            QtConcurrent::run(&m_pool, [sql = &m_sql, key = m_keys.at(i), i] {
                return sql->record(key, i);
            }));
    }

    QThreadPool &m_pool;
    BareStatements &m_sql;
    QStringList m_keys;
    std::function<void()> m_done;
    QFutureWatcher<bool> m_claimWatcher;
    QFutureWatcher<bool> m_recordWatcher;
    qsizetype m_index = 0;
    int m_failures = 0;
};

// The baselines of the same run, each on a file of its own and kept open across rounds:
// the two statements on this thread (what the SQL alone costs; for information, as the
// console's caller is the GUI thread, where DESIGN.md allows no SQL), and the same statements
// behind one database thread (the baseline the target is set against).
class Baselines final
{
public:
    Baselines()
    {
        m_pool.setMaxThreadCount(1);
        m_pool.setExpiryTimeout(-1); // one thread for the connection's whole life
    }
    ~Baselines()
    {
        m_here.close(QStringLiteral("here"));
        QtConcurrent::run(&m_pool, [this] { m_handoff.close(QStringLiteral("handoff")); })
            .waitForFinished();
    }
    Baselines(const Baselines &) = delete;
    Baselines &operator=(const Baselines &) = delete;

    bool open(const QDir &dir)
    {
        // The hand-off's connection is made, used and closed on its database thread only; a
        // bench's setup may wait.
        return m_here.open(QStringLiteral("here"), dir.filePath(QStringLiteral("here.sqlite")))
            && QtConcurrent::run(&m_pool, [this, &dir] {
                   return m_handoff.open(QStringLiteral("handoff"),
                                         dir.filePath(QStringLiteral("handoff.sqlite")));
               }).result();
    }

    // Executions per second, one after the other.
    double here(const QStringList &list)
    {
        QElapsedTimer timer;
        timer.start();
        for (int i = 0; i < list.size(); ++i) {
            if (m_here.claim(list.at(i)))
                m_here.record(list.at(i), i);
        }
        return list.size() / (timer.nsecsElapsed() / 1e9);
    }
    double handoff(const QStringList &list)
    {
        QEventLoop loop;
        BareHandoffCaller caller(m_pool, m_handoff, list, [&loop] { loop.quit(); });
        QElapsedTimer timer;
        timer.start();
        caller.start();
        loop.exec();
        if (caller.failures() != 0)
            std::printf("    UNEXPECTED: %d bare statements failed\n", caller.failures());
        return list.size() / (timer.nsecsElapsed() / 1e9);
    }

private:
    BareStatements m_here;
    BareStatements m_handoff;
    QThreadPool m_pool;
};

struct LedgerFigures
{
    double execPerS = 0;
    double execInFlightPerS = 0;
    double replayPerS = 0;
    double storeReplayPerS = 0;
    // With baselines: the median of the rounds' ratios of the ledger's sequential executions
    // to the baseline's, and their range.
    double ratio = 0;
    double ratioMin = 0;
    double ratioMax = 0;
};

double median(std::vector<double> values)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values.at(values.size() / 2);
}

// With `baselines`, the sequential executions run in kRounds rounds, each next to a round of
// both baselines of the same size, so that the machine's other work meets all three alike.
LedgerFigures measureLedger(const QString &spec, SqliteSynchronous sync, int executions,
                            Baselines *baselines = nullptr)
{
    LedgerFigures figures;
    const auto ledger = openOrReport(spec, sync);
    if (!ledger)
        return figures;
    const QString run = QString::number(QDateTime::currentMSecsSinceEpoch());
    int failures = 0;
    // Warm-up: statements prepared, pages cached, the thread running.
    drive(*ledger, Caller::Mode::Execute, keys(run + QStringLiteral("w"), 0, 200), 1,
          &failures);
    figures.execInFlightPerS = drive(*ledger, Caller::Mode::Execute,
                                     keys(run, executions, executions), kInFlight, &failures);
    const QStringList sequential = keys(run, 0, executions);
    if (!baselines) {
        figures.execPerS = drive(*ledger, Caller::Mode::Execute, sequential, 1, &failures);
    } else {
        baselines->here(keys(QStringLiteral("w"), 0, 500)); // warm-up
        baselines->handoff(keys(QStringLiteral("w"), 500, 500));
        const int share = executions / kRounds;
        std::vector<double> here, handoff, ledgerRates, ratios;
        for (int round = 0; round < kRounds; ++round) {
            here.push_back(baselines->here(keys(QStringLiteral("h"), round * share, share)));
            handoff.push_back(
                baselines->handoff(keys(QStringLiteral("b"), round * share, share)));
            ledgerRates.push_back(drive(*ledger, Caller::Mode::Execute,
                                        sequential.mid(round * share, share), 1, &failures));
            ratios.push_back(ledgerRates.back() / handoff.back());
        }
        figures.execPerS = median(ledgerRates);
        figures.ratio = median(ratios);
        figures.ratioMin = *std::min_element(ratios.begin(), ratios.end());
        figures.ratioMax = *std::max_element(ratios.begin(), ratios.end());
        std::printf("    sequential executions in %d alternating rounds of %d, median of "
                    "rounds:\n", kRounds, share);
        std::printf("    bare, on this thread (the SQL alone):            %8.0f exec/s  "
                    "(%.1f us each)\n", median(here), 1e6 / median(here));
        std::printf("    bare, behind one database thread (the baseline): %8.0f exec/s  "
                    "(%.1f us each)\n", median(handoff), 1e6 / median(handoff));
    }
    // The rows settled last are the ones this ledger still remembers.
    const qsizetype remembered = qMin<qsizetype>(executions, 1000);
    figures.replayPerS = drive(*ledger, Caller::Mode::Replay,
                               sequential.mid(sequential.size() - remembered), 1, &failures);
    if (const auto another = openOrReport(spec, sync)) {
        drive(*another, Caller::Mode::Replay, keys(run + QStringLiteral("w"), 0, 200), 1,
              &failures); // warm-up
        figures.storeReplayPerS =
            drive(*another, Caller::Mode::Replay, sequential, 1, &failures);
    }
    std::printf("    ledger exec, sequential:                         %8.0f exec/s  "
                "(%.1f us each)\n", figures.execPerS, 1e6 / figures.execPerS);
    std::printf("    ledger exec, %d in flight:                        %8.0f exec/s\n",
                kInFlight, figures.execInFlightPerS);
    std::printf("    ledger replay -> AlreadySucceeded, rows it settled: %8.0f lookups/s"
                "  (%.1f us each)\n", figures.replayPerS, 1e6 / figures.replayPerS);
    std::printf("    ledger replay -> AlreadySucceeded, from the store:  %8.0f lookups/s"
                "  (%.1f us each)\n", figures.storeReplayPerS, 1e6 / figures.storeReplayPerS);
    if (baselines)
        std::printf("    ratio ledger / bare behind the hand-off: %.2f (rounds %.2f-%.2f)\n",
                    figures.ratio, figures.ratioMin, figures.ratioMax);
    if (failures != 0)
        std::printf("    UNEXPECTED: %d operations had another outcome\n", failures);
    return figures;
}

} // namespace

// What a turn's checkpoints cost in a conversation of `messages` messages: each save replaces
// the turn's row and its own messages (the last two; the earlier ones are the turns' before it,
// stored once, journal schema 5) and is on disk (WAL, FULL) before the turn moves on, as the
// agent loop waits for it. A turn saves about 6 + one per tool result.
// A journal that cannot save fails the run (exit 1): its figure would be no figure.
bool measureJournal(const QString &file, int saves, int messages)
{
    TurnJournal journal(file);
    QFuture<JournalOpenResult> opened = journal.open();
    opened.waitForFinished();
    if (!opened.result().ok) {
        std::printf("    journal: cannot open: %s\n", qPrintable(opened.result().detail));
        return false;
    }
    QJsonArray conversation;
    for (int i = 0; i < messages; ++i)
        conversation.append(QJsonObject{
            {QStringLiteral("role"), i % 3},
            {QStringLiteral("content"),
             QStringLiteral("Order A1001 is in transit with SF Express (tracking number "
                            "SF10010001). Current location: Shanghai Pudong Hub.")}});
    JournalEntry entry;
    entry.conversationId = QStringLiteral("c-bench");
    // The history's columns, as the agent fills them with every save.
    entry.owner = QStringLiteral("t-bench/u-bench"); // tenant/staff, as the console keys it
    entry.title = QStringLiteral("Where is order A1001?");
    entry.outcome = QStringLiteral("running");
    entry.searchText = QStringLiteral("where is order a1001");
    entry.stage = QStringLiteral("PLANNED");
    entry.resumable = true;
    entry.state = QJsonObject{{QStringLiteral("format"), 1},
                              {QStringLiteral("conversation"), conversation},
                              {QStringLiteral("turnStart"), std::max(0, messages - 2)}};
    entry.counters = QJsonObject{{QStringLiteral("tool_retry_count"), 1}};
    // Kept by the loop as its conversation grows (TurnCheckpoint::storedConversationHashes).
    for (const QJsonValue &message : std::as_const(conversation))
        entry.conversationHashes.append(journalMessageHash(
            entry.conversationHashes.isEmpty() ? QByteArray() : entry.conversationHashes.last(),
            message));
    const qsizetype bytes = QJsonDocument(entry.state).toJson(QJsonDocument::Compact).size();
    qint64 stored = 0;
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < saves; ++i) {
        entry.requestId = QStringLiteral("r-%1").arg(i / 8); // 8 checkpoints per turn
        QFuture<JournalWrite> saved = journal.save(entry);
        saved.waitForFinished();
        if (!saved.result().ok) {
            std::printf("    journal: save failed: %s\n", qPrintable(saved.result().detail));
            return false;
        }
        stored += saved.result().bytes;
    }
    const double seconds = clock.nsecsElapsed() / 1e9;
    std::printf("    turn journal, %3d messages (%6lld bytes), %5lld bytes stored each: %6.0f "
                "checkpoints/s (%.2f ms each)\n",
                messages, static_cast<long long>(bytes),
                static_cast<long long>(stored / std::max(1, saves)), saves / seconds,
                seconds * 1000.0 / saves);
    return true;
}

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.*.info=false"));
    const int executions = argc > 1 ? QByteArray(argv[1]).toInt() : 20000;
    // Where every commit waits for an fsync (a few ms here), fewer keep the run short.
    const int fsyncExecutions = qMax(400, executions / 20);

    std::printf("ledger_bench: %s\n", Bench::hostLine().constData());
    // On the disk the data dir would be on (not tmpfs), so that FULL pays for its fsyncs.
    QTemporaryDir dir(QDir::current().filePath(QStringLiteral("ledger_bench-XXXXXX")));
    if (!dir.isValid()) {
        std::printf("cannot make a temporary directory here\n");
        return 1;
    }
    std::printf("%d executions per figure (%d where commits fsync); files in %s\n", executions,
                fsyncExecutions, qPrintable(dir.path()));

    std::printf("SQLite, WAL, synchronous NORMAL (durable across a crash of the process):\n");
    LedgerFigures normal;
    {
        Baselines baselines;
        if (!baselines.open(QDir(dir.path()))) {
            std::printf("    cannot open the baselines' files in %s\n", qPrintable(dir.path()));
            return 1;
        }
        normal = measureLedger(
            QStringLiteral("sqlite:") + dir.filePath(QStringLiteral("normal.sqlite")),
            SqliteSynchronous::Normal, executions, &baselines);
    }
    std::printf("SQLite, WAL, synchronous FULL (also durable across a power loss):\n");
    measureLedger(QStringLiteral("sqlite:") + dir.filePath(QStringLiteral("full.sqlite")),
                  SqliteSynchronous::Full, fsyncExecutions);

    std::printf("Turn journal, SQLite WAL FULL (what a checkpoint costs a turn):\n");
    bool journalSaved = true;
    for (const int messages : {4, 40, 400})
        journalSaved &= measureJournal(
            dir.filePath(QStringLiteral("turns-%1.sqlite").arg(messages)), fsyncExecutions / 2,
            messages);

    const QString pg = qEnvironmentVariable("AGENT_CONSOLE_TEST_PG");
    if (pg.isEmpty()) {
        std::printf("PostgreSQL: skipped: no PostgreSQL (set AGENT_CONSOLE_TEST_PG)\n");
    } else {
        std::printf("PostgreSQL (synchronous_commit on), %s:\n",
                    qPrintable(QUrl(pg).toString(QUrl::RemovePassword)));
        measureLedger(pg, SqliteSynchronous::Full, fsyncExecutions);
    }

    const double ratio = normal.ratio;
    const bool met = ratio >= kRatioTarget;
    std::printf("target: sequential executions >= %.1fx bare SQLite behind the same hand-off "
                "(WAL NORMAL, same run, median of rounds): %.2fx, %s\n",
                kRatioTarget, ratio, met ? "met" : "MISSED");
    std::printf("load average after the run: %s\n", qPrintable(Bench::loadAverage()));
    std::printf("sqlite_exec_per_s=%.0f sqlite_ratio_to_bare_handoff=%.2f replay_us=%.1f "
                "store_replay_us=%.1f\n",
                normal.execPerS, ratio, normal.replayPerS > 0 ? 1e6 / normal.replayPerS : 0.0,
                normal.storeReplayPerS > 0 ? 1e6 / normal.storeReplayPerS : 0.0);
    if (!journalSaved)
        return 1;
    // The short run in ctest (AGENT_CONSOLE_BENCH_SHORT) checks that the bench works, not
    // its figures.
    return met || qEnvironmentVariableIsSet("AGENT_CONSOLE_BENCH_SHORT") ? 0 : 3;
}
