#include "core/mcp/mcpserver.h"
#include "core/resilience/resultcode.h"
#include "core/resilience/toolexecutor.h"

#include <QFile>
#include <QFutureWatcher>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Mcp;

namespace {

constexpr int kWaitMs = 15000;

ServerConfig fake(const QString &program = QStringLiteral(FAKE_MCP_SERVER))
{
    ServerConfig config;
    config.name = QStringLiteral("fake");
    config.command = program;
    config.args = {QStringLiteral("normal")};
    return config;
}

Server::Options quickRestarts(int maxRestarts)
{
    Server::Options options;
    options.restartInitialMs = 50;
    options.maxRestarts = maxRestarts;
    return options;
}

} // namespace

// A configured server kept running: restarted with backoff when it dies, shown as down, given
// up after a bounded number of restarts in a row.
class tst_McpServer : public QObject
{
    Q_OBJECT

private slots:
    void startsAndOffersItsTools();
    void restartsAfterACrash();
    void staysDownAfterItsRestarts();
    void closingEndsItAsTheSpecificationSays_data();
    void closingEndsItAsTheSpecificationSays();
};

void tst_McpServer::startsAndOffersItsTools()
{
    Config config;
    config.servers = {fake()};
    ServerSet set(config, {});
    QSignalSpy settled(&set, &ServerSet::settled);
    set.start();
    QVERIFY(settled.wait(kWaitMs));
    QCOMPARE(set.servers().first()->state(), Server::State::Ready);
    QCOMPARE(set.tools().size(), 13);
}

void tst_McpServer::restartsAfterACrash()
{
    Server server(fake(), quickRestarts(3));
    QSignalSpy states(&server, &Server::stateChanged);
    QSignalSpy tools(&server, &Server::toolsChanged);
    server.start();
    QVERIFY(tools.wait(kWaitMs));
    std::shared_ptr<McpTool> crash;
    for (const auto &tool : server.tools())
        crash = tool->info().name == QLatin1String("crash") ? tool : crash;
    QVERIFY(crash);
    ToolExecutor executor;
    RetryPolicy once = crash->retryPolicy(RetryPolicy::defaults());
    once.maxRetries = 0;
    QFutureWatcher<ToolCallOutcome> watcher;
    QSignalSpy finished(&watcher, &QFutureWatcher<ToolCallOutcome>::finished);
    ToolCallRequest request;
    request.tool = crash;
    request.context.userId = QStringLiteral("u");
    request.context.tenantId = QStringLiteral("t");
    request.policy = once;
    watcher.setFuture(executor.execute(std::move(request)));
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(watcher.result().result.code, ResultCode::ToolUnavailable);
    // Down, then a new child, ready with its tools again.
    QVERIFY(tools.wait(kWaitMs));
    QCOMPARE(server.state(), Server::State::Ready);
    QList<Server::State> seen;
    for (const auto &change : std::as_const(states))
        seen.append(change.first().value<Server::State>());
    QCOMPARE(seen, (QList<Server::State>{Server::State::Ready, Server::State::Down,
                                         Server::State::Starting, Server::State::Ready}));
    QVERIFY(server.lastError().isEmpty());
}

void tst_McpServer::staysDownAfterItsRestarts()
{
    Server server(fake(QStringLiteral("/nonexistent/mcp-server")), quickRestarts(2));
    QSignalSpy states(&server, &Server::stateChanged);
    QSignalSpy settled(&server, &Server::settled);
    server.start();
    QVERIFY(settled.wait(kWaitMs)); // shown as down after the first attempt
    QCOMPARE(server.state(), Server::State::Down);
    // Down; two restarts (after 50 ms, then 100 ms), each starting and down again; no more.
    QTRY_COMPARE_WITH_TIMEOUT(states.size(), 5, kWaitMs);
    QVERIFY(!states.wait(500)); // nothing more happens: a bounded wait, not a sleep
    QCOMPARE(server.state(), Server::State::Down);
    QVERIFY(server.lastError().contains(QStringLiteral("could not start")));
}

// Ending the console (agent-cli's end, issue #40 §4): a call in flight is told
// notifications/cancelled and ends as cancelled, then the server's stdin is closed; one that
// ignores that gets SIGTERM. The server writes down what it saw (FAKE_MCP_EFFECTS), in order.
void tst_McpServer::closingEndsItAsTheSpecificationSays_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QStringList>("seen");
    QTest::newRow("exits when its stdin closes")
        << QStringLiteral("normal")
        << QStringList{"call hang", "cancelled", "stdin closed"};
    QTest::newRow("ignores its stdin, ends on SIGTERM")
        << QStringLiteral("stubborn")
        << QStringList{"call hang", "cancelled", "stdin closed", "SIGTERM"};
}

void tst_McpServer::closingEndsItAsTheSpecificationSays()
{
    QFETCH(QString, mode);
    QFETCH(QStringList, seen);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString effects = dir.filePath(QStringLiteral("effects.txt"));
    ServerConfig config = fake();
    config.args = {mode};
    config.env = {{QStringLiteral("FAKE_MCP_EFFECTS"), effects}};
    Config both;
    both.servers = {config};
    ServerSet set(both, {});
    QSignalSpy settled(&set, &ServerSet::settled);
    set.start();
    QVERIFY(settled.wait(kWaitMs));
    std::shared_ptr<McpTool> hang;
    for (const auto &tool : set.tools()) {
        if (tool->info().name == QLatin1String("hang"))
            hang = tool;
    }
    QVERIFY(hang);
    std::optional<AttemptResult> ended;
    const auto stopAttempt = hang->startAttempt({}, {}, AttemptContext{},
                                                [this, &ended](AttemptResult result) {
        QMetaObject::invokeMethod(this, [&ended, result] { ended = result; },
                                  Qt::QueuedConnection);
    });
    Q_UNUSED(stopAttempt)
    const auto read = [&effects] {
        QFile file(effects);
        return file.open(QIODevice::ReadOnly)
            ? QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts)
            : QStringList();
    };
    QTRY_COMPARE_WITH_TIMEOUT(read(), QStringList{"call hang"}, kWaitMs);

    bool closed = false;
    set.closeAll(kWaitMs, this, [&closed] { closed = true; });
    QTRY_VERIFY_WITH_TIMEOUT(closed, kWaitMs);
    QCOMPARE(read(), seen);
    QTRY_VERIFY_WITH_TIMEOUT(ended.has_value(), kWaitMs);
    QCOMPARE(ended->failure, FailureKind::Cancelled);
}

QTEST_GUILESS_MAIN(tst_McpServer)
#include "tst_mcpserver.moc"
