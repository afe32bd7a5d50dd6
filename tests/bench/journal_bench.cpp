// journal_bench: what the turn journal costs a turn, in two parts.
//
// Part 1, a tool result's checkpoint against how many results the turn already holds
// (issue #8):
//   append      what the loop does now: the finished call alone is made JSON on the caller's
//               thread (TurnCheckpoint::toolCallJson) and appended as its own row
//               (TurnJournal::appendToolResult)
//   whole turn  what it did before journal schema 2: the whole turn, conversation and every
//               call so far, made JSON on the caller's thread (TurnCheckpoint::toEntry) and
//               saved over the turn's row (TurnJournal::save)
// for turns of 16 and of 1,000 tool results, one checkpoint per result, each waited for (as
// the loop's watcher is); the smaller turns are repeated so that each size is measured over
// about 1,000 checkpoints. "caller" is the part that ran on the loop's (the GUI) thread; "total"
// includes the database thread and the commit (SQLite WAL, synchronous FULL: an fsync each).
// The ratio is the cost per checkpoint at 1,000 results over the cost at 16 (means, and the
// median of the total, which the machine's other work moves less): 1 means the cost does not
// grow with the turn.
//
// Part 2, a turn against how long its conversation already is (issue #43 §1): one
// conversation of 1,000 questions through a real runtime (the offline model, the embedded
// store, the SQLite ledger and journal in a temporary data directory on this disk), as
// agent-cli answers a conversation read from standard input. For the twelve turns around turn 10
// (5-16) and the last twelve (989-1000): the turn's wall time from the question to its end
// (median and mean), the GUI thread's CPU time in it, the bytes its checkpoints wrote
// (TurnJournal::activity) and the bytes the journal keeps of it (its row and what it added to
// the conversation, read from the file), and the file's growth (used pages) over each window.
// Each ratio is turn 1,000's over turn 10's; the target is <= 1.3 for the turn's time and for
// the journal's bytes. Then the same on a team's journal in PostgreSQL (issue #43 §2), in a
// database of its own on the cluster AGENT_CONSOLE_TEST_PG names (skipped, and said so, without
// it): its rows and segments read from the tables, its growth the tables' total size.
//
// Run by hand: build/tests/bench/journal_bench [calls...] [--turns N] [--only results|turns]
//   (default 16 1000, 1000 turns; about 2 minutes for each part)
// Exit status 3 when a ratio of part 2 is over its target (1 when the bench could not run).
// The last line is machine-readable:
//   append_ratio=R whole_turn_ratio=W turn_ms_ratio=T written_bytes_ratio=B kept_bytes_ratio=K
//   pg_turn_ms_ratio=T pg_written_bytes_ratio=B pg_kept_bytes_ratio=K (0 when not measured)
//   (part 1: caller-thread time per checkpoint, largest / smallest; part 2: turn 1,000 / 10)

#include "core/console/agentruntime.h"
#include "core/console/turnrecovery.h"
#include "core/ledger/postgresledger.h"
#include "core/ledger/turnjournal.h"
#include "core/turn/agentloop.h"
#include "core/turn/turncheckpoint.h"
#include "core/turn/turnresult.h"

#include "benchhost.h"
#include "testdatabases.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <memory>
#include <numeric>
#include <vector>

using namespace AgentConsole;

namespace {

struct Figures
{
    double callerMsPerCheckpoint = 0;
    double totalMsPerCheckpoint = 0;
    double medianTotalMs = 0; // robust against the machine's other work
    double bytesPerCheckpoint = 0;
    bool ok = true;
};

// A planned turn of `calls` logistics lookups in one round, none finished yet.
TurnCheckpoint plannedTurn(int calls)
{
    TurnCheckpoint turn;
    turn.stage = TurnStage::Planned;
    turn.userId = QStringLiteral("u-1001");
    turn.tenantId = QStringLiteral("t-acme");
    turn.conversationId = QStringLiteral("c-bench");
    turn.result.requestId = QStringLiteral("r-%1").arg(calls);
    turn.result.question = QStringLiteral("Where are these orders?");
    turn.result.toolRounds = 1;
    QList<ModelToolCall> plan;
    for (int i = 0; i < calls; ++i) {
        const QString orderId = QStringLiteral("A%1").arg(1000 + i);
        const QJsonObject arguments{{QStringLiteral("orderId"), orderId}};
        const QString raw = QString::fromUtf8(
            QJsonDocument(arguments).toJson(QJsonDocument::Compact));
        plan.append({QStringLiteral("call-%1").arg(i), QStringLiteral("queryLogistics"), raw});
        ToolCallRecord call;
        call.index = i;
        call.toolCallId = plan.last().id;
        call.name = plan.last().name;
        call.arguments = arguments;
        call.rawArguments = raw;
        call.operationId = QStringLiteral("t-acme:c-bench:%1:queryLogistics:%2")
                               .arg(turn.result.requestId)
                               .arg(i);
        turn.result.toolCalls.append(call);
    }
    turn.conversation = {ChatMessage::user(turn.result.question),
                         ChatMessage::assistant({}, plan)};
    return turn;
}

void finish(ToolCallRecord &call)
{
    call.state = ToolCallRecord::State::Finished;
    call.result = ToolResult::ok(
        QStringLiteral("Order %1 is in transit with SF Express.")
            .arg(call.arguments.value(QLatin1String("orderId")).toString()),
        QJsonObject{{QStringLiteral("carrier"), QStringLiteral("SF Express")},
                    {QStringLiteral("trackingNo"), QStringLiteral("SF10010001")},
                    {QStringLiteral("location"), QStringLiteral("Shanghai Pudong Hub")}});
    call.attempts = {{1, 0, 12, AttemptOutcome::Succeeded, -1}};
    call.totalMs = 12;
}

// `turns` turns of `calls` results each, so that every size is measured over about as many
// checkpoints (and fsyncs) as the largest.
Figures measure(TurnJournal &journal, int calls, int turns, bool append)
{
    qint64 callerNs = 0;
    qint64 bytes = 0;
    qint64 checkpoints = 0;
    std::vector<qint64> eachNs;
    QElapsedTimer total;
    total.start();
    for (int t = 0; t < turns; ++t) {
        TurnCheckpoint turn = plannedTurn(calls);
        const QString requestId = QStringLiteral("r-%1-%2-%3")
                                      .arg(calls)
                                      .arg(t)
                                      .arg(append ? QStringLiteral("append")
                                                  : QStringLiteral("whole"));
        for (ToolCallRecord &call : turn.result.toolCalls)
            call.operationId.replace(QLatin1Char(':') + turn.result.requestId + QLatin1Char(':'),
                                     QLatin1Char(':') + requestId + QLatin1Char(':'));
        turn.result.requestId = requestId;
        QFuture<JournalWrite> planned = journal.save(turn.toEntry());
        planned.waitForFinished();
        if (!planned.result().ok)
            return {0, 0, 0, 0, false};
        for (int i = 0; i < calls; ++i) {
            finish(turn.result.toolCalls[i]);
            QElapsedTimer caller;
            caller.start();
            QFuture<JournalWrite> written;
            const qint64 startedNs = total.nsecsElapsed();
            if (append) {
                written = journal.appendToolResult(turn.conversationId, requestId, i,
                                                   TurnCheckpoint::toolCallJson(
                                                       turn.result.toolCalls[i]));
            } else {
                written = journal.save(turn.toEntry());
            }
            callerNs += caller.nsecsElapsed();
            written.waitForFinished();
            eachNs.push_back(total.nsecsElapsed() - startedNs);
            if (!written.result().ok)
                return {0, 0, 0, 0, false};
            bytes += written.result().bytes;
            ++checkpoints;
        }
    }
    // The plan's own save is in `total` once per turn: it is one per round, not per result.
    Figures figures;
    figures.callerMsPerCheckpoint = callerNs / 1e6 / checkpoints;
    figures.totalMsPerCheckpoint = total.nsecsElapsed() / 1e6 / checkpoints;
    figures.bytesPerCheckpoint = double(bytes) / checkpoints;
    std::nth_element(eachNs.begin(), eachNs.begin() + eachNs.size() / 2, eachNs.end());
    figures.medianTotalMs = eachNs[eachNs.size() / 2] / 1e6;
    return figures;
}

// Part 2: one conversation through a real runtime.

constexpr int kTurnLimitMs = 60'000;
// Turns measured around turn 10 and at the end: a multiple of the questions' cycle (4), both
// windows starting on the same question, so that both hold the same mix.
constexpr int kWindow = 12;
constexpr int kQuestionCycle = 4;
constexpr double kTarget = 1.3;

double threadCpuMs()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) * 1e3 + double(now.tv_nsec) / 1e6;
}

// Questions staff ask, in English and Chinese, one or two intents each: cards and a real answer
// every turn, answers of a few sizes.
QString questionFor(int turn)
{
    const int order = 1001 + turn % 40;
    const int sku = 100 + (turn % 3) * 100;
    switch (turn % 4) {
    case 0:
        return QStringLiteral("Where is order A%1 and is SKU-%2 in stock?").arg(order).arg(sku);
    case 1:
        return QStringLiteral("查询订单 A%1 的物流位置").arg(order);
    case 2:
        return QStringLiteral("What is the status of order A%1?").arg(order);
    default:
        return QStringLiteral("SKU-%1 还有库存吗？订单 A%2 到哪了？").arg(sku).arg(order);
    }
}

struct TurnCost
{
    double wallMs = 0;
    double cpuMs = 0; // the GUI thread's (the loop's, the runtime's)
    qint64 writtenBytes = 0; // what its checkpoints and results wrote (TurnJournal::activity)
    qint64 keptBytes = 0; // what the journal keeps of it once it is over
};

// The journal file as a reader sees it: what a turn left, and the pages in use. A connection
// of its own (WAL: it reads what was committed, the runtime's connection is not disturbed).
class JournalReader
{
public:
    // A team's journal on PostgreSQL: the same figures from its tables (`owner`: the agent's).
    JournalReader(const PostgresLocation &location, const QString &owner)
        : m_name(QStringLiteral("journal_bench-reader-pg"))
        , m_owner(owner)
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), m_name);
        db.setHostName(location.host);
        db.setPort(location.port);
        db.setUserName(location.userName);
        db.setDatabaseName(location.database);
        m_ok = db.open();
        m_postgres = true;
        m_segments = true;
    }

    explicit JournalReader(const QString &path)
        : m_name(QStringLiteral("journal_bench-reader"))
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY"));
        m_ok = db.open();
        QSqlQuery tables(db);
        m_segments = m_ok
            && tables.exec(QStringLiteral("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                                          "AND name = 'conversation_segments'"))
            && tables.next();
    }
    ~JournalReader() { QSqlDatabase::removeDatabase(m_name); }

    bool ok() const { return m_ok; }

    // The bytes of the turn's row, its appended results, and (once the journal keeps each
    // turn's part of the conversation apart) that part.
    qint64 keptBytes(const QString &conversationId, const QString &requestId) const
    {
        QSqlQuery query(QSqlDatabase::database(m_name, false));
        if (m_postgres) {
            query.prepare(QStringLiteral(
                "SELECT octet_length(state_json) + octet_length(counters_json) "
                "+ octet_length(title) + octet_length(outcome) + octet_length(search_text) "
                "+ octet_length(owner) "
                "+ (SELECT COALESCE(SUM(octet_length(record_json)), 0) FROM turn_tool_results r "
                "   WHERE r.owner = t.owner AND r.conversation_id = t.conversation_id "
                "   AND r.request_id = t.request_id) "
                "+ (SELECT COALESCE(SUM(octet_length(s.messages_json) + "
                "octet_length(s.start_hash) "
                "   + octet_length(s.end_hash)), 0) FROM conversation_segments s "
                "   WHERE s.owner = t.owner AND s.conversation_id = t.conversation_id "
                "   AND s.segment = t.segment) "
                "FROM turn_checkpoints t WHERE owner = ? AND conversation_id = ? "
                "AND request_id = ?"));
            query.addBindValue(m_owner);
            query.addBindValue(conversationId);
            query.addBindValue(requestId);
            return query.exec() && query.next() ? query.value(0).toLongLong() : -1;
        }
        query.prepare(
            QStringLiteral(
                "SELECT length(CAST(state_json AS BLOB)) + length(CAST(counters_json AS BLOB)) "
                "+ length(CAST(title AS BLOB)) + length(CAST(outcome AS BLOB)) "
                "+ length(CAST(search_text AS BLOB)) + length(CAST(owner AS BLOB)) "
                "+ (SELECT COALESCE(SUM(length(CAST(record_json AS BLOB))), 0) "
                "   FROM turn_tool_results r WHERE r.conversation_id = t.conversation_id "
                "   AND r.request_id = t.request_id)%1 "
                "FROM turn_checkpoints t WHERE conversation_id = ? AND request_id = ?")
                .arg(m_segments ? QStringLiteral(
                         " + (SELECT COALESCE(SUM(length(CAST(s.messages_json AS "
                         "BLOB)) + length(s.start_hash) + length(s.end_hash)), 0) "
                         "FROM conversation_segments s WHERE s.conversation_id = "
                         "t.conversation_id AND s.segment = t.segment)")
                                : QString()));
        query.addBindValue(conversationId);
        query.addBindValue(requestId);
        return query.exec() && query.next() ? query.value(0).toLongLong() : -1;
    }

    // Pages in use (not free) times the page size: the file as it would be checkpointed.
    qint64 usedBytes() const
    {
        QSqlQuery query(QSqlDatabase::database(m_name, false));
        if (m_postgres) // the tables with their indexes and TOAST, as the server holds them
            return query.exec(QStringLiteral("SELECT pg_total_relation_size('turn_checkpoints') "
                                             "+ pg_total_relation_size('conversation_segments') "
                                             "+ pg_total_relation_size('turn_tool_results')"))
                    && query.next()
                ? query.value(0).toLongLong()
                : -1;
        qint64 pages = 0;
        qint64 free = 0;
        qint64 size = 0;
        if (query.exec(QStringLiteral("PRAGMA page_count")) && query.next())
            pages = query.value(0).toLongLong();
        if (query.exec(QStringLiteral("PRAGMA freelist_count")) && query.next())
            free = query.value(0).toLongLong();
        if (query.exec(QStringLiteral("PRAGMA page_size")) && query.next())
            size = query.value(0).toLongLong();
        return (pages - free) * size;
    }

private:
    QString m_name;
    QString m_owner;
    bool m_ok = false;
    bool m_segments = false;
    bool m_postgres = false;
};

struct WindowFigures
{
    int first = 0; // 1-based turn numbers
    int last = 0;
    double medianMs = 0;
    double meanMs = 0;
    double cpuMs = 0;
    double writtenBytes = 0;
    double keptBytes = 0;
    double growthBytes = 0; // used pages' growth over the window, per turn
};

double median(std::vector<double> values)
{
    if (values.empty())
        return 0;
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    return values[values.size() / 2];
}

WindowFigures windowOf(const std::vector<TurnCost> &turns, int first, int last, qint64 usedBefore,
                       qint64 usedAfter)
{
    WindowFigures w;
    w.first = first;
    w.last = last;
    std::vector<double> wall;
    for (int t = first; t <= last; ++t) {
        const TurnCost &cost = turns[t - 1];
        wall.push_back(cost.wallMs);
        w.meanMs += cost.wallMs;
        w.cpuMs += cost.cpuMs;
        w.writtenBytes += double(cost.writtenBytes);
        w.keptBytes += double(cost.keptBytes);
    }
    const int n = last - first + 1;
    w.medianMs = median(wall);
    w.meanMs /= n;
    w.cpuMs /= n;
    w.writtenBytes /= n;
    w.keptBytes /= n;
    w.growthBytes = double(usedAfter - usedBefore) / n;
    return w;
}

struct ConversationRun
{
    bool ok = false;
    QString error;
    WindowFigures early;
    WindowFigures late;
    qint64 usedBytes = 0; // the journal's pages in use at the end
    qint64 fileBytes = 0; // turns.sqlite and its WAL at the end (the WAL is not truncated)
};

// `teamUrl`: a team's PostgreSQL database for the journal; empty: the data directory's file.
ConversationRun runConversation(int turns, const QString &teamUrl)
{
    ConversationRun run;
    // On the disk the data dir would be on (not tmpfs), so that FULL pays for its fsyncs.
    QTemporaryDir dataDir(QDir::current().filePath(QStringLiteral("journal_bench-XXXXXX")));
    if (!dataDir.isValid()) {
        run.error = QStringLiteral("cannot make a temporary directory here");
        return run;
    }
    RuntimeOptions options;
    options.dataDirectory = dataDir.path();
    options.teamSpec = teamUrl;
    AgentRuntime runtime(options);
    {
        QEventLoop wait;
        QObject::connect(&runtime, &AgentRuntime::ready, &wait, &QEventLoop::quit);
        QObject::connect(&runtime, &AgentRuntime::failed, &wait, &QEventLoop::quit);
        runtime.start();
        if (!runtime.isReady())
            wait.exec();
    }
    if (!runtime.isReady()) {
        run.error = QStringLiteral("the runtime did not start");
        return run;
    }
    AgentLoop *loop = runtime.agentLoop();
    TurnJournal *journal = runtime.recovery()->journal();
    std::optional<PostgresLocation> team;
    if (!teamUrl.isEmpty()) {
        QString error;
        team = PostgresLocation::fromUrl(teamUrl, &error);
    }
    const JournalReader reader = team
        ? JournalReader(*team, conversationOwner(loop->session().tenantId, loop->session().userId))
        : JournalReader(journal->filePath());
    if (!reader.ok()) {
        run.error = QStringLiteral("cannot read the journal file");
        return run;
    }
    // Windows of kWindow turns around turn 10 (from turn 5 on, past the first turns' warm-up)
    // and at the end, on the same question of the cycle (they overlap when the run is short).
    const int lateFirst = std::max(1, turns - kWindow + 1);
    const int earlyFirst = std::min(lateFirst,
                                    5 + (lateFirst - 5 + kQuestionCycle * 1000) % kQuestionCycle);
    const int earlyLast = std::min(turns, earlyFirst + kWindow - 1);
    const QList<int> usedAt{earlyFirst - 1, earlyLast, lateFirst - 1, turns};
    QHash<int, qint64> used;

    std::vector<TurnCost> costs;
    costs.reserve(turns);
    TurnResult last;
    QEventLoop wait;
    QTimer limit;
    limit.setSingleShot(true);
    QObject::connect(&limit, &QTimer::timeout, &wait, &QEventLoop::quit);
    QObject::connect(loop, &AgentLoop::turnFinished, &wait, [&](const TurnResult &result) {
        last = result;
        wait.quit();
    });
    QElapsedTimer clock;
    clock.start();
    for (int turn = 1; turn <= turns; ++turn) {
        if (usedAt.contains(turn - 1))
            used.insert(turn - 1, reader.usedBytes());
        const JournalActivity before = journal->activity();
        const double cpuBefore = threadCpuMs();
        QElapsedTimer wall;
        wall.start();
        last = {};
        const QString requestId = loop->ask(questionFor(turn));
        if (requestId.isEmpty()) {
            run.error = QStringLiteral("turn %1 was not taken").arg(turn);
            return run;
        }
        limit.start(kTurnLimitMs);
        wait.exec();
        limit.stop();
        TurnCost cost;
        cost.wallMs = wall.nsecsElapsed() / 1e6;
        cost.cpuMs = threadCpuMs() - cpuBefore;
        if (last.requestId != requestId) {
            run.error
                = QStringLiteral("turn %1 did not finish in %2 ms").arg(turn).arg(kTurnLimitMs);
            return run;
        }
        if (last.status != TurnStatus::Completed) {
            run.error = QStringLiteral("turn %1 ended %2: %3")
                            .arg(turn)
                            .arg(turnStatusName(last.status), last.answer.left(200));
            return run;
        }
        // A result's append may still be on its way; the journal's queue is ordered, so one
        // more request waits for it.
        QFuture<std::optional<JournalEntry>> flushed = journal->entry({}, {});
        flushed.waitForFinished();
        const JournalActivity after = journal->activity();
        cost.writtenBytes = after.savedBytes - before.savedBytes + after.appendedBytes
            - before.appendedBytes;
        cost.keptBytes = reader.keptBytes(last.conversationId, requestId);
        costs.push_back(cost);
        if (turn % 100 == 0 || turn == turns)
            std::printf("  turn %4d: %7.1f ms, GUI CPU %6.1f ms, written %8lld B, kept %8lld B "
                        "(%.0f s so far)\n",
                        turn, cost.wallMs, cost.cpuMs, qint64(cost.writtenBytes),
                        qint64(cost.keptBytes), clock.elapsed() / 1e3);
        std::fflush(stdout);
    }
    used.insert(turns, reader.usedBytes());
    run.early = windowOf(costs, earlyFirst, earlyLast, used.value(earlyFirst - 1),
                         used.value(earlyLast));
    run.late = windowOf(costs, lateFirst, turns, used.value(lateFirst - 1), used.value(turns));
    run.usedBytes = used.value(turns);
    const QString path = journal->filePath();
    run.fileBytes = team
        ? run.usedBytes
        : QFileInfo(path).size() + QFileInfo(path + QStringLiteral("-wal")).size();
    run.ok = true;
    return run;
}

double ratioOf(double late, double early)
{
    return early > 0 ? late / early : 0;
}

int runResults(const QList<int> &sizes, double *appendRatio, double *wholeRatio)
{
    // On the disk the data dir would be on (not tmpfs), so that FULL pays for its fsyncs.
    QTemporaryDir dir(QDir::current().filePath(QStringLiteral("journal_bench-XXXXXX")));
    if (!dir.isValid()) {
        std::printf("cannot make a temporary directory here\n");
        return 1;
    }
    TurnJournal journal(dir.filePath(QStringLiteral("turns.sqlite")));
    QFuture<JournalOpenResult> opened = journal.open();
    opened.waitForFinished();
    if (!opened.result().ok) {
        std::printf("cannot open the journal: %s\n", qPrintable(opened.result().detail));
        return 1;
    }
    std::printf("part 1: one checkpoint per tool result, SQLite WAL FULL, in %s\n",
                qPrintable(dir.path()));
    std::printf("%-11s %6s %14s %14s %15s %10s\n", "mode", "calls", "caller ms/cp", "total ms/cp",
                "median total ms", "bytes/cp");
    QList<Figures> appended;
    QList<Figures> whole;
    for (const bool append : {true, false}) {
        for (const int calls : std::as_const(sizes)) {
            const int turns = std::max(1, sizes.constLast() / std::max(1, calls));
            const Figures f = measure(journal, calls, turns, append);
            if (!f.ok) {
                std::printf("a checkpoint failed\n");
                return 1;
            }
            (append ? appended : whole).append(f);
            std::printf("%-11s %6d %14.4f %14.3f %15.3f %10.0f\n",
                        append ? "append" : "whole turn", calls, f.callerMsPerCheckpoint,
                        f.totalMsPerCheckpoint, f.medianTotalMs, f.bytesPerCheckpoint);
        }
    }
    const auto ratio = [](const QList<Figures> &figures, double Figures::*field) {
        const double first = figures.constFirst().*field;
        return first > 0 ? figures.constLast().*field / first : 0.0;
    };
    std::printf("ratio %d/%d calls: append caller %.2f, total %.2f (median %.2f), bytes %.2f; "
                "whole turn caller %.1f, total %.1f (median %.1f), bytes %.1f\n",
                sizes.constLast(), sizes.constFirst(),
                ratio(appended, &Figures::callerMsPerCheckpoint),
                ratio(appended, &Figures::totalMsPerCheckpoint),
                ratio(appended, &Figures::medianTotalMs),
                ratio(appended, &Figures::bytesPerCheckpoint),
                ratio(whole, &Figures::callerMsPerCheckpoint),
                ratio(whole, &Figures::totalMsPerCheckpoint),
                ratio(whole, &Figures::medianTotalMs), ratio(whole, &Figures::bytesPerCheckpoint));
    *appendRatio = ratio(appended, &Figures::callerMsPerCheckpoint);
    *wholeRatio = ratio(whole, &Figures::callerMsPerCheckpoint);
    return 0;
}

struct ConversationRatios
{
    double turnMs = 0;
    double writtenBytes = 0;
    double keptBytes = 0;
    bool met = true;
};

// One conversation's figures on one store; false when it could not run.
bool reportConversation(int turns, const QString &teamUrl, ConversationRatios *ratios)
{
    const ConversationRun run = runConversation(turns, teamUrl);
    if (!run.ok) {
        std::printf("the conversation could not be run: %s\n", qPrintable(run.error));
        return false;
    }
    const WindowFigures &e = run.early;
    const WindowFigures &l = run.late;
    const auto line = [](const char *what, double early, double late, const char *format) {
        char a[32];
        char b[32];
        std::snprintf(a, sizeof a, format, early);
        std::snprintf(b, sizeof b, format, late);
        std::printf("  %-34s %14s %14s %7.2f\n", what, a, b, ratioOf(late, early));
    };
    std::printf("  %-34s %14s %14s %7s\n", "per turn",
                qPrintable(QStringLiteral("turns %1-%2").arg(e.first).arg(e.last)),
                qPrintable(QStringLiteral("turns %1-%2").arg(l.first).arg(l.last)), "ratio");
    line("turn time, median (ms)", e.medianMs, l.medianMs, "%.1f");
    line("turn time, mean (ms)", e.meanMs, l.meanMs, "%.1f");
    line("GUI thread CPU, mean (ms)", e.cpuMs, l.cpuMs, "%.2f");
    line("journal bytes written", e.writtenBytes, l.writtenBytes, "%.0f");
    line("journal bytes kept (rows)", e.keptBytes, l.keptBytes, "%.0f");
    line(teamUrl.isEmpty() ? "journal file growth (used pages)" : "journal tables' growth",
         e.growthBytes, l.growthBytes, "%.0f");
    if (teamUrl.isEmpty())
        std::printf("  journal at the end: %.2f MB in use; the files %.2f MB (turns.sqlite and "
                    "its WAL, which SQLite keeps at its size)\n",
                    run.usedBytes / 1e6, run.fileBytes / 1e6);
    else
        std::printf("  journal at the end: %.2f MB (its three tables with indexes and TOAST)\n",
                    run.usedBytes / 1e6);
    ratios->turnMs = ratioOf(l.medianMs, e.medianMs);
    ratios->writtenBytes = ratioOf(l.writtenBytes, e.writtenBytes);
    ratios->keptBytes = ratioOf(l.keptBytes, e.keptBytes);
    ratios->met = ratios->turnMs <= kTarget && ratios->writtenBytes <= kTarget
        && ratios->keptBytes <= kTarget;
    std::printf("  target: each ratio <= %.1f (turn time median, bytes written, bytes kept): "
                "%s\n",
                kTarget, ratios->met ? "met" : "MISSED");
    return true;
}

int runTurns(int turns, ConversationRatios *ratios, ConversationRatios *teamRatios)
{
    std::printf("part 2: one conversation of %d turns, offline model, embedded store\n", turns);
    std::printf("SQLite (WAL, synchronous FULL), in %s:\n", qPrintable(QDir::currentPath()));
    if (!reportConversation(turns, {}, ratios))
        return 1;
    // A team's journal (issue #43 §2): the same conversation on the PostgreSQL cluster that
    // scripts/test.sh starts, in a database of its own.
    if (!qEnvironmentVariableIsSet("AGENT_CONSOLE_TEST_PG")) {
        std::printf("PostgreSQL: not measured: AGENT_CONSOLE_TEST_PG is not set (scripts/test.sh "
                    "starts a cluster and sets it)\n");
        return 0;
    }
    Testing::TestDatabases databases(QStringLiteral("journal_bench"));
    QString error;
    const QString url = databases.create(&error);
    if (url.isEmpty()) {
        std::printf("PostgreSQL: not measured: %s\n", qPrintable(error));
        return 1;
    }
    std::printf("PostgreSQL (a team's journal, synchronous_commit on, over its Unix socket):\n");
    if (!reportConversation(turns, url, teamRatios))
        return 1;
    ratios->met = ratios->met && teamRatios->met;
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.*.info=false"));
    QList<int> sizes;
    int turns = 1000;
    bool results = true;
    bool conversation = true;
    const QStringList arguments = app.arguments().mid(1);
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const QString &argument = arguments.at(i);
        if (argument == QLatin1String("--turns") && i + 1 < arguments.size()) {
            turns = arguments.at(++i).toInt();
        } else if (argument == QLatin1String("--only") && i + 1 < arguments.size()) {
            const QString only = arguments.at(++i);
            results = only == QLatin1String("results");
            conversation = only == QLatin1String("turns");
        } else {
            sizes.append(argument.toInt());
        }
    }
    if (sizes.isEmpty())
        sizes = {16, 1000};
    if (sizes.size() < 2 || sizes.constFirst() <= 0 || sizes.constLast() < sizes.constFirst()
        || turns < 1) {
        std::printf("usage: journal_bench [calls...] [--turns N] [--only results|turns]: at "
                    "least two sizes of calls, smallest first; N at least 1\n");
        return 1;
    }
    std::printf("journal_bench: %s\n", Bench::hostLine().constData());
    double appendRatio = 0;
    double wholeRatio = 0;
    if (results && runResults(sizes, &appendRatio, &wholeRatio) != 0)
        return 1;
    ConversationRatios ratios;
    ConversationRatios teamRatios;
    if (conversation && runTurns(turns, &ratios, &teamRatios) != 0)
        return 1;
    std::printf("load average after the run: %s\n", qPrintable(Bench::loadAverage()));
    std::printf("append_ratio=%.2f whole_turn_ratio=%.1f turn_ms_ratio=%.2f "
                "written_bytes_ratio=%.2f kept_bytes_ratio=%.2f pg_turn_ms_ratio=%.2f "
                "pg_written_bytes_ratio=%.2f pg_kept_bytes_ratio=%.2f\n",
                appendRatio, wholeRatio, ratios.turnMs, ratios.writtenBytes, ratios.keptBytes,
                teamRatios.turnMs, teamRatios.writtenBytes, teamRatios.keptBytes);
    // The short run in ctest (AGENT_CONSOLE_BENCH_SHORT) checks that the bench works, not
    // its figures.
    return ratios.met || qEnvironmentVariableIsSet("AGENT_CONSOLE_BENCH_SHORT") ? 0 : 3;
}
