// journal_bench: what one tool-result checkpoint costs a turn, against how many results the
// turn already holds (issue #8).
//
//   append      what the loop does now: the finished call alone is made JSON on the caller's
//               thread (TurnCheckpoint::toolCallJson) and appended as its own row
//               (TurnJournal::appendToolResult)
//   whole turn  what it did before journal schema 2: the whole turn, conversation and every
//               call so far, made JSON on the caller's thread (TurnCheckpoint::toEntry) and
//               saved over the turn's row (TurnJournal::save)
//
// for turns of 16 and of 1,000 tool results, one checkpoint per result, each waited for (as
// the loop's watcher is); the smaller turns are repeated so that each size is measured over
// about 1,000 checkpoints. "caller" is the part that ran on the loop's (the GUI) thread; "total"
// includes the database thread and the commit (SQLite WAL, synchronous FULL: an fsync each).
// The ratio is the cost per checkpoint at 1,000 results over the cost at 16 (means, and the
// median of the total, which the machine's other work moves less): 1 means the cost does not
// grow with the turn.
//
// Run by hand: build/tests/bench/journal_bench [calls...]   (default 16 1000)
// The last line is machine-readable:
//   append_ratio=R whole_turn_ratio=W   (caller-thread time per checkpoint, largest / smallest)

#include "core/turn/turncheckpoint.h"
#include "core/ledger/turnjournal.h"

#include "benchhost.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
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
        const QString raw = QString::fromUtf8(QJsonDocument(arguments).toJson(
            QJsonDocument::Compact));
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
        QStringLiteral("Order %1 is in transit with SF Express.").arg(call.arguments
            .value(QLatin1String("orderId")).toString()),
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

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.*.info=false"));
    QList<int> sizes;
    for (int i = 1; i < argc; ++i)
        sizes.append(QByteArray(argv[i]).toInt());
    if (sizes.isEmpty())
        sizes = {16, 1000};

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
    std::printf("journal_bench: %s\n", Bench::hostLine().constData());
    std::printf("one checkpoint per tool result, SQLite WAL FULL, in %s\n",
                qPrintable(dir.path()));
    std::printf("%-11s %6s %14s %14s %15s %10s\n", "mode", "calls", "caller ms/cp",
                "total ms/cp", "median total ms", "bytes/cp");
    if (sizes.size() < 2 || sizes.constFirst() <= 0 || sizes.constLast() < sizes.constFirst()) {
        std::printf("give at least two sizes, smallest first\n");
        return 1;
    }
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
                ratio(whole, &Figures::medianTotalMs),
                ratio(whole, &Figures::bytesPerCheckpoint));
    std::printf("load average after the run: %s\n", qPrintable(Bench::loadAverage()));
    std::printf("append_ratio=%.2f whole_turn_ratio=%.1f\n",
                ratio(appended, &Figures::callerMsPerCheckpoint),
                ratio(whole, &Figures::callerMsPerCheckpoint));
    return 0;
}
