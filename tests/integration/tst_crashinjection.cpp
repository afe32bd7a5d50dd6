// Crash injection (issue #4, "Proof"): agent-cli runs as a child process and is killed with
// SIGKILL at a seeded, randomly drawn point (every checkpoint boundary and three points inside
// a write), sometimes killed again while resuming, then restarted with --resume. Afterwards:
// exactly one ticket per operationId in the backend, every turn completed, and every stored
// result still there (the ticket in the final checkpoint is the backend's and the ledger's).
// Against the embedded store and support-sim, with the ledger on SQLite and on PostgreSQL.
//
// The child announces a kill point on stderr and stops there (core/telemetry/killpoint.h);
// "after the backend committed, before the answer arrives" against support-sim is the sim's
// commitThenHang fault, which announces the commit on the sim's stdout. AGENT_CONSOLE_CRASH_RUNS
// sets the runs per configuration (default 200: 800 runs over the four).
#include "supportsimprocess.h"
#include "testdatabases.h"

#include "core/ledger/ledgeropening.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QUrlQuery>

#include <functional>

#include <random>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {


// Where a run is killed. "sim-committed" is write-committed as support-sim sees it.
const QStringList kCheckpointPoints{
    QStringLiteral("checkpoint-RECEIVED"),        QStringLiteral("checkpoint-PLANNED"),
    QStringLiteral("checkpoint-TOOL_RESULT"),     QStringLiteral("checkpoint-TOOLS_EXECUTED"),
    QStringLiteral("checkpoint-ANSWER_GENERATING"), QStringLiteral("checkpoint-COMPLETED")};
const QStringList kWritePoints{QStringLiteral("write-claimed"),
                               QStringLiteral("write-before-send"),
                               QStringLiteral("write-committed"),
                               QStringLiteral("write-answered"),
                               QStringLiteral("write-recorded")};

struct Scenario
{
    QStringList questions;
    bool writes = true;        // one createTicket per question
    int toolsPerRound = 1;     // a round's last result is saved with TOOLS_EXECUTED
};

const QList<Scenario> &scenarios()
{
    static const QList<Scenario> list{
        {{QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived "
                         "broken")}},
        {{QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken"),
          QStringLiteral("Please open a ticket for order A1002, the parcel is missing an item")}},
        {{QStringLiteral("为订单 A1001 创建售后工单：杯子碎了")}},
        {{QStringLiteral("Where is order A1001 and is SKU-200 in stock?")}, false, 2},
    };
    return list;
}

struct Config
{
    bool sim = false;
    bool postgres = false;
    QString name() const
    {
        return QStringLiteral("%1/%2").arg(sim ? QStringLiteral("support-sim")
                                               : QStringLiteral("embedded"),
                                           postgres ? QStringLiteral("postgresql")
                                                    : QStringLiteral("sqlite"));
    }
};

// One child process of agent-cli, killed at its kill point or left to finish.
class CliRun
{
public:
    enum class End { Killed, Exited, TimedOut };

    CliRun(const QStringList &arguments, const QString &killAt, const QStringList &stdinLines)
    {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.remove(QStringLiteral("AGENT_CONSOLE_KILL_AT"));
        if (!killAt.isEmpty())
            environment.insert(QStringLiteral("AGENT_CONSOLE_KILL_AT"), killAt);
        m_process.setProcessEnvironment(environment);
        QObject::connect(&m_process, &QProcess::readyReadStandardError, [this] {
            m_stderr += m_process.readAllStandardError();
        });
        m_process.start(QStringLiteral(AGENT_CLI_PATH), arguments);
        for (const QString &line : stdinLines)
            m_process.write(line.toUtf8() + '\n');
        m_process.closeWriteChannel();
    }

    // Waits (bounded) for the kill point, `killNow` (the sim's commit), or the exit.
    End finish(const std::function<bool()> &killNow = {})
    {
        const bool decided = QTest::qWaitFor([&] {
            return m_stderr.contains("agent-console: kill point")
                || (killNow && killNow()) || m_process.state() == QProcess::NotRunning;
        }, 30'000);
        if (m_process.state() != QProcess::NotRunning && decided) {
            m_process.kill(); // SIGKILL
            m_process.waitForFinished(10'000);
            return End::Killed;
        }
        if (!decided) {
            m_process.kill();
            m_process.waitForFinished(10'000);
            return End::TimedOut;
        }
        m_stderr += m_process.readAllStandardError();
        return End::Exited;
    }

    // The exit status, or 128 + the signal for a crash, as a shell reports it.
    int exitCode() const
    {
        return m_process.exitStatus() == QProcess::CrashExit ? 128 + m_process.exitCode()
                                                             : m_process.exitCode();
    }
    QByteArray standardError() const { return m_stderr; }
    QByteArray standardOutput() { return m_process.readAllStandardOutput(); }

private:
    QProcess m_process;
    QByteArray m_stderr;
};

struct Tally
{
    int runs = 0;
    int reached = 0;
    int secondKills = 0;
    int turns = 0;
    int writes = 0;
    QMap<QString, int> byPoint;   // kill points reached, by name
    QMap<int, int> ticketsPerKey; // tickets per operationId -> how many operationIds
    int duplicates = 0;

    void add(const Tally &other)
    {
        runs += other.runs;
        reached += other.reached;
        secondKills += other.secondKills;
        turns += other.turns;
        writes += other.writes;
        for (auto it = other.byPoint.cbegin(); it != other.byPoint.cend(); ++it)
            byPoint[it.key()] += it.value();
        for (auto it = other.ticketsPerKey.cbegin(); it != other.ticketsPerKey.cend(); ++it)
            ticketsPerKey[it.key()] += it.value();
        duplicates += other.duplicates;
    }

    QString summary(const QString &name) const
    {
        QStringList points;
        for (auto it = byPoint.cbegin(); it != byPoint.cend(); ++it)
            points.append(QStringLiteral("%1=%2").arg(it.key()).arg(it.value()));
        QStringList tickets;
        for (auto it = ticketsPerKey.cbegin(); it != ticketsPerKey.cend(); ++it)
            tickets.append(
                QStringLiteral("%1 ticket(s): %2 key(s)").arg(it.key()).arg(it.value()));
        return QStringLiteral("crash-injection [%1]: %2 runs, %3 kill points reached (%4 second "
                              "kills while resuming); %5 turns, all completed; %6 writes; "
                              "tickets per operationId {%7}; duplicates %8; points {%9}")
            .arg(name)
            .arg(runs)
            .arg(reached)
            .arg(secondKills)
            .arg(turns)
            .arg(writes)
            .arg(tickets.join(QStringLiteral(", ")))
            .arg(duplicates)
            .arg(points.join(QLatin1Char(' ')));
    }
};

// Reads one SQLite file outside the product's code, read-only.
class SqliteReader
{
public:
    explicit SqliteReader(const QString &path)
        : m_name(QStringLiteral("crash-reader-%1").arg(++s_counter))
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=5000"));
        m_open = db.open();
    }
    ~SqliteReader()
    {
        QSqlDatabase::database(m_name, false).close();
        QSqlDatabase::removeDatabase(m_name);
    }
    bool isOpen() const { return m_open; }
    QSqlQuery query(const QString &sql) const
    {
        QSqlQuery query(QSqlDatabase::database(m_name, false));
        query.exec(sql);
        return query;
    }

private:
    static inline int s_counter = 0;
    QString m_name;
    bool m_open = false;
};

} // namespace

class tst_CrashInjection : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void killAndResume_data();
    void killAndResume();
    void cleanupTestCase();

private:
    bool runOnce(const Config &config, std::mt19937 &random, int run, Tally &tally);
    QStringList baseArguments(const Config &config, const QString &dataDir) const;
    std::optional<QPair<int, QString>> backendTickets(const Config &config,
                                                      const QString &dataDir,
                                                      const QString &key);

    QTemporaryDir m_dir;
    SupportSimProcess m_sim;
    TestDatabases m_databases{QStringLiteral("crash_test")};
    QString m_pgUrl; // the configuration's own ledger database
    Tally m_total;
    QStringList m_summaries;
};

void tst_CrashInjection::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QString error;
    QVERIFY2(m_sim.start({QStringLiteral("--data-dir"), m_dir.filePath(QStringLiteral("sim"))},
                         &error),
             qPrintable(error));
}

void tst_CrashInjection::killAndResume_data()
{
    QTest::addColumn<bool>("sim");
    QTest::addColumn<bool>("postgres");
    QTest::newRow("embedded/sqlite") << false << false;
    QTest::newRow("embedded/postgresql") << false << true;
    QTest::newRow("support-sim/sqlite") << true << false;
    QTest::newRow("support-sim/postgresql") << true << true;
}

QStringList tst_CrashInjection::baseArguments(const Config &config, const QString &dataDir) const
{
    // The same ticket is asked for on purpose, run after run: it is the write whose
    // idempotency is tested, not a staff member asking twice (#41 §1's --allow-duplicate).
    QStringList arguments{QStringLiteral("--data-dir"), dataDir, QStringLiteral("--yes"),
                          QStringLiteral("--allow-duplicate"), QStringLiteral("--json")};
    if (config.sim)
        arguments << QStringLiteral("--backend") << QStringLiteral("http")
                  << QStringLiteral("--backend-url") << m_sim.baseUrl().toString();
    if (config.postgres)
        arguments << QStringLiteral("--ledger") << m_pgUrl;
    return arguments;
}

// How many tickets the backend holds for `key`, and the ticket id (of the first).
std::optional<QPair<int, QString>> tst_CrashInjection::backendTickets(const Config &config,
                                                                     const QString &dataDir,
                                                                     const QString &key)
{
    if (!config.sim) {
        SqliteReader store(QDir(dataDir).filePath(QStringLiteral("support-store.sqlite")));
        if (!store.isOpen())
            return std::nullopt;
        QSqlQuery query = store.query(
            QStringLiteral("SELECT COUNT(*), MIN(ticket_id) FROM tickets "
                           "WHERE idempotency_key = '%1'").arg(key));
        if (!query.next())
            return std::nullopt;
        return qMakePair(query.value(0).toInt(), query.value(1).toString());
    }
    QUrlQuery parameters;
    parameters.addQueryItem(QStringLiteral("idempotencyKey"), key);
    const SimControlReply reply = m_sim.control(
        "GET", QStringLiteral("/api/v1/tickets?") + parameters.toString(QUrl::FullyEncoded), {},
        {{"X-Staff-Id", "u-1001"}, {"X-Tenant-Id", "t-acme"}});
    if (reply.status == 404)
        return qMakePair(0, QString());
    if (reply.status != 200)
        return std::nullopt;
    // The sim answers one ticket per key; its duplicateTickets stat (checked per run) says
    // whether any key owns a second one.
    return qMakePair(1, reply.body.value(QLatin1String("ticketId")).toString());
}

bool tst_CrashInjection::runOnce(const Config &config, std::mt19937 &random, int run,
                                 Tally &tally)
{
    const auto pick = [&random](int size) {
        return int(std::uniform_int_distribution<int>(0, size - 1)(random));
    };
    const Scenario &scenario = scenarios()[pick(int(scenarios().size()))];
    // Only points the scenario reaches: every run is killed somewhere.
    QStringList points = scenario.writes ? kCheckpointPoints + kWritePoints : kCheckpointPoints;
    if (scenario.toolsPerRound < 2)
        points.removeAll(QStringLiteral("checkpoint-TOOL_RESULT"));
    const auto drawPoint = [&] {
        QString point = points[pick(int(points.size()))];
        int occurrence = 1;
        if (scenario.questions.size() > 1 && pick(2) == 1)
            occurrence = 2;
        return qMakePair(point, occurrence);
    };
    auto [point, occurrence] = drawPoint();
    const bool simCommit = config.sim && point == QLatin1String("write-committed");
    if (simCommit)
        occurrence = 1; // the fault holds the next write, which is the first
    const bool killWhileResuming = pick(4) == 0;
    const auto [secondPoint, secondOccurrence] = drawPoint();
    const QString context = QStringLiteral("%1 run %2: %3#%4%5 scenario \"%6\"")
                                .arg(config.name())
                                .arg(run)
                                .arg(point)
                                .arg(occurrence)
                                .arg(killWhileResuming
                                         ? QStringLiteral(" then %1#%2").arg(secondPoint)
                                               .arg(secondOccurrence)
                                         : QString())
                                .arg(scenario.questions.first());
    const auto fail = [&](const QString &what) {
        QTest::qFail(qPrintable(context + QStringLiteral(": ") + what), __FILE__, __LINE__);
        return false;
    };

    const QString dataDir = m_dir.filePath(QStringLiteral("%1-%2").arg(
        QString(config.name()).replace(QLatin1Char('/'), QLatin1Char('-'))).arg(run));
    const QStringList arguments = baseArguments(config, dataDir);
    ++tally.runs;

    // 1. The first run, killed at its point.
    QString error;
    const qsizetype committedBefore = m_sim.committedKeys().size();
    if (simCommit
        && !m_sim.putFaults(R"({"routes":{"tickets":{"commitThenHang":true,"times":1}}})",
                            &error))
        return fail(QStringLiteral("cannot set the sim's fault: ") + error);
    {
        CliRun first(arguments, simCommit ? QString() : point + QStringLiteral("#%1")
                                                              .arg(occurrence),
                     scenario.questions);
        const CliRun::End end = first.finish([&] {
            return simCommit && m_sim.committedKeys().size() > committedBefore;
        });
        if (end == CliRun::End::TimedOut)
            return fail(QStringLiteral("the first run neither reached its point nor ended; "
                                       "stderr: ") + QString::fromUtf8(first.standardError()));
        if (end == CliRun::End::Killed) {
            ++tally.reached;
            ++tally.byPoint[simCommit ? QStringLiteral("sim-committed") : point];
        }
    }
    if (simCommit && !m_sim.putFaults(R"({"routes":{}})", &error))
        return fail(QStringLiteral("cannot clear the sim's fault: ") + error);

    // 2. Sometimes a second crash, while resuming.
    QStringList resumeArguments = arguments;
    resumeArguments.append(QStringLiteral("--resume"));
    if (killWhileResuming && !(config.sim && secondPoint == QLatin1String("write-committed"))) {
        CliRun second(resumeArguments, secondPoint + QStringLiteral("#%1").arg(secondOccurrence),
                      {});
        const CliRun::End end = second.finish();
        if (end == CliRun::End::TimedOut)
            return fail(QStringLiteral("the resume that was to be killed hung"));
        if (end == CliRun::End::Killed) {
            ++tally.reached;
            ++tally.secondKills;
            ++tally.byPoint[secondPoint];
        }
    }

    // 3. The final resume, left alone.
    {
        CliRun last(resumeArguments, {}, {});
        if (last.finish() != CliRun::End::Exited)
            return fail(QStringLiteral("the final --resume did not end; stderr: ")
                        + QString::fromUtf8(last.standardError()));
        if (last.exitCode() != 0)
            return fail(QStringLiteral("the final --resume exited with %1; stderr: %2")
                            .arg(last.exitCode())
                            .arg(QString::fromUtf8(last.standardError())));
    }

    // 4. Every turn completed, every write exactly once, no stored result lost.
    SqliteReader journal(QDir(dataDir).filePath(QStringLiteral("turns.sqlite")));
    if (!journal.isOpen())
        return fail(QStringLiteral("no turn journal"));
    QSqlQuery turns = journal.query(
        QStringLiteral("SELECT request_id, stage, resumable, state_json FROM turn_checkpoints"));
    int turnCount = 0;
    QList<QPair<QString, QString>> writes; // operationId, ticketId in the checkpoint
    while (turns.next()) {
        ++turnCount;
        const QString requestId = turns.value(0).toString();
        if (turns.value(1).toString() != QLatin1String("COMPLETED") || turns.value(2).toInt())
            return fail(QStringLiteral("turn %1 ended at %2").arg(requestId,
                                                                  turns.value(1).toString()));
        const QJsonObject state
            = QJsonDocument::fromJson(turns.value(3).toString().toUtf8()).object();
        if (state.value(QLatin1String("answer")).toString().isEmpty())
            return fail(QStringLiteral("turn %1 has no answer").arg(requestId));
        for (const QJsonValue &value : state.value(QLatin1String("toolCalls")).toArray()) {
            const QJsonObject call = value.toObject();
            const QJsonObject result = call.value(QLatin1String("result")).toObject();
            if (!call.value(QLatin1String("finished")).toBool())
                return fail(QStringLiteral("a tool call of %1 has no result").arg(requestId));
            if (call.value(QLatin1String("name")).toString() != QLatin1String("createTicket"))
                continue;
            const QString ticketId = result.value(QLatin1String("data")).toObject()
                                         .value(QLatin1String("ticketId")).toString();
            if (!result.value(QLatin1String("success")).toBool() || ticketId.isEmpty())
                return fail(QStringLiteral("the write of %1 ended %2")
                                .arg(requestId,
                                     result.value(QLatin1String("code")).toString()));
            writes.append({call.value(QLatin1String("operationId")).toString(), ticketId});
        }
    }
    if (turnCount == 0)
        return fail(QStringLiteral("no turn was recorded"));
    tally.turns += turnCount;

    const QString ledgerSpec = config.postgres ? m_pgUrl : QString();
    LedgerOpening opening = openLedger(ledgerSpec, dataDir);
    if (!opening.ledger)
        return fail(opening.error);
    QFuture<LedgerOpenResult> opened = opening.ledger->open();
    opened.waitForFinished();
    if (!opened.result().ready())
        return fail(QStringLiteral("the ledger did not open: ") + opened.result().detail);
    for (const auto &[operationId, ticketId] : std::as_const(writes)) {
        ++tally.writes;
        const auto tickets = backendTickets(config, dataDir, operationId);
        if (!tickets)
            return fail(QStringLiteral("cannot count the tickets of ") + operationId);
        ++tally.ticketsPerKey[tickets->first];
        if (tickets->first != 1)
            return fail(QStringLiteral("%1 owns %2 tickets").arg(operationId)
                            .arg(tickets->first));
        if (tickets->second != ticketId)
            return fail(QStringLiteral("%1: the checkpoint says %2, the backend %3")
                            .arg(operationId, ticketId, tickets->second));
        QFuture<LedgerLookup> row = opening.ledger->lookup(operationId);
        row.waitForFinished();
        if (!row.result().row || row.result().row->status != LedgerStatus::Succeeded)
            return fail(QStringLiteral("the ledger row of %1 is not SUCCEEDED").arg(operationId));
        const QString stored = row.result().row->result.value(QLatin1String("data")).toObject()
                                   .value(QLatin1String("ticketId")).toString();
        if (stored != ticketId)
            return fail(QStringLiteral("the ledger holds %1 for %2, the checkpoint %3")
                            .arg(stored, operationId, ticketId));
    }
    if (config.sim) {
        const int duplicates = m_sim.stats().value(QLatin1String("duplicateTickets")).toInt(-1);
        if (duplicates != 0)
            return fail(QStringLiteral("the sim reports %1 duplicated keys").arg(duplicates));
    } else {
        SqliteReader store(QDir(dataDir).filePath(QStringLiteral("support-store.sqlite")));
        QSqlQuery duplicates = store.query(QStringLiteral(
            "SELECT COUNT(*) FROM (SELECT 1 FROM tickets GROUP BY tenant_id, idempotency_key "
            "HAVING COUNT(*) > 1)"));
        if (!duplicates.next() || duplicates.value(0).toInt() != 0)
            return fail(QStringLiteral("the store has duplicated keys"));
    }
    return true;
}

void tst_CrashInjection::killAndResume()
{
    QFETCH(bool, sim);
    QFETCH(bool, postgres);
    const Config config{sim, postgres};
    m_pgUrl.clear();
    if (postgres) {
        QString error;
        m_pgUrl = m_databases.create(&error);
        QVERIFY2(!m_pgUrl.isEmpty(), qPrintable(error));
    }
    bool ok = false;
    int runs = qEnvironmentVariableIntValue("AGENT_CONSOLE_CRASH_RUNS", &ok);
    if (!ok || runs <= 0)
        runs = 200;
    // One seed per configuration: a failure names its run, and the same run fails again.
    std::mt19937 random(20261129u + (sim ? 2u : 0u) + (postgres ? 1u : 0u));
    Tally tally;
    for (int run = 1; run <= runs; ++run) {
        if (!runOnce(config, random, run, tally))
            return;
    }
    const QString summary = tally.summary(config.name());
    qInfo().noquote() << summary;
    m_summaries.append(summary);
    m_total.add(tally);
    QCOMPARE(tally.ticketsPerKey.keys(), QList<int>{1});
    QVERIFY2(tally.reached >= runs * 3 / 4, qPrintable(summary)); // the points are really hit
}

void tst_CrashInjection::cleanupTestCase()
{
    if (m_total.runs)
        qInfo().noquote() << m_total.summary(QStringLiteral("total"));
    m_sim.stop();
}

QTEST_GUILESS_MAIN(tst_CrashInjection)
#include "tst_crashinjection.moc"
