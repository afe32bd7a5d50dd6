#include "clirun.h"

#include "core/console/agentruntime.h"
#include "core/console/mcpservers.h"
#include "core/console/runtimemonitor.h"
#include "core/console/toolpolicies.h"
#include "core/mcp/mcpconfig.h"
#include "core/tools/toolregistry.h"

#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Mcp;
using AgentConsole::Testing::CliRun;

// mcp.json as the desktop clients write it, read with bounds and clear errors, and agent-cli's
// --mcp-config and --list-tools on it.
class tst_McpConfig : public QObject
{
    Q_OBJECT

private slots:
    void readsBothKinds();
    void refused_data();
    void refused();
    void boundedFile();
    void listToolsWithTheirPolicies();
    void timeoutsPastTheTurnAreLimitedAndSaidSo();
    void agentCliEndsItsServersCleanly();
    void brokenFileIsReportedAndLeftAlone();
    void theRuntimeRegistersAndReportsTheServers();

private:
    CliRun runCli(const QStringList &arguments, const QString &home);
};

void tst_McpConfig::readsBothKinds()
{
    QString error;
    const auto config = parseConfig(R"({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "pkg"], "env": {"TOKEN": "s3cret"},
                  "idleTimeoutMs": 20000, "hardMaximumMs": 45000},
        "remote": {"type": "http", "url": "https://mcp.example.com/mcp",
                   "headers": {"Authorization": "Bearer s3cret"}},
        "off": {"command": "x", "disabled": true}}})", &error);
    QVERIFY2(config, qPrintable(error));
    QCOMPARE(config->servers.size(), 2);
    const ServerConfig &files = config->servers[0];
    QCOMPARE(files.kind, ServerConfig::Kind::Stdio);
    QCOMPARE(files.args, (QStringList{"-y", "pkg"}));
    QCOMPARE(files.env.first().second, QStringLiteral("s3cret"));
    const ServerConfig &remote = config->servers[1];
    QCOMPARE(remote.kind, ServerConfig::Kind::Http);
    QCOMPARE(remote.headers.first().first, QByteArray("Authorization"));
    // A server's own timeouts, when the file gives them; the console's defaults otherwise.
    QCOMPARE(files.idleTimeoutMs, std::optional<int>(20000));
    QCOMPARE(files.hardMaximumMs, std::optional<int>(45000));
    QVERIFY(!remote.idleTimeoutMs && !remote.hardMaximumMs);
    // What the log may show of them: never the env or the headers.
    QVERIFY(!files.describe().contains(QStringLiteral("s3cret")));
    QVERIFY(!remote.describe().contains(QStringLiteral("s3cret")));
}

void tst_McpConfig::refused_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("says");
    QTest::newRow("not json") << QByteArray("{") << "not JSON";
    QTest::newRow("no servers") << QByteArray("{}") << "mcpServers";
    QTest::newRow("servers array") << QByteArray(R"({"mcpServers": []})") << "mcpServers";
    QTest::newRow("both") << QByteArray(R"({"mcpServers": {"a": {"command": "x", "url": "http://h/"}}})") << "either";
    QTest::newRow("neither") << QByteArray(R"({"mcpServers": {"a": {}}})") << "either";
    QTest::newRow("command number") << QByteArray(R"({"mcpServers": {"a": {"command": 5}}})") << "\"command\"";
    QTest::newRow("args not strings") << QByteArray(R"({"mcpServers": {"a": {"command": "x", "args": [1]}}})") << "\"args\"";
    QTest::newRow("env not object") << QByteArray(R"({"mcpServers": {"a": {"command": "x", "env": []}}})") << "\"env\"";
    QTest::newRow("ftp url") << QByteArray(R"({"mcpServers": {"a": {"url": "ftp://h/x"}}})") << "\"url\"";
    QTest::newRow("header newline") << QByteArray(R"({"mcpServers": {"a": {"url": "http://h/", "headers": {"X": "a\nb"}}}})") << "header";
    QTest::newRow("header name") << QByteArray(R"({"mcpServers": {"a": {"url": "http://h/", "headers": {"X Y": "a"}}}})") << "header";
    QTest::newRow("old sse") << QByteArray(R"({"mcpServers": {"a": {"type": "sse", "url": "http://h/"}}})") << "not supported";
    QTest::newRow("idle too short") << QByteArray(R"({"mcpServers": {"a": {"command": "x", "idleTimeoutMs": 500}}})") << "\"idleTimeoutMs\" must be whole milliseconds from 1000 to 50000";
    QTest::newRow("idle not whole") << QByteArray(R"({"mcpServers": {"a": {"command": "x", "idleTimeoutMs": 1500.5}}})") << "\"idleTimeoutMs\"";
    QTest::newRow("idle a string") << QByteArray(R"({"mcpServers": {"a": {"command": "x", "idleTimeoutMs": "20000"}}})") << "\"idleTimeoutMs\"";
    QTest::newRow("hard too long") << QByteArray(R"({"mcpServers": {"a": {"command": "x", "hardMaximumMs": 60000}}})") << "\"hardMaximumMs\" must be whole milliseconds from 1000 to 50000";
    QTest::newRow("hard under idle") << QByteArray(R"({"mcpServers": {"a": {"command": "x", "idleTimeoutMs": 20000, "hardMaximumMs": 15000}}})") << "must not be shorter";
    QTest::newRow("bad name") << QByteArray(R"({"mcpServers": {"a b": {"command": "x"}}})") << "name";
    QByteArray many = R"({"mcpServers": {)";
    for (int i = 0; i < 33; ++i)
        many += QByteArray(i ? "," : "") + "\"s" + QByteArray::number(i) + R"(": {"command": "x"})";
    QTest::newRow("too many") << (many + "}}") << "more than 32";
}

void tst_McpConfig::refused()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, says);
    QString error;
    QVERIFY(!parseConfig(json, &error));
    QVERIFY2(error.contains(says), qPrintable(error));
}

void tst_McpConfig::boundedFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("mcp.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray(2 * 1024 * 1024, ' '));
    file.close();
    QString error;
    QVERIFY(!readConfigFile(path, &error));
    QVERIFY2(error.contains(QStringLiteral("larger than")), qPrintable(error));
    QVERIFY(!readConfigFile(dir.path(), &error));
    QVERIFY(error.contains(QStringLiteral("not a regular file")));
    QVERIFY(!readConfigFile(dir.filePath(QStringLiteral("missing.json")), &error));
}

CliRun tst_McpConfig::runCli(const QStringList &arguments, const QString &home)
{
    QProcess cli;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("HOME"), home);
    environment.insert(QStringLiteral("XDG_CONFIG_HOME"), home + QStringLiteral("/config"));
    environment.insert(QStringLiteral("XDG_DATA_HOME"), home + QStringLiteral("/share"));
    cli.setProcessEnvironment(environment);
    QSignalSpy finished(&cli, &QProcess::finished);
    cli.start(QStringLiteral(AGENT_CLI_PATH), arguments);
    CliRun run;
    if (!finished.wait(60000)) {
        cli.kill();
        return run;
    }
    run.exitCode = cli.exitStatus() == QProcess::NormalExit ? cli.exitCode() : -1;
    run.out = cli.readAllStandardOutput();
    run.err = cli.readAllStandardError();
    return run;
}

void tst_McpConfig::listToolsWithTheirPolicies()
{
    QTemporaryDir home;
    const QString config = home.filePath(QStringLiteral("mcp.json"));
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QStringLiteral(R"({"mcpServers": {
        "fake": {"command": "%1", "args": ["normal"]},
        "gone": {"command": "/nonexistent/mcp-server"}}})").arg(QStringLiteral(FAKE_MCP_SERVER)).toUtf8());
    file.close();
    const CliRun run = runCli({QStringLiteral("--data-dir"), home.filePath(QStringLiteral("data")),
                               QStringLiteral("--mcp-config"), config,
                               QStringLiteral("--list-tools"), QStringLiteral("--json")},
                              home.path());
    QCOMPARE(run.exitCode, 0);
    const QJsonObject listing = run.turn();
    QHash<QString, QJsonObject> tools;
    for (const QJsonValue &tool : listing.value(QStringLiteral("tools")).toArray())
        tools.insert(tool[QStringLiteral("name")].toString(), tool.toObject());
    QCOMPARE(tools.value(QStringLiteral("createTicket"))[QStringLiteral("source")].toString(),
             QStringLiteral("built-in"));
    QCOMPARE(tools.value(QStringLiteral("fake__echo"))[QStringLiteral("policy")].toString(),
             QStringLiteral("read"));
    QCOMPARE(tools.value(QStringLiteral("fake__write_thing"))[QStringLiteral("policy")].toString(),
             QStringLiteral("write"));
    QCOMPARE(tools.value(QStringLiteral("fake__idempotent_thing"))[QStringLiteral("policy")].toString(),
             QStringLiteral("idempotent-write"));
    const QJsonArray servers = listing.value(QStringLiteral("mcpServers")).toArray();
    QCOMPARE(servers.size(), 2);
    QCOMPARE(servers[0][QStringLiteral("state")].toString(), QStringLiteral("ready"));
    QCOMPARE(servers[0][QStringLiteral("tools")].toInt(), 13);
    QCOMPARE(servers[1][QStringLiteral("state")].toString(), QStringLiteral("down"));
    QVERIFY(servers[1][QStringLiteral("error")].toString().contains(QStringLiteral("could not start")));
}

// mcp.json asks for attempts of 50 s: a read's three would take 153.6 s against the turn's
// 60 s, failing the whole turn. They are limited to what fits (the console's 15 s), the
// worst case shown fits inside the turn, and --list-tools says so (issue #40 §4).
void tst_McpConfig::timeoutsPastTheTurnAreLimitedAndSaidSo()
{
    QTemporaryDir home;
    const QString config = home.filePath(QStringLiteral("mcp.json"));
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QStringLiteral(R"({"mcpServers": {
        "slow": {"command": "%1", "args": ["normal"],
                 "idleTimeoutMs": 50000, "hardMaximumMs": 50000},
        "fake": {"command": "%1", "args": ["normal"]}}})")
                   .arg(QStringLiteral(FAKE_MCP_SERVER)).toUtf8());
    file.close();
    const QStringList arguments{QStringLiteral("--data-dir"), home.filePath(QStringLiteral("data")),
                                QStringLiteral("--mcp-config"), config,
                                QStringLiteral("--list-tools")};
    const CliRun run = runCli(arguments + QStringList{QStringLiteral("--json")}, home.path());
    QCOMPARE(run.exitCode, 0);
    const QJsonObject listing = run.turn();
    QHash<QString, QJsonObject> servers;
    for (const QJsonValue &server : listing.value(QStringLiteral("mcpServers")).toArray())
        servers.insert(server[QStringLiteral("name")].toString(), server.toObject());
    QCOMPARE(servers.value(QStringLiteral("slow"))[QStringLiteral("timeoutsLimitedToMs")].toInt(),
             15000);
    QVERIFY(!servers.value(QStringLiteral("fake")).contains(QStringLiteral("timeoutsLimitedToMs")));
    for (const QJsonValue &tool : listing.value(QStringLiteral("tools")).toArray()) {
        if (tool[QStringLiteral("server")].toString() == QLatin1String("slow")) {
            QVERIFY2(tool[QStringLiteral("worstCaseMs")].toInteger() <= 60000,
                     qPrintable(tool[QStringLiteral("name")].toString()));
        }
    }
    const CliRun text = runCli(arguments, home.path());
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains("its timeouts are limited to 15 s so that the turn can answer"),
             text.out.constData());
}

// agent-cli's end is the server's clean end (issue #40 §4): its stdin is closed and it exits
// by itself, rather than being killed with the process.
void tst_McpConfig::agentCliEndsItsServersCleanly()
{
    QTemporaryDir home;
    const QString config = home.filePath(QStringLiteral("mcp.json"));
    const QString effects = home.filePath(QStringLiteral("effects.txt"));
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QStringLiteral(R"({"mcpServers": {
        "fake": {"command": "%1", "args": ["normal"], "env": {"FAKE_MCP_EFFECTS": "%2"}}}})")
                   .arg(QStringLiteral(FAKE_MCP_SERVER), effects).toUtf8());
    file.close();
    const CliRun run = runCli({QStringLiteral("--data-dir"), home.filePath(QStringLiteral("data")),
                               QStringLiteral("--mcp-config"), config,
                               QStringLiteral("Where is order A1001?")},
                              home.path());
    QCOMPARE(run.exitCode, 0);
    QFile seen(effects);
    QVERIFY(seen.open(QIODevice::ReadOnly));
    QCOMPARE(seen.readAll(), QByteArray("stdin closed\n"));
}

void tst_McpConfig::brokenFileIsReportedAndLeftAlone()
{
    QTemporaryDir home;
    const QString data = home.filePath(QStringLiteral("data"));
    QVERIFY(QDir().mkpath(data));
    const QByteArray broken = R"({"mcpServers": {"x": {"command": 5}}})";
    QFile file(data + QStringLiteral("/mcp.json"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(broken);
    file.close();
    const CliRun run = runCli({QStringLiteral("--data-dir"), data, QStringLiteral("--list-tools")},
                              home.path());
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("mcp.json") && run.err.contains("\"command\""), run.err.constData());
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), broken);
}

void tst_McpConfig::theRuntimeRegistersAndReportsTheServers()
{
    QTemporaryDir dir;
    const QString config = dir.filePath(QStringLiteral("mcp.json"));
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QStringLiteral(R"({"mcpServers": {
        "fake": {"command": "%1", "args": ["normal"], "env": {"TOKEN": "s3cret"},
                 "hardMaximumMs": 30000},
        "gone": {"command": "/nonexistent/mcp-server"}}})").arg(QStringLiteral(FAKE_MCP_SERVER)).toUtf8());
    file.close();
    RuntimeOptions options;
    options.dataDirectory = dir.filePath(QStringLiteral("data"));
    options.mcpConfigFile = config;
    AgentRuntime runtime(options);
    QSignalSpy settled(runtime.mcp(), &McpServers::settled);
    runtime.start();
    QVERIFY(settled.wait(30000));
    const RuntimeStatus status = runtime.monitor()->status();
    QCOMPARE(status.mcpServers.size(), 2);
    const McpServerStatus &fake = status.mcpServers[0];
    QCOMPARE(fake.state, McpServerStatus::State::Ready);
    QCOMPARE(fake.tools, 13);
    QVERIFY(!fake.transport.contains(QStringLiteral("s3cret")));
    QCOMPARE(status.mcpServers[1].state, McpServerStatus::State::Down);
    // Registered after the built-in tools, under the annotations' policy.
    QVERIFY(runtime.tools()->find(QStringLiteral("createTicket")));
    QVERIFY(runtime.tools()->find(QStringLiteral("fake__echo")));
    QCOMPARE(runtime.policies()->policy(QStringLiteral("fake__write_thing")).maxRetries, 0);
    QCOMPARE(runtime.policies()->policy(QStringLiteral("fake__echo")).maxRetries, 2);
    // The file's hard maximum for the server (30 s) would take a read's three attempts past
    // the turn's 60 s: it is limited to the console's 15 s, which fit, and the status says so.
    // The executor's timeout is that plus 1 s, on the card's worst case too.
    QCOMPARE(fake.timeoutsLimitedToMs, 15000);
    QCOMPARE(status.mcpServers[1].timeoutsLimitedToMs, 0);
    QCOMPARE(runtime.policies()->policy(QStringLiteral("fake__echo")).attemptTimeout,
             RetryPolicy::Millis(16000));
    QVERIFY(runtime.policies()->policy(QStringLiteral("fake__echo")).worstCaseDuration()
            < std::chrono::milliseconds(60000));
    // The annotations' policy is not "custom".
    QVERIFY(runtime.policies()->toolsWithCustomPolicy().isEmpty());
}

QTEST_GUILESS_MAIN(tst_McpConfig)
#include "tst_mcpconfig.moc"
