// team_bench (issue #43 §7): the team ledger and journal with 16 consoles at once against the
// same run with one console. Each console is an agent-cli process with a desk of its own (its
// data directory, the embedded store), on one team database of the PostgreSQL cluster that
// AGENT_CONSOLE_TEST_PG names, answering a conversation of ticket requests read from its
// standard input (--yes): every turn claims an operation id in the team ledger, runs the write,
// completes it, and checkpoints the turn in the team journal. Printed: each write turn's time
// as the turn itself reports it (totalMs: from the question to the answer, every ledger and
// journal round trip in it), p50 and p99 over all consoles, and turns per second over the whole
// run (first start to last exit), for 1 and for N consoles, with their ratio.
//
// Run by hand: build/tests/bench/team_bench [consoles] [turns per console]   (default 16 20)
// The last line is machine-readable: p50_ratio=R p99_ratio=R throughput_ratio=R
// Exit status 1 when it could not run.

#include "benchhost.h"
#include "testdatabases.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

using namespace AgentConsole;

namespace {

struct RunFigures
{
    bool ok = false;
    QString error;
    std::vector<double> turnMs; // every write turn of every console
    double wallSeconds = 0;
};

double percentile(std::vector<double> values, double p)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const std::size_t index = std::min(values.size() - 1,
                                       std::size_t(p / 100.0 * double(values.size())));
    return values[index];
}

RunFigures run(int consoles, int turns, const QString &teamUrl, const QString &directory)
{
    RunFigures figures;
    QByteArray questions;
    // One order per tenant's demo data, other words each turn: each turn a new operation id.
    for (int turn = 0; turn < turns; ++turn)
        questions += QStringLiteral("Create an after-sales ticket for order A1003: the lid is "
                                    "cracked (%1)\n")
                         .arg(turn)
                         .toUtf8();
    std::vector<std::unique_ptr<QProcess>> desks;
    QElapsedTimer wall;
    wall.start();
    for (int desk = 0; desk < consoles; ++desk) {
        auto process = std::make_unique<QProcess>();
        process->setProgram(QStringLiteral(AGENT_CLI_PATH));
        process->setArguments({QStringLiteral("--data-dir"),
                               QStringLiteral("%1/desk-%2").arg(directory).arg(desk),
                               QStringLiteral("--team"), teamUrl, QStringLiteral("--yes"),
                               QStringLiteral("--allow-duplicate"), QStringLiteral("--json"),
                               QStringLiteral("--user"),
                               desk % 2 ? QStringLiteral("u-1002") : QStringLiteral("u-1001")});
        process->start();
        process->write(questions);
        process->closeWriteChannel();
        desks.push_back(std::move(process));
    }
    for (int desk = 0; desk < consoles; ++desk) {
        QProcess &process = *desks[desk];
        if (!process.waitForFinished(600'000) || process.exitCode() != 0) {
            figures.error = QStringLiteral("console %1 ended %2: %3")
                                .arg(desk)
                                .arg(process.exitCode())
                                .arg(QString::fromUtf8(process.readAllStandardError().left(400)));
            return figures;
        }
        for (const QByteArray &line : process.readAllStandardOutput().split('\n')) {
            if (line.trimmed().isEmpty())
                continue;
            const QJsonObject turn = QJsonDocument::fromJson(line).object();
            if (turn.value(u"status").toString() != QLatin1String("completed")) {
                figures.error = QStringLiteral("a turn of console %1 did not complete").arg(desk);
                return figures;
            }
            figures.turnMs.push_back(turn.value(u"totalMs").toDouble());
        }
    }
    figures.wallSeconds = wall.nsecsElapsed() / 1e9;
    if (figures.turnMs.size() != std::size_t(consoles) * std::size_t(turns)) {
        figures.error = QStringLiteral("%1 turns answered of %2")
                            .arg(figures.turnMs.size())
                            .arg(consoles * turns);
        return figures;
    }
    figures.ok = true;
    return figures;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList arguments = app.arguments().mid(1);
    const int consoles = arguments.value(0, QStringLiteral("16")).toInt();
    const int turns = arguments.value(1, QStringLiteral("20")).toInt();
    if (consoles < 2 || turns < 1) {
        std::printf("usage: team_bench [consoles >= 2] [turns per console >= 1]\n");
        return 1;
    }
    std::printf("team_bench: %s\n", Bench::hostLine().constData());
    if (!qEnvironmentVariableIsSet("AGENT_CONSOLE_TEST_PG")) {
        std::printf("not run: AGENT_CONSOLE_TEST_PG is not set (scripts/pg-cluster.sh start DIR "
                    "prints the URL)\n");
        return 1;
    }
    Testing::TestDatabases databases(QStringLiteral("team_bench"));
    QTemporaryDir directory(QDir::current().filePath(QStringLiteral("team_bench-XXXXXX")));
    if (!directory.isValid())
        return 1;
    std::printf("%d write turns per console (a ticket each: the team ledger's claim and "
                "completion, the team journal's checkpoints), embedded store per desk\n",
                turns);
    std::printf("  %-10s %10s %10s %10s %12s\n", "consoles", "p50 (ms)", "p99 (ms)", "turns",
                "turns/s");
    RunFigures figures[2];
    const int counts[2] = {1, consoles};
    for (int i = 0; i < 2; ++i) {
        QString error;
        const QString url = databases.create(&error);
        if (url.isEmpty()) {
            std::printf("no database: %s\n", qPrintable(error));
            return 1;
        }
        figures[i] = run(counts[i], turns, url,
                         directory.filePath(QStringLiteral("run-%1").arg(counts[i])));
        if (!figures[i].ok) {
            std::printf("the run of %d consoles failed: %s\n", counts[i],
                        qPrintable(figures[i].error));
            return 1;
        }
        std::printf("  %-10d %10.1f %10.1f %10zu %12.1f\n", counts[i],
                    percentile(figures[i].turnMs, 50), percentile(figures[i].turnMs, 99),
                    figures[i].turnMs.size(),
                    double(figures[i].turnMs.size()) / figures[i].wallSeconds);
    }
    const double p50 = percentile(figures[1].turnMs, 50) / percentile(figures[0].turnMs, 50);
    const double p99 = percentile(figures[1].turnMs, 99) / percentile(figures[0].turnMs, 99);
    const double throughput = (double(figures[1].turnMs.size()) / figures[1].wallSeconds)
        / (double(figures[0].turnMs.size()) / figures[0].wallSeconds);
    std::printf("load average after the run: %s\n", qPrintable(Bench::loadAverage()));
    std::printf("p50_ratio=%.2f p99_ratio=%.2f throughput_ratio=%.2f\n", p50, p99, throughput);
    return 0;
}
