// Secrets of mcp.json (core/mcp/mcpsecrets.h): which header and env names hold one, how a
// saved text gives them up for references, how a server's references are resolved before it
// starts (and a missing entry leaves it down with the reason), and that a stdio server's
// stderr never carries a secret into the log.
#include "core/mcp/mcpsecrets.h"
#include "core/mcp/mcpserver.h"
#include "core/resilience/toolexecutor.h"
#include "core/telemetry/locallog.h"

#include <QDirIterator>
#include <QFutureWatcher>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSignalSpy>
#include <QTest>
#include <QTemporaryDir>
#include <QTimer>

using namespace AgentConsole::Mcp;
using AgentConsole::installLocalLog;
using AgentConsole::Language;
using AgentConsole::localLogLinesNaming;
using AgentConsole::RetryPolicy;
using AgentConsole::ToolCallOutcome;
using AgentConsole::ToolCallRequest;
using AgentConsole::ToolExecutor;

namespace {

constexpr int kWaitMs = 15000; // an upper bound for QSignalSpy::wait, never a sleep
const QString kToken = QStringLiteral("ghp-secret-7f3a9c2e11");

// A keychain of the test's own: answers later, on the caller's thread, as SecretStore does.
struct FakeKeychain
{
    QHash<QString, QString> entries;
    QString failure; // when set, every read fails with it
    QStringList asked;

    SecretReader reader()
    {
        return [this](const QString &key, QObject *context,
                      std::function<void(const SecretLookup &)> done) {
            asked.append(key);
            SecretLookup answer;
            if (!failure.isEmpty())
                answer = {SecretLookup::Status::Failed, {}, failure};
            else if (entries.contains(key))
                answer = {SecretLookup::Status::Found, entries.value(key), {}};
            else
                answer = {SecretLookup::Status::NotFound, {}, {}};
            QTimer::singleShot(0, context, [done, answer] { done(answer); });
        };
    }
};

ServerConfig parsed(const QByteArray &json, const QString &name)
{
    QString error;
    const auto config = parseConfig(json, &error);
    if (!config)
        qFatal("config refused: %s", qPrintable(error));
    for (const ServerConfig &server : config->servers) {
        if (server.name == name)
            return server;
    }
    qFatal("no server %s", qPrintable(name));
}

ResolvedSecrets resolve(const ServerConfig &config, const SecretReader &reader)
{
    QObject context;
    std::optional<ResolvedSecrets> result;
    resolveSecrets(config, reader, &context, [&result](const ResolvedSecrets &r) { result = r; });
    // Never at once: the answer comes on a later event-loop turn.
    if (result)
        qFatal("resolveSecrets answered synchronously");
    if (!QTest::qWaitFor([&result] { return result.has_value(); }, kWaitMs))
        qFatal("resolveSecrets never answered");
    return *result;
}

QStringList g_logged;
QLoggingCategory::CategoryFilter g_previousFilter = nullptr;
void mcpInfoOn(QLoggingCategory *category)
{
    if (g_previousFilter)
        g_previousFilter(category);
    if (qstrcmp(category->categoryName(), "agentconsole.mcp") == 0)
        category->setEnabled(QtInfoMsg, true);
}
void captureLog(QtMsgType, const QMessageLogContext &, const QString &message)
{
    g_logged.append(message);
}


} // namespace

class tst_McpSecrets : public QObject
{
    Q_OBJECT

private slots:
    void secretHeaders_data();
    void secretHeaders();
    void secretEnv_data();
    void secretEnv();
    void referencesInAValue();
    void extractMovesSecretsAndKeepsTheRest();
    void extractLeavesATextWithoutSecretsAsItIs();
    void extractRefusesAFieldThatCannotNameAnEntry();
    void resolveFillsTheReferences();
    void oauthClientSecretGoesToTheKeychain();
    void resolveWithoutReferencesNeedsNoKeychain();
    void missingEntry_data();
    void missingEntry();
    void serverWithAMissingSecretIsDownWithTheReason();
    void redactorCoversCutLines();
    void stderrOfAServerNeverLogsItsSecret();
    void aServerEchoingItsSecretsLeavesNoneInTheDataDirectory();
};

void tst_McpSecrets::secretHeaders_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("secret");
    for (const char *name : {"Authorization", "Proxy-Authorization", "X-Api-Key", "x-api-key",
                             "Cookie", "X-Auth-Token", "X-Client-Secret", "X-Password",
                             "X-Credentials", "api-token"})
        QTest::newRow(name) << QString::fromLatin1(name) << true;
    for (const char *name : {"Accept", "X-Tenant", "User-Agent", "Mcp-Protocol-Version",
                             "X-Request-Id", "Content-Type"})
        QTest::newRow(name) << QString::fromLatin1(name) << false;
}

void tst_McpSecrets::secretHeaders()
{
    QFETCH(QString, name);
    QFETCH(bool, secret);
    QCOMPARE(isSecretHeader(name), secret);
}

void tst_McpSecrets::secretEnv_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("secret");
    for (const char *name : {"GITHUB_PERSONAL_ACCESS_TOKEN", "OPENAI_API_KEY", "APIKEY",
                             "DB_PASSWORD", "CLIENT_SECRET", "SLACK_BOT_TOKEN", "PGPASSWD",
                             "AWS_SECRET_ACCESS_KEY", "GOOGLE_CREDENTIALS", "SMTP_PWD",
                             "api_key", "BRAVE_API_KEY", "MY_AUTH"})
        QTest::newRow(name) << QString::fromLatin1(name) << true;
    for (const char *name : {"PATH", "LOG_LEVEL", "HOME", "KEYBOARD_LAYOUT", "NODE_ENV",
                             "TOKENIZER_PATH", "AUTHOR"})
        QTest::newRow(name) << QString::fromLatin1(name) << false;
}

void tst_McpSecrets::secretEnv()
{
    QFETCH(QString, name);
    QFETCH(bool, secret);
    QCOMPARE(isSecretEnv(name), secret);
}

void tst_McpSecrets::referencesInAValue()
{
    QCOMPARE(secretKey(QStringLiteral("tickets"), QStringLiteral("Authorization")),
             QStringLiteral("mcp.tickets.Authorization"));
    QCOMPARE(secretReference(QStringLiteral("mcp.a.b")), QStringLiteral("${keychain:mcp.a.b}"));
    QCOMPARE(referencedKeys(u"Bearer ${keychain:mcp.a.token}"), QStringList{"mcp.a.token"});
    QCOMPARE(referencedKeys(u"${keychain:one}-${keychain:two}"),
             (QStringList{"one", "two"}));
    QVERIFY(referencedKeys(u"${keychain:}").isEmpty());
    QVERIFY(referencedKeys(u"${keychain:has space}").isEmpty());
    QVERIFY(referencedKeys(u"plain value").isEmpty());
}

void tst_McpSecrets::extractMovesSecretsAndKeepsTheRest()
{
    // (Inside the function: moc loses its way in a raw string with "//" in it.)
    const QByteArray kConfig = R"({"mcpServers": {
    "tickets": {"url": "https://mcp.example.com/mcp",
                "headers": {"Authorization": "Bearer tk-123456", "X-Tenant": "t1",
                            "X-Api-Key": "${keychain:mcp.tickets.X-Api-Key}", "Cookie": ""}},
    "github": {"command": "npx", "args": ["-y", "server-github"],
               "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp-1", "LOG_LEVEL": "debug"}},
    "old": {"command": "old-server", "disabled": true, "env": {"OLD_API_KEY": "ok-9"}}
}})";
    QString error;
    QVERIFY(parseConfig(kConfig, &error));
    const auto extraction = extractSecrets(kConfig, &error);
    QVERIFY2(extraction, qPrintable(error));
    // The plain secrets, in the file's order (servers and fields sorted as JSON objects are);
    // a reference and an empty value stay.
    QStringList keys;
    for (const MovedSecret &secret : extraction->secrets)
        keys.append(secret.key + QLatin1Char('=') + secret.value);
    QCOMPARE(keys, (QStringList{"mcp.github.GITHUB_PERSONAL_ACCESS_TOKEN=ghp-1",
                                "mcp.old.OLD_API_KEY=ok-9",
                                "mcp.tickets.Authorization=Bearer tk-123456"}));
    QCOMPARE(extraction->secrets.last().field, MovedSecret::Field::Header);
    QCOMPARE(extraction->secrets.last().server, QStringLiteral("tickets"));
    QCOMPARE(extraction->secrets.last().name, QStringLiteral("Authorization"));

    // The text written instead holds references, no secret, and still loads.
    const QByteArray &json = extraction->json;
    for (const char *secret : {"tk-123456", "ghp-1", "ok-9"})
        QVERIFY2(!json.contains(secret), secret);
    const QJsonObject servers = QJsonDocument::fromJson(json).object()
                                    .value("mcpServers").toObject();
    const QJsonObject headers = servers.value("tickets").toObject().value("headers").toObject();
    QCOMPARE(headers.value("Authorization").toString(),
             QStringLiteral("${keychain:mcp.tickets.Authorization}"));
    QCOMPARE(headers.value("X-Tenant").toString(), QStringLiteral("t1"));
    QCOMPARE(headers.value("X-Api-Key").toString(),
             QStringLiteral("${keychain:mcp.tickets.X-Api-Key}"));
    QCOMPARE(headers.value("Cookie").toString(), QString());
    const QJsonObject env = servers.value("github").toObject().value("env").toObject();
    QCOMPARE(env.value("LOG_LEVEL").toString(), QStringLiteral("debug"));
    QCOMPARE(servers.value("old").toObject().value("disabled").toBool(), true);
    QVERIFY2(parseConfig(json, &error), qPrintable(error));
    // Saving it again moves nothing: the file is left as it is.
    const auto again = extractSecrets(json, &error);
    QVERIFY(again);
    QVERIFY(again->secrets.isEmpty());
    QCOMPARE(again->json, json);
}

void tst_McpSecrets::extractLeavesATextWithoutSecretsAsItIs()
{
    const QByteArray json = "{ \"mcpServers\": {\n  \"b\": {\"command\": \"x\"},\n"
                            "  \"a\": {\"url\": \"http://127.0.0.1:1/mcp\"} } }\n";
    QString error;
    const auto extraction = extractSecrets(json, &error);
    QVERIFY(extraction);
    QVERIFY(extraction->secrets.isEmpty());
    QCOMPARE(extraction->json, json); // byte for byte: its order and layout are the staff's
}

void tst_McpSecrets::extractRefusesAFieldThatCannotNameAnEntry()
{
    // A disabled server is not checked by the parser, but its secret still would be moved.
    const QByteArray json = R"({"mcpServers": {"later": {"command": "x", "disabled": true,
                                 "env": {"SLACK TOKEN": "value-1"}}}})";
    QString error;
    QVERIFY(parseConfig(json, &error));
    QVERIFY(!extractSecrets(json, &error));
    QVERIFY2(error.contains(QStringLiteral("server \"later\"")), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("env \"SLACK TOKEN\"")), qPrintable(error));
    QVERIFY(!error.contains(QStringLiteral("value-1")));
}

// A pre-registered OAuth client's secret typed in mcp.json (issue #21 §2) is moved to the
// keychain like a header's, and read back from it before the server starts.
void tst_McpSecrets::oauthClientSecretGoesToTheKeychain()
{
    const QByteArray kConfig = R"({"mcpServers": {
    "crm": {"url": "https://mcp.crm.example.com/mcp",
            "oauth": {"clientId": "agent-console", "clientSecret": "cs-0f6b2d9a"}}}})";
    QString error;
    QVERIFY2(parseConfig(kConfig, &error), qPrintable(error));
    const auto extraction = extractSecrets(kConfig, &error);
    QVERIFY2(extraction, qPrintable(error));
    QCOMPARE(extraction->secrets.size(), 1);
    const MovedSecret &moved = extraction->secrets.first();
    QCOMPARE(moved.field, MovedSecret::Field::OAuthClientSecret);
    QCOMPARE(moved.key, QStringLiteral("mcp.crm.oauthClientSecret"));
    QCOMPARE(moved.value, QStringLiteral("cs-0f6b2d9a"));
    QVERIFY(!extraction->json.contains("cs-0f6b2d9a"));

    const ServerConfig config = parsed(extraction->json, QStringLiteral("crm"));
    QCOMPARE(config.oauth.clientId, QStringLiteral("agent-console"));
    QCOMPARE(config.oauth.clientSecret,
             QStringLiteral("${keychain:mcp.crm.oauthClientSecret}"));
    QVERIFY(hasReferences(config));
    FakeKeychain keychain;
    keychain.entries.insert(moved.key, moved.value);
    const ResolvedSecrets resolved = resolve(config, keychain.reader());
    QVERIFY2(resolved.config, qPrintable(resolved.detail));
    QCOMPARE(resolved.config->oauth.clientSecret, QStringLiteral("cs-0f6b2d9a"));
    QVERIFY(resolved.values.contains(QStringLiteral("cs-0f6b2d9a")));
    QVERIFY(!resolved.config->describe().contains(QStringLiteral("cs-0f6b2d9a")));
}

void tst_McpSecrets::resolveFillsTheReferences()
{
    const ServerConfig config = parsed(R"({"mcpServers": {"t": {"url": "https://h/mcp",
        "headers": {"Authorization": "Bearer ${keychain:mcp.t.Authorization}",
                    "X-Api-Key": "${keychain:mcp.t.Authorization}", "X-Tenant": "t1"}}}})",
                                       QStringLiteral("t"));
    QVERIFY(hasReferences(config));
    FakeKeychain keychain;
    keychain.entries.insert(QStringLiteral("mcp.t.Authorization"), kToken);
    const ResolvedSecrets resolved = resolve(config, keychain.reader());
    QVERIFY2(resolved.config, qPrintable(resolved.detail));
    QCOMPARE(keychain.asked, QStringList{"mcp.t.Authorization"}); // one read per key
    QHash<QByteArray, QByteArray> headers;
    for (const auto &[name, value] : resolved.config->headers)
        headers.insert(name, value);
    QCOMPARE(headers.value("Authorization"), "Bearer " + kToken.toUtf8());
    QCOMPARE(headers.value("X-Api-Key"), kToken.toUtf8());
    QCOMPARE(headers.value("X-Tenant"), QByteArray("t1"));
    QCOMPARE(resolved.values, QStringList{kToken});
    // What is shown of the server never carries it.
    QVERIFY(!resolved.config->describe().contains(kToken));
    QVERIFY(secretValues(*resolved.config).contains("Bearer " + kToken));
}

void tst_McpSecrets::resolveWithoutReferencesNeedsNoKeychain()
{
    const ServerConfig config = parsed(R"({"mcpServers": {"s": {"command": "x",
        "env": {"API_KEY": "typed-in-file"}}}})", QStringLiteral("s"));
    QVERIFY(!hasReferences(config));
    const ResolvedSecrets resolved = resolve(config, {});
    QVERIFY(resolved.config);
    QCOMPARE(resolved.config->env, config.env);
}

void tst_McpSecrets::missingEntry_data()
{
    QTest::addColumn<bool>("withReader");
    QTest::addColumn<QString>("failure");
    QTest::addColumn<QString>("reason");
    QTest::newRow("not in the keychain") << true << QString()
        << QStringLiteral("the secret of env \"API_TOKEN\" is not in the keychain; type it "
                          "again in Settings › MCP servers");
    QTest::newRow("keychain fails")
        << true << QStringLiteral("org.freedesktop.Secret.Error.IsLocked: collection locked")
        << QStringLiteral("the keychain could not be read for the secret of env "
                          "\"API_TOKEN\"; the server was not started");
    QTest::newRow("no keychain") << false << QString()
        << QStringLiteral("no keychain is available for the secret of env \"API_TOKEN\"; the "
                          "server was not started");
}

void tst_McpSecrets::missingEntry()
{
    QFETCH(bool, withReader);
    QFETCH(QString, failure);
    QFETCH(QString, reason);
    const ServerConfig config = parsed(R"({"mcpServers": {"s": {"command": "x",
        "env": {"API_TOKEN": "${keychain:mcp.s.API_TOKEN}", "OTHER_KEY": "${keychain:k2}"}}}})",
                                       QStringLiteral("s"));
    FakeKeychain keychain;
    keychain.failure = failure;
    keychain.entries.insert(QStringLiteral("k2"), kToken); // found, and still not put in
    const ResolvedSecrets resolved = resolve(config, withReader ? keychain.reader()
                                                                : SecretReader{});
    QVERIFY(!resolved.config);
    QCOMPARE(resolved.reason, reason);
    // No secret anywhere, and the keychain's own words only in the detail, for the log.
    QVERIFY(!resolved.reason.contains(kToken) && !resolved.detail.contains(kToken));
    QVERIFY(!resolved.reason.contains(QStringLiteral("freedesktop")));
    QVERIFY(resolved.values.isEmpty());
    if (!failure.isEmpty())
        QVERIFY(resolved.detail.contains(failure));
    QVERIFY(resolved.detail.contains(QStringLiteral("mcp.s.API_TOKEN")));
}

void tst_McpSecrets::serverWithAMissingSecretIsDownWithTheReason()
{
    ServerConfig config;
    config.name = QStringLiteral("fake");
    config.command = QStringLiteral(FAKE_MCP_SERVER);
    config.args = {QStringLiteral("normal")};
    config.env = {{QStringLiteral("API_TOKEN"), QStringLiteral("${keychain:mcp.fake.API_TOKEN}")}};
    FakeKeychain keychain;
    Server::Options options;
    options.restartInitialMs = 10;
    options.secrets = keychain.reader();
    Server server(config, options);
    QSignalSpy states(&server, &Server::stateChanged);
    QSignalSpy settled(&server, &Server::settled);
    server.start();
    QCOMPARE(server.state(), Server::State::Starting); // the keychain answers later
    QVERIFY(settled.wait(kWaitMs));
    QCOMPARE(server.state(), Server::State::Down);
    QCOMPARE(server.lastError(),
             QStringLiteral("the secret of env \"API_TOKEN\" is not in the keychain; type it "
                            "again in Settings › MCP servers"));
    QVERIFY(server.tools().isEmpty());
    // Not restarted: a missing entry does not come back by waiting.
    QVERIFY(!states.wait(200));
    QCOMPARE(states.size(), 1);
    QCOMPARE(keychain.asked.size(), 1);

    // Once the entry is there, a start resolves it and the server comes up.
    keychain.entries.insert(QStringLiteral("mcp.fake.API_TOKEN"), kToken);
    QSignalSpy tools(&server, &Server::toolsChanged);
    server.start();
    QVERIFY(tools.wait(kWaitMs));
    QCOMPARE(server.state(), Server::State::Ready);
    QVERIFY(server.lastError().isEmpty());
    QVERIFY(server.knownSecrets().contains(kToken));
    QVERIFY(!server.config().describe().contains(kToken));
    // What is shown of it keeps the reference, not the value.
    QCOMPARE(server.config().env.first().second,
             QStringLiteral("${keychain:mcp.fake.API_TOKEN}"));
}

void tst_McpSecrets::redactorCoversCutLines()
{
    SecretRedactor redactor;
    redactor.add(kToken);
    redactor.add(QStringLiteral("abc")); // too short to look for
    QVERIFY(!redactor.isEmpty());
    QCOMPARE(redactor.redact(QStringLiteral("using ") + kToken + QStringLiteral(" now")),
             QStringLiteral("using [redacted] now"));
    QCOMPARE(redactor.redact(QStringLiteral("abc")), QStringLiteral("abc"));
    // A line cut in the middle of the secret: its first part goes too.
    QCOMPARE(redactor.redactCut(QStringLiteral("token=") + kToken.left(9)),
             QStringLiteral("token=[redacted]"));
    QCOMPARE(redactor.redactCut(QStringLiteral("nothing here")), QStringLiteral("nothing here"));
}

void tst_McpSecrets::stderrOfAServerNeverLogsItsSecret()
{
    // The server prints its token on stderr, whole and across the 1,024-byte cut of a long
    // line, then runs as the fake server does.
    ServerConfig config;
    config.name = QStringLiteral("echoes");
    config.command = QStringLiteral("/bin/sh");
    config.args = {QStringLiteral("-c"),
                   QStringLiteral("echo \"my token is $API_TOKEN ok\" >&2; "
                                  "printf '%s%s\\n' \"$(printf '%01020d' 0)\" \"$API_TOKEN\" >&2; "
                                  "exec '") + QStringLiteral(FAKE_MCP_SERVER)
                       + QStringLiteral("' normal")};
    config.env = {{QStringLiteral("API_TOKEN"), QStringLiteral("${keychain:mcp.echoes.API_TOKEN}")}};
    FakeKeychain keychain;
    keychain.entries.insert(QStringLiteral("mcp.echoes.API_TOKEN"), kToken);
    Server::Options options;
    options.secrets = keychain.reader();

    g_previousFilter = QLoggingCategory::installFilter(mcpInfoOn);
    g_logged.clear();
    const QtMessageHandler previous = qInstallMessageHandler(captureLog);
    {
        Server server(config, options);
        QSignalSpy tools(&server, &Server::toolsChanged);
        server.start();
        QVERIFY(tools.wait(kWaitMs));
        QTRY_VERIFY_WITH_TIMEOUT(!g_logged.filter(QStringLiteral("fake server: initialized"))
                                      .isEmpty(),
                                 kWaitMs);
    }
    qInstallMessageHandler(previous);
    QLoggingCategory::installFilter(g_previousFilter);

    const QStringList stderrLines = g_logged.filter(QStringLiteral("stderr:"));
    QVERIFY2(!stderrLines.filter(QStringLiteral("my token is [redacted] ok")).isEmpty(),
             qPrintable(stderrLines.join('\n')));
    const QStringList cut = stderrLines.filter(QStringLiteral("0000[redacted]…"));
    QVERIFY2(cut.size() == 1, qPrintable(stderrLines.join(QLatin1Char('\n')).right(600)));
    for (const QString &line : std::as_const(g_logged)) {
        QVERIFY2(!line.contains(kToken), qPrintable(line));
        QVERIFY2(!line.contains(kToken.left(SecretRedactor::kMinLength)), qPrintable(line));
    }
}

// A server that echoes its secrets back everywhere it can (its stderr, a log notification,
// the error of every call), one from the keychain and one typed into mcp.json: the local log
// in the data directory, where the console writes them all, holds neither (issue #40 §5).
void tst_McpSecrets::aServerEchoingItsSecretsLeavesNoneInTheDataDirectory()
{
    const QString typed = QStringLiteral("ghp-typed-0a1b2c3d4e");
    QTemporaryDir data;
    QVERIFY(data.isValid());
    QString problem;
    installLocalLog(data.path(), false, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    // The MCP room's info lines (a server's stderr and log messages) on, whatever the
    // environment's rules say.
    g_previousFilter = QLoggingCategory::installFilter(mcpInfoOn);
    const auto restore = qScopeGuard([] {
        qInstallMessageHandler(nullptr);
        QLoggingCategory::installFilter(g_previousFilter);
    });

    ServerConfig config;
    config.name = QStringLiteral("echoes");
    config.command = QStringLiteral(FAKE_MCP_SERVER);
    config.args = {QStringLiteral("echo-secrets")};
    config.env = {{QStringLiteral("API_TOKEN"), QStringLiteral("${keychain:mcp.echoes.API_TOKEN}")},
                  {QStringLiteral("GITHUB_TOKEN"), typed}};
    FakeKeychain keychain;
    keychain.entries.insert(QStringLiteral("mcp.echoes.API_TOKEN"), kToken);
    Server::Options options;
    options.secrets = keychain.reader();
    Server server(config, options);
    QSignalSpy tools(&server, &Server::toolsChanged);
    server.start();
    QVERIFY(tools.wait(kWaitMs));
    std::shared_ptr<McpTool> echo;
    for (const auto &tool : server.tools()) {
        if (tool->info().name == QLatin1String("echo"))
            echo = tool;
    }
    QVERIFY(echo);
    ToolExecutor executor;
    ToolCallRequest request;
    request.tool = echo;
    request.arguments = {{QStringLiteral("text"), QStringLiteral("hi")}};
    request.context = {QStringLiteral("u-1"), QStringLiteral("t-1"), {}, {}, Language::English};
    RetryPolicy policy = echo->retryPolicy(RetryPolicy::defaults());
    policy.maxRetries = 0;
    request.policy = policy;
    QFutureWatcher<ToolCallOutcome> call;
    QSignalSpy finished(&call, &QFutureWatcherBase::finished);
    call.setFuture(executor.execute(std::move(request)));
    QVERIFY(finished.wait(kWaitMs));
    QVERIFY(!call.result().result.success);
    // What the data directory holds once every line logged so far is in the file.
    int marks = 0;
    const auto logged = [&] {
        const QString mark = QStringLiteral("inc-echo-%1").arg(++marks);
        qWarning("%s", qPrintable(mark));
        localLogLinesNaming(data.path(), {mark}); // waits for the file to have it
        QByteArray all;
        QDirIterator files(data.path(), QDir::Files, QDirIterator::Subdirectories);
        while (files.hasNext()) {
            QFile file(files.next());
            if (file.open(QIODevice::ReadOnly))
                all += file.readAll();
        }
        return all;
    };
    // Its stderr is read as it comes (the call may be over first).
    QTRY_VERIFY_WITH_TIMEOUT(logged().contains("fake server: started with"), kWaitMs);
    const QByteArray log = logged();
    // Each echo reached the log, redacted.
    QVERIFY2(log.contains("started with API_TOKEN=[redacted] GITHUB_TOKEN=[redacted]"),
             log.right(2000).constData());
    QVERIFY2(log.contains("unauthorized: API_TOKEN=[redacted] GITHUB_TOKEN=[redacted]"),
             log.right(2000).constData());
    QVERIFY2(log.contains("\"credentials\":\"API_TOKEN=[redacted] GITHUB_TOKEN=[redacted]\""),
             log.right(2000).constData());
    QVERIFY(!log.contains(kToken.toUtf8()));
    QVERIFY(!log.contains(typed.toUtf8()));
}

QTEST_GUILESS_MAIN(tst_McpSecrets)
#include "tst_mcpsecrets.moc"
