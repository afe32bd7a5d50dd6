// The hostile MCP corpus (issue #40 §8): one server (hostilemcpserver.cpp) misbehaving as a
// named case says, over stdio and Streamable HTTP on 127.0.0.1, met by the console's real
// client: Mcp::Server (session, transport, listing, restarts), McpTool under the executor for
// reads, and the agent loop with its ledger for writes. Each row says what docs/MCP.md or
// DESIGN.md promises of that case, and where; the expected outcome is the promise, never what
// the code happened to do.
#include "agentdoubles.h"
#include "processmemory.h"
#include "sanitizerbuild.h"

#include "core/mcp/mcpserver.h"
#include "core/mcp/mcptool.h"
#include "core/resilience/resultcode.h"
#include "core/resilience/toolexecutor.h"
#include "core/telemetry/locallog.h"
#include "core/turn/agentloop.h"
#include "core/turn/turnresult.h"

#include <QDirIterator>
#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>
#include <map>

using namespace AgentConsole;
using namespace AgentConsole::Mcp;
using namespace AgentConsole::Testing;

namespace {

constexpr int kWaitMs = 15000; // an upper bound for waits that end sooner, never a sleep
// mcp.json's shortest call timeouts (ServerConfig::minIdleTimeoutMs), for the rows that wait
// one out; every other row runs with the console's defaults (10 s and 15 s).
constexpr int kShortIdleMs = ServerConfig::minIdleTimeoutMs;
constexpr int kShortHardMaximumMs = 2000;
// What the suite gives a server to start or list (the console: 10 s each, docs/MCP.md). Under
// ASan a server building a list of 10,000 tools takes longer than a second by itself.
constexpr int kStartMs = addressSanitized ? 4000 : 1000;
// A secret the server is given (API_TOKEN over stdio, X-Api-Key over HTTP) and echoes back;
// its first ten characters must not reach the log either (a line cut inside it).
const QString kSecret = QStringLiteral("Zq7Xv93LmT-k2Pq8s0Wd");

} // namespace

class tst_McpHostile : public QObject
{
    Q_OBJECT

public:
    enum class Transport { Stdio, Http };
    Q_ENUM(Transport)

    // What a row expects, in the words of the promise.
    enum class Expect {
        NotOffered,   // the server is ready; the hostile tools are not offered, with a reason
        Offered,      // the server is ready and offers the tool, bounded as the flags say
        Down,         // the server is down with `failure`
        Call,         // a read's call ends with `code`
        Write,        // a write's call ends with `code`; effects and a replay as the flags say
        SecretsKept,  // the call ends with `code`; the secret is nowhere in the data directory
        StderrBounded // the call answers; its 4 MB of stderr reach the log bounded
    };
    Q_ENUM(Expect)

    enum Check {
        None = 0,
        ServerDown = 1 << 0,       // after the call: down with `failure` (framing broken)
        StaysReady = 1 << 1,       // after the call: ready, and the "ok" tool answers
        Truncated = 1 << 2,        // the data says "truncated": true, bounded as the table says
        ToldToCancel = 1 << 3,     // the server received notifications/cancelled for the call
        NeverSent = 1 << 4,        // the server never received a tools/call for the tool
        Fast = 1 << 5,             // answered in under 2 s (a pattern that could backtrack)
        BoundedMemory = 1 << 6,    // this process's peak grew less than 64 MiB
        Restarts = 1 << 7,         // down, then a new session (initialize without the old id)
        ShortTimeouts = 1 << 8,    // mcp.json's shortest idle timeout and a 2 s hard maximum
        UntilHardMaximum = 1 << 9, // progress kept it alive past the idle timeout, not past
                                   // the hard maximum
        IdleNotExtended = 1 << 10, // ended by the idle timeout: repeated progress is none
        Retried = 1 << 11,         // a read with the console's retries: three attempts
        SixAtOnce = 1 << 12,       // six such calls at once, then the "ok" tool answers
        RequestRefused = 1 << 13,  // the server's own request was answered -32601
        ExposedNameBounded = 1 << 14, // the model's name: [A-Za-z0-9_-], at most 64
        DescriptionCut = 1 << 15,  // description cut at 2,048 characters, title at 256
        ConfirmFirst = 1 << 16,    // the policy is write: staff confirm it
        OneNamePerTool = 1 << 17,  // no two offered tools share the name the model calls
        FirstAnswerKept = 1 << 18, // the data is the first answer's
        PingAnswered = 1 << 19,    // the server's ping, sent before initialize's answer, answered
        Resumed = 1 << 20,         // its stream was resumed after event e1 (Last-Event-ID)
        QuestionsBounded = 1 << 21, // of ten questions at once, four kept open, then withdrawn
        OwnWordsOnly = 1 << 22,    // the result carries nothing of the server's error text
    };

    struct Row
    {
        QString serverCase;
        Transport transport = Transport::Stdio;
        QString family;
        Expect expect = Expect::Call;
        QStringList tools;   // NotOffered: the tools refused; otherwise the tool concerned
        QString reason;      // NotOffered: a word of the refusal
        ResultCode::Code code = ResultCode::Code::Unrecognized; // Call, Write, SecretsKept
        Failure failure = Failure::None; // Down, ServerDown, Restarts: what took it down
        QJsonObject arguments;
        int checks = None;
        QString doc;         // where the promise is written
        // A promise the client breaks now, and the check that shows it (QEXPECT_FAIL there).
        QString broken;
        Check brokenAt = None;
    };

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void cleanup();
    void hostileServer_data();
    void hostileServer();

private:
    void startServer(const Row &row);
    std::shared_ptr<McpTool> find(const QString &name) const;
    ToolCallOutcome call(const QString &tool, const QJsonObject &arguments, int maxRetries = 0);
    QList<ToolCallOutcome> callAtOnce(const QString &tool, int count);
    TurnResult askToWrite(const QJsonObject &arguments, const QString &requestId,
                          int *confirmations = nullptr);
    QStringList effects() const;
    int effectsStartingWith(const QString &prefix) const;
    QByteArray dataDirectory();

    void expectNotOffered(const Row &row);
    void expectOffered(const Row &row);
    void expectCall(const Row &row);
    void expectWrite(const Row &row);
    void expectSecretsKept(const Row &row);
    void expectStderrBounded(const Row &row);
    void expectReadyAndAnswering();
    void expectBroken(Check at);

    QTemporaryDir m_logDirectory; // the data directory: its local log
    std::unique_ptr<QTemporaryDir> m_dir; // the row's effects, port file and ledger
    std::unique_ptr<QProcess> m_http;     // the HTTP server's process
    std::unique_ptr<Server> m_server;
    QString m_serverName;
    int m_rows = 0;
    // Outcomes, for the summary line.
    int m_cases = 0;
    int m_held = 0;
    int m_knownBroken = 0;
    std::map<QString, int> m_perFamily;
    std::map<QString, int> m_perTransport;
    QStringList m_brokenRows;
    const Row *m_row = nullptr;     // the row whose checks run now
    bool m_rowKnownBroken = false; // the row's promise is broken now (QEXPECT_FAIL)
    int m_marks = 0;
};

Q_DECLARE_METATYPE(tst_McpHostile::Row)

namespace {

QLoggingCategory::CategoryFilter g_previousFilter = nullptr;

// The MCP room's info lines on (a server's stderr, its log notifications, what it answered),
// whatever the environment says: the secret rows prove what reached the log, not its silence.
void mcpInfoOn(QLoggingCategory *category)
{
    if (g_previousFilter)
        g_previousFilter(category);
    if (qstrcmp(category->categoryName(), "agentconsole.mcp") == 0)
        category->setEnabled(QtInfoMsg, true);
}

QString nameOf(tst_McpHostile::Transport transport)
{
    return transport == tst_McpHostile::Transport::Stdio ? QStringLiteral("stdio")
                                                         : QStringLiteral("http");
}

ChatResponse finalAnswer()
{
    ChatResponse response;
    response.content = QStringLiteral("done");
    return response;
}

} // namespace

void tst_McpHostile::initTestCase()
{
    QVERIFY(m_logDirectory.isValid());
    QString problem;
    installLocalLog(m_logDirectory.path(), false, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    g_previousFilter = QLoggingCategory::installFilter(mcpInfoOn);
}

void tst_McpHostile::cleanupTestCase()
{
    QLoggingCategory::installFilter(g_previousFilter);
    QStringList families;
    for (const auto &[family, count] : m_perFamily)
        families.append(QStringLiteral("%1 %2").arg(family).arg(count));
    QStringList transports;
    for (const auto &[transport, count] : m_perTransport)
        transports.append(QStringLiteral("%1 %2").arg(transport).arg(count));
    // Printed, not logged: the local log holds qDebug and friends now.
    std::printf("hostile-mcp: %d cases, %d held%s (%s; %s)\n", m_cases, m_held,
                m_knownBroken ? qPrintable(QStringLiteral(", %1 known broken").arg(m_knownBroken))
                              : "",
                qPrintable(families.join(u", ")), qPrintable(transports.join(u", ")));
    for (const QString &row : std::as_const(m_brokenRows))
        std::printf("hostile-mcp: not held: %s\n", qPrintable(row));
    std::fflush(stdout);
}

void tst_McpHostile::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_serverName = QStringLiteral("h%1").arg(++m_rows);
}

void tst_McpHostile::cleanup()
{
    // The HTTP server's process first: what it still streams ends at its source (Qt's HTTP
    // thread may be reading it); then the client, whose destructor kills a stdio child.
    if (m_http) {
        m_http->kill();
        m_http->waitForFinished(kWaitMs); // reaping a SIGKILLed child: the kernel's moment
    }
    m_server.reset();
    m_http.reset();
    const QString row = QString::fromLatin1(QTest::currentDataTag());
    ++m_cases;
    if (m_rowKnownBroken)
        ++m_knownBroken; // an expected failure is a promise not held, said as such
    if (!QTest::currentTestFailed() && !m_rowKnownBroken)
        ++m_held;
    else
        m_brokenRows.append(row);
    m_rowKnownBroken = false;
    m_dir.reset();
}

void tst_McpHostile::startServer(const Row &row)
{
    ServerConfig config;
    config.name = m_serverName;
    const QString effectsPath = m_dir->filePath(QStringLiteral("effects.txt"));
    if (row.transport == Transport::Stdio) {
        config.kind = ServerConfig::Kind::Stdio;
        config.command = QStringLiteral(HOSTILE_MCP_SERVER);
        config.args = {row.serverCase};
        config.env = {{QStringLiteral("HOSTILE_MCP_EFFECTS"), effectsPath},
                      {QStringLiteral("API_TOKEN"), kSecret}};
    } else {
        const QString portFile = m_dir->filePath(QStringLiteral("port"));
        m_http = std::make_unique<QProcess>();
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("HOSTILE_MCP_EFFECTS"), effectsPath);
        m_http->setProcessEnvironment(environment);
        m_http->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_http->start(QStringLiteral(HOSTILE_MCP_SERVER),
                      {row.serverCase, QStringLiteral("--http"), portFile});
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(portFile), kWaitMs);
        QFile file(portFile);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const int port = file.readAll().toInt();
        QVERIFY(port > 0);
        config.kind = ServerConfig::Kind::Http;
        config.url = QUrl(QStringLiteral("http://127.0.0.1:%1/mcp").arg(port));
        config.headers = {{QByteArrayLiteral("X-Api-Key"), kSecret.toUtf8()}};
        config.oauth.enabled = false; // a 401 is "access denied", never a sign-in
    }
    if (row.checks & ShortTimeouts) {
        config.idleTimeoutMs = kShortIdleMs;
        config.hardMaximumMs = kShortHardMaximumMs;
    }
    Server::Options options;
    options.session.initializeTimeoutMs = kStartMs;
    options.listTimeoutMs = kStartMs;
    // Not restarted while a row looks at it, unless the row is about the restart.
    options.restartInitialMs = row.checks & Restarts ? 100 : 60000;
    if (row.checks & QuestionsBounded) {
        // Someone to ask who never answers: the questions stay open until something ends them.
        options.questions = [](const QString &, PendingElicitation *) {};
    }
    m_server = std::make_unique<Server>(config, options);
    QSignalSpy settled(m_server.get(), &Server::settled);
    m_server->start();
    QVERIFY(settled.wait(kWaitMs));
}

std::shared_ptr<McpTool> tst_McpHostile::find(const QString &name) const
{
    for (const auto &tool : m_server->tools()) {
        if (tool->info().name == name)
            return tool;
    }
    return nullptr;
}

ToolCallOutcome tst_McpHostile::call(const QString &name, const QJsonObject &arguments,
                                     int maxRetries)
{
    const auto tool = find(name);
    if (!tool) {
        qWarning("no tool %s", qPrintable(name));
        return {};
    }
    ToolExecutor executor;
    RetryPolicy base = RetryPolicy::defaults();
    base.initialDelay = std::chrono::milliseconds(20);
    base.maxRetries = maxRetries;
    ToolCallRequest request;
    request.tool = tool;
    request.arguments = arguments;
    request.context = {QStringLiteral("u-1"), QStringLiteral("t-1"), QStringLiteral("conv"),
                       QStringLiteral("req"), Language::English};
    request.policy = tool->retryPolicy(base);
    QFutureWatcher<ToolCallOutcome> watcher;
    QSignalSpy finished(&watcher, &QFutureWatcher<ToolCallOutcome>::finished);
    watcher.setFuture(executor.execute(std::move(request)));
    if (!finished.wait(kWaitMs))
        return {};
    return watcher.result();
}

QList<ToolCallOutcome> tst_McpHostile::callAtOnce(const QString &name, int count)
{
    const auto tool = find(name);
    if (!tool)
        return {};
    ToolExecutor::Options options;
    options.bulkheadPerTool = count; // all of them in flight at once
    ToolExecutor executor(options);
    RetryPolicy base = RetryPolicy::defaults();
    base.maxRetries = 0;
    QList<std::shared_ptr<QFutureWatcher<ToolCallOutcome>>> watchers;
    for (int i = 0; i < count; ++i) {
        ToolCallRequest request;
        request.tool = tool;
        request.context = {QStringLiteral("u-1"), QStringLiteral("t-1"), QStringLiteral("conv"),
                           QStringLiteral("req-%1").arg(i), Language::English};
        request.policy = tool->retryPolicy(base);
        auto watcher = std::make_shared<QFutureWatcher<ToolCallOutcome>>();
        watcher->setFuture(executor.execute(std::move(request)));
        watchers.append(watcher);
    }
    QList<ToolCallOutcome> outcomes;
    for (const auto &watcher : std::as_const(watchers)) {
        if (!watcher->isFinished()) {
            QSignalSpy finished(watcher.get(), &QFutureWatcher<ToolCallOutcome>::finished);
            if (!finished.wait(kWaitMs))
                return {};
        }
        outcomes.append(watcher->result());
    }
    return outcomes;
}

// One turn whose model asks for the server's "write" tool with `arguments`, confirmed by
// staff, through the agent loop and a ledger in the row's directory: a write as the console
// runs it. The same request id again is a replay of the same operation.
TurnResult tst_McpHostile::askToWrite(const QJsonObject &arguments, const QString &requestId,
                                      int *confirmations)
{
    ToolRegistry registry;
    for (const auto &tool : m_server->tools()) {
        if (!registry.find(tool->name()))
            registry.add(tool);
    }
    ToolExecutor executor;
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"),
                                McpTool::exposedName(m_serverName, QStringLiteral("write")),
                                QString::fromUtf8(QJsonDocument(arguments)
                                                      .toJson(QJsonDocument::Compact))}}),
                    finalAnswer()};
    const std::unique_ptr<IdempotencyLedger> ledger = openTestLedger(m_dir->path());
    AgentLoop loop({.model = &model,
                    .tools = &registry,
                    .executor = &executor,
                    .ledger = ledger.get(),
                    .toolPolicies = [&registry](const QString &name) {
                        const auto *mcp = dynamic_cast<const McpTool *>(registry.find(name).get());
                        return mcp ? mcp->retryPolicy(RetryPolicy::defaults())
                                   : RetryPolicy::defaults();
                    }});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), QStringLiteral("c-1")});
    int asked = 0;
    connect(&loop, &AgentLoop::confirmationRequested, this,
            [&loop, &asked](const QString &, const ToolCallRecord &write) {
        ++asked;
        loop.confirm(write.operationId, true);
    });
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    if (loop.ask(QStringLiteral("write it"), requestId).isEmpty())
        return {};
    if (!finished.wait(kWaitMs))
        return {};
    if (confirmations)
        *confirmations = asked;
    return finished.first().first().value<TurnResult>();
}

QStringList tst_McpHostile::effects() const
{
    QFile file(m_dir->filePath(QStringLiteral("effects.txt")));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

int tst_McpHostile::effectsStartingWith(const QString &prefix) const
{
    int count = 0;
    for (const QString &line : effects())
        count += line.startsWith(prefix);
    return count;
}

// Everything the data directory holds once every line logged so far is in its files.
QByteArray tst_McpHostile::dataDirectory()
{
    const QString mark = QStringLiteral("hostile-mark-%1").arg(++m_marks);
    qWarning("%s", qPrintable(mark));
    localLogLinesNaming(m_logDirectory.path(), {mark}); // returns once the file has it
    QByteArray all;
    QDirIterator files(m_logDirectory.path(), QDir::Files, QDirIterator::Subdirectories);
    while (files.hasNext()) {
        QFile file(files.next());
        if (file.open(QIODevice::ReadOnly))
            all += file.readAll();
    }
    return all;
}

// ---- the table ------------------------------------------------------------------------------

void tst_McpHostile::hostileServer_data()
{
    QTest::addColumn<Row>("row");
    const auto add = [](Row row) {
        const QString tag = QStringLiteral("%1 (%2)").arg(row.serverCase, nameOf(row.transport));
        QTest::newRow(qPrintable(tag)) << row;
    };
    constexpr auto Stdio = Transport::Stdio;
    constexpr auto Http = Transport::Http;

    // -- schemas: a tool whose arguments cannot be checked is not offered; the rest are.
    const QString shape = QStringLiteral("MCP.md › What is bounded › a schema's shape; "
                                         "DESIGN.md › Bounds (schemas from servers)");
    const QString keyword = QStringLiteral("MCP.md › What is bounded › an inputSchema keyword "
                                           "the validator does not enforce");
    const QString listing = QStringLiteral("MCP.md › What is bounded › tools/list");
    const auto refused = [&](const QString &serverCase, Transport transport, const QString &reason,
                             const QString &doc, const QStringList &tools = {"hostile"}) {
        add({serverCase, transport, "schemas", Expect::NotOffered, tools, reason, {}, {}, {}, None,
             doc, {}});
    };
    refused("schema-ref-root", Stdio, "leads back to itself", shape);
    refused("schema-ref-cycle", Http, "leads back to itself", shape);
    refused("schema-ref-remote", Stdio, "$ref", keyword);
    refused("schema-ref-unresolvable", Http, "points nowhere", shape);
    refused("schema-ref-bomb", Stdio, "more than 4096 schemas", shape);
    refused("schema-deep", Http, "deeper than 32 levels", shape);
    refused("schema-deep-refs", Stdio, "deeper than 32 levels", shape);
    refused("schema-huge-enum", Stdio, "more than 1024 values", shape);
    refused("schema-many-patterns", Http, "more than 256 patterns", shape);
    refused("schema-long-pattern", Stdio, "longer than 1024 characters", shape);
    refused("schema-backreference", Http, "linear time", shape);
    refused("schema-lookahead", Stdio, "linear time", shape);
    refused("schema-propertyNames", Http, "propertyNames", keyword);
    refused("schema-prefixItems", Stdio, "prefixItems", keyword);
    refused("schema-unevaluatedProperties", Http, "unevaluatedProperties", keyword);
    refused("schema-not-object", Stdio, "no object inputSchema", listing);
    refused("schema-string-type", Http, "no object inputSchema", listing);
    refused("schema-missing", Stdio, "no object inputSchema", listing);
    refused("schema-oversized", Http, "over 65536 bytes", listing);
    refused("output-schema-unsupported", Stdio, "outputSchema",
            QStringLiteral("MCP.md › What is bounded › a tool with an outputSchema"));
    refused("task-required", Http, "task",
            QStringLiteral("MCP.md › What is bounded › a tool that runs only as a task"));
    const QString linear = QStringLiteral("MCP.md › What is bounded › pattern, "
                                          "patternProperties (RE2, linear time)");
    const QString backtracking = QString(20000, QLatin1Char('a')) + QLatin1Char('!');
    add({"schema-redos", Http, "schemas", Expect::Call, {"match"}, {}, ResultCode::InvalidArgument,
         {}, {{"text", backtracking}}, Fast | NeverSent, linear, {}});
    add({"schema-redos", Stdio, "schemas", Expect::Call, {"match"}, {},
         ResultCode::InvalidArgument, {}, {{"text", QString(30, QLatin1Char('a')) + "!"}},
         Fast | NeverSent, linear, {}});
    add({"schema-redos-properties", Stdio, "schemas", Expect::Call, {"match"}, {},
         ResultCode::InvalidArgument, {}, {{backtracking, "x"}}, Fast | NeverSent, linear, {}});

    // -- names and listings
    const QString names = QStringLiteral("MCP.md › What is bounded › tools/list (names 1-128 of "
                                         "[A-Za-z0-9_.-]); MCP.md › Adding a server");
    refused("name-too-long", Http, "valid name", names, {QString(129, QLatin1Char('n'))});
    refused("name-bad-chars", Stdio, "valid name", names,
            {"rm -rf /", QStringLiteral("na\u00efve"), ""});
    add({"name-128", Http, "names", Expect::Offered, {QString(128, QLatin1Char('n'))}, {}, {}, {},
         {}, ExposedNameBounded, names, {}});
    add({"name-duplicate", Stdio, "names", Expect::Offered, {"twin"}, "listed twice", {}, {}, {},
         OneNamePerTool, listing + QStringLiteral(" (the single tool is not offered, logged)"),
         {}});
    add({"name-collision", Http, "names", Expect::Offered, {"a.b", "a_b"}, {}, {}, {}, {},
         OneNamePerTool,
         QStringLiteral("MCP.md › Adding a server (<server>__<tool>, never colliding); "
                        "What is bounded › tools/list (the single tool is not offered, logged)"),
         {}});
    add({"description-huge", Stdio, "names", Expect::Offered, {"wordy"}, {}, {}, {}, {},
         DescriptionCut, listing + QStringLiteral(" (descriptions cut at 2,048 characters)"),
         {}});
    add({"annotations-not-bool", Http, "names", Expect::Offered, {"hinted"}, {}, {}, {}, {},
         ConfirmFirst,
         QStringLiteral("MCP.md › Annotations decide the policy (anything else: write); "
                        "DESIGN.md › MCP tools"), {}});
    const auto down = [&](const QString &serverCase, Transport transport, const QString &family,
                          Failure failure, const QString &doc, int checks = None) {
        add({serverCase, transport, family, Expect::Down, {}, {}, {}, failure, {}, checks, doc,
             {}});
    };
    down("tools-10000", Stdio, "listing", Failure::Oversized, listing + " (256 tools)");
    down("tools-10000", Http, "listing", Failure::Oversized, listing + " (256 tools)");
    down("pages-endless", Http, "listing", Failure::Oversized, listing + " (16 pages)");
    down("pages-cursor-loop", Stdio, "listing", Failure::Oversized,
         listing + " (a repeated cursor ends it)");
    down("pages-slow", Http, "listing", Failure::Timeout,
         listing + QStringLiteral("; DESIGN.md › Bounds (never an unbounded wait)"));
    down("tools-not-array", Stdio, "listing", Failure::Malformed,
         listing + " (the listing fails: the server is down)");
    // Nested through properties, each schema level is two levels of JSON: the message's 64
    // are passed (with the answer's own four) before the schema's 32. The message's bound is
    // read first, so the whole listing is refused, not the one tool (reported: the two rows
    // of the table meet here).
    down("schema-deep-properties", Http, "schemas", Failure::Oversized,
         QStringLiteral("MCP.md › What is bounded › one JSON-RPC message (64 levels), read "
                        "before a schema's shape (32 levels)"));

    // -- results
    const QString message = QStringLiteral("MCP.md › What is bounded › one JSON-RPC message "
                                           "(4 MiB, 64 levels: the session is down, the call "
                                           "TOOL_REJECTED)");
    const QString resultBound = QStringLiteral("MCP.md › What is bounded › a result (8,000 "
                                               "characters, 8,000 bytes, 32 blocks)");
    const auto read = [&](const QString &serverCase, Transport transport, const QString &family,
                          ResultCode::Code code, int checks, const QString &doc,
                          Failure failure = Failure::None) {
        add({serverCase, transport, family, Expect::Call, {"probe"}, {}, code, failure, {}, checks,
             doc, {}});
    };
    read("result-over-bound", Stdio, "results", ResultCode::ToolRejected,
         ServerDown | BoundedMemory, message, Failure::Oversized);
    read("result-over-bound", Http, "results", ResultCode::ToolRejected,
         ServerDown | BoundedMemory, message, Failure::Oversized);
    read("result-large", Http, "results", ResultCode::Ok, Truncated | StaysReady, resultBound);
    read("result-many-blocks", Stdio, "results", ResultCode::Ok, Truncated | StaysReady,
         resultBound);
    read("result-deep-structured", Http, "results", ResultCode::ToolRejected, ServerDown, message,
         Failure::Oversized);
    read("result-deep-structured", Stdio, "results", ResultCode::ToolRejected, ServerDown, message,
         Failure::Oversized);
    read("result-wide-structured", Stdio, "results", ResultCode::Ok, Truncated | StaysReady,
         resultBound);
    read("is-error-huge", Http, "results", ResultCode::ToolRejected, Truncated | StaysReady,
         QStringLiteral("MCP.md › What is bounded › isError: true (the tool's own words, "
                        "bounded)"));
    read("error-huge", Stdio, "results", ResultCode::ToolRejected, OwnWordsOnly | StaysReady,
         QStringLiteral("DESIGN.md › Failure taxonomy (message and errors are fixed strings); "
                        "MCP.md › What is bounded › JSON-RPC error"));
    add({"output-mismatch", Stdio, "results", Expect::Call, {"typed"}, {},
         ResultCode::ToolRejected, {}, {}, StaysReady,
         QStringLiteral("MCP.md › What is bounded › a tool with an outputSchema"), {}});

    // -- framing: a server that breaks it is not spoken to again
    const QString malformed = QStringLiteral("MCP.md › What is bounded › not JSON-RPC 2.0 "
                                             "(Malformed: the session is down)");
    read("invalid-json", Stdio, "framing", ResultCode::ToolRejected, ServerDown, malformed,
         Failure::Malformed);
    read("invalid-json", Http, "framing", ResultCode::ToolRejected, ServerDown, malformed,
         Failure::Malformed);
    read("endless-line", Stdio, "framing", ResultCode::ToolRejected, ServerDown | BoundedMemory,
         message, Failure::Oversized);
    read("endless-body", Http, "framing", ResultCode::ToolRejected, ServerDown | BoundedMemory,
         message, Failure::Oversized);
    read("endless-sse-event", Http, "framing", ResultCode::ToolRejected,
         ServerDown | BoundedMemory, message, Failure::Oversized);
    read("binary-garbage", Stdio, "framing", ResultCode::ToolRejected, ServerDown, malformed,
         Failure::Malformed);
    read("binary-garbage", Http, "framing", ResultCode::ToolRejected, ServerDown, malformed,
         Failure::Malformed);
    read("not-jsonrpc-2", Stdio, "framing", ResultCode::ToolRejected, ServerDown, malformed,
         Failure::Malformed);
    read("batch-of-100", Http, "framing", ResultCode::ToolRejected, ServerDown,
         message + QStringLiteral(" (batches of 64)"), Failure::Malformed);

    // -- writes whose answer is lost after the server acted: unknown, one effect, never again
    const QString writes = QStringLiteral("MCP.md › Annotations decide the policy (write: "
                                          "EXECUTION_STATUS_UNKNOWN, never sent again); "
                                          "DESIGN.md › Write tools and idempotency");
    const auto write = [&](const QString &serverCase, Transport transport, int checks = None) {
        add({serverCase, transport, "writes", Expect::Write, {"write"}, {},
             ResultCode::ExecutionStatusUnknown, {}, {{"title", serverCase}}, checks, writes, {}});
    };
    write("write-then-exit", Stdio);
    write("write-then-drop", Http);
    write("write-then-hang", Stdio, ShortTimeouts | ToldToCancel);
    write("write-then-hang", Http, ShortTimeouts | ToldToCancel);
    write("write-then-garbage", Http);
    write("write-then-garbage", Stdio);
    write("write-then-500", Http);
    write("write-then-oversized", Stdio);
    write("write-then-stream-cut", Http, Resumed);

    // -- sessions over HTTP
    const QString http = QStringLiteral("MCP.md › What is bounded › HTTP (404 with our session "
                                        "id: the session expired)");
    read("session-expired-on-call", Http, "sessions", ResultCode::ToolUnavailable, Restarts,
         http + QStringLiteral("; initialize (restarted with backoff)"),
         Failure::SessionExpired);
    read("session-expires-mid-stream", Http, "sessions", ResultCode::ToolUnavailable,
         ServerDown | Resumed, http, Failure::SessionExpired);
    read("sse-endless-resumptions", Http, "sessions", ResultCode::ToolUnavailable, StaysReady,
         QStringLiteral("MCP.md › What is bounded › SSE retry: (5 resumptions without a "
                        "message: TOOL_UNAVAILABLE)"));
    read("sse-comments-forever", Http, "sessions", ResultCode::ToolTimeout,
         ShortTimeouts | ToldToCancel | StaysReady,
         QStringLiteral("MCP.md › What is bounded › an answer (the idle timeout; "
                        "notifications/cancelled is sent)"));
    read("six-hung-calls", Http, "sessions", ResultCode::ToolTimeout, ShortTimeouts | SixAtOnce,
         QStringLiteral("MCP.md › Annotations decide the policy (every stopped attempt is "
                        "followed by notifications/cancelled; a hung server starves nothing); "
                        "DESIGN.md › Bounds"));
    read("sse-retry-huge", Http, "sessions", ResultCode::ToolTimeout,
         ShortTimeouts | ToldToCancel | StaysReady,
         QStringLiteral("MCP.md › What is bounded › SSE retry: (capped at 60 s); an answer (the "
                        "idle timeout)"));
    // Not checked here, because it depends on which side is faster: while such a header
    // comes faster than Qt 6.4 reads it (byte by byte, in the transport's HTTP thread), no
    // later request to the server goes out, and ending the transport then waits 5 s for
    // that thread (docs/MCP.md, "Not done yet"). The call itself ends on time.
    add({"endless-header", Http, "sessions", Expect::Call, {"probe"}, {}, ResultCode::ToolTimeout,
         {}, {}, ShortTimeouts | BoundedMemory,
         QStringLiteral("DESIGN.md › Bounds (never an unbounded wait or unbounded memory)"),
         {}, None});
    read("redirect-elsewhere", Http, "sessions", ResultCode::ToolRejected, StaysReady,
         QStringLiteral("DESIGN.md › Bounds (never follows redirects); MCP.md › HTTP"));
    read("http-401", Http, "sessions", ResultCode::ToolAccessDenied, StaysReady,
         QStringLiteral("MCP.md › Servers that need sign-in (\"oauth\": false: a 401 is access "
                        "denied)"));

    // -- timeouts and progress
    const QString answer = QStringLiteral("MCP.md › What is bounded › an answer (idle timeout "
                                          "restarted by growing progress, capped by the hard "
                                          "maximum; notifications/cancelled is sent)");
    read("hang", Stdio, "progress", ResultCode::ToolTimeout,
         ShortTimeouts | ToldToCancel | StaysReady, answer);
    read("progress-forever", Stdio, "progress", ResultCode::ToolTimeout,
         ShortTimeouts | UntilHardMaximum | ToldToCancel, answer);
    read("progress-forever", Http, "progress", ResultCode::ToolTimeout,
         ShortTimeouts | UntilHardMaximum | ToldToCancel, answer);
    read("progress-repeated", Http, "progress", ResultCode::ToolTimeout,
         ShortTimeouts | IdleNotExtended | ToldToCancel, answer);
    read("progress-flood", Stdio, "progress", ResultCode::Ok, StaysReady | BoundedMemory, answer);
    read("progress-flood", Http, "progress", ResultCode::Ok, StaysReady | BoundedMemory, answer);
    read("progress-after-result", Stdio, "progress", ResultCode::Ok, StaysReady, answer);
    read("internal-error-always", Stdio, "progress", ResultCode::ToolUnavailable,
         Retried | StaysReady,
         QStringLiteral("MCP.md › What is bounded › JSON-RPC error (-32603 retried as "
                        "transient)"));

    // -- ids and the order of messages
    const QString ids = QStringLiteral("MCP.md › What is bounded › an answer; DESIGN.md › Bounds "
                                       "(never a crash, never an unbounded wait)");
    read("wrong-id", Stdio, "ids", ResultCode::ToolTimeout, ShortTimeouts | StaysReady, ids);
    read("string-id", Http, "ids", ResultCode::ToolTimeout, ShortTimeouts | StaysReady, ids);
    read("unsolicited-response", Stdio, "ids", ResultCode::Ok, StaysReady, ids);
    read("duplicate-answer", Http, "ids", ResultCode::Ok, StaysReady | FirstAnswerKept, ids);
    read("reused-id", Stdio, "ids", ResultCode::Ok, StaysReady, ids);
    add({"early-messages", Http, "ids", Expect::Offered, {"ok"}, {}, {}, {}, {}, PingAnswered,
         QStringLiteral("MCP.md › What is bounded › initialize; DESIGN.md › Bounds"), {}});
    add({"early-messages", Stdio, "ids", Expect::Offered, {"ok"}, {}, {}, {}, {}, PingAnswered,
         QStringLiteral("MCP.md › What is bounded › initialize; DESIGN.md › Bounds"), {}});
    add({"initialize-twice", Stdio, "ids", Expect::Offered, {"ok"}, {}, {}, {}, {}, None,
         QStringLiteral("MCP.md › What is bounded › initialize; DESIGN.md › Bounds"), {}});

    // -- the lifecycle
    const QString initialize = QStringLiteral("MCP.md › What is bounded › initialize (10 s: the "
                                              "server is down, restarted with backoff)");
    down("never-initialize", Stdio, "lifecycle", Failure::Timeout, initialize);
    down("never-initialize", Http, "lifecycle", Failure::Timeout, initialize);
    down("wrong-protocol-version", Stdio, "lifecycle", Failure::ProtocolVersion, initialize);
    down("wrong-protocol-version", Http, "lifecycle", Failure::ProtocolVersion, initialize);
    down("initialize-error", Http, "lifecycle", Failure::RemoteError, initialize);
    down("exit-at-start", Stdio, "lifecycle", Failure::TransportClosed,
         QStringLiteral("MCP.md › In the window (Down, with why)"));

    // -- the server's own requests: refused as unknown, the call goes on
    const QString requests = QStringLiteral("MCP.md › Questions from a server (no roots, no "
                                            "sampling: refused as unknown)");
    read("sampling-request", Stdio, "requests", ResultCode::Ok, RequestRefused | StaysReady,
         requests);
    read("roots-request", Http, "requests", ResultCode::Ok, RequestRefused | StaysReady, requests);
    const QString questions = QStringLiteral("MCP.md › Questions from a server (more than 4 open "
                                             "at once: declined; the call ends first: withdrawn, "
                                             "the server gets \"cancel\")");
    read("elicitation-flood", Stdio, "requests", ResultCode::Ok, QuestionsBounded | StaysReady,
         questions);
    read("elicitation-flood", Http, "requests", ResultCode::Ok, QuestionsBounded | StaysReady,
         questions);

    // -- secrets echoed back, and a stderr flood
    const QString secrets = QStringLiteral("MCP.md › What is bounded › a secret echoed back; "
                                           "Editing in Settings, and secrets in the keychain");
    add({"secrets-echo", Stdio, "secrets", Expect::SecretsKept, {"probe"}, {},
         ResultCode::ToolRejected, {}, {}, None, secrets, {}});
    add({"secrets-echo", Http, "secrets", Expect::SecretsKept, {"probe"}, {},
         ResultCode::ToolRejected, {}, {}, None, secrets, {}});
    add({"secret-in-http-500", Http, "secrets", Expect::SecretsKept, {"probe"}, {},
         ResultCode::ToolUnavailable, {}, {}, None, secrets, {}});
    add({"stderr-flood", Stdio, "secrets", Expect::StderrBounded, {"probe"}, {}, ResultCode::Ok,
         {}, {}, None,
         QStringLiteral("MCP.md › What is bounded › stderr of a stdio server (1,024 bytes a "
                        "line, 256 KiB a session)"), {}});
}

void tst_McpHostile::hostileServer()
{
    QFETCH(Row, row);
    ++m_perFamily[row.family];
    ++m_perTransport[nameOf(row.transport)];
    qInfo().noquote() << "promise:" << row.doc;
    startServer(row);
    if (QTest::currentTestFailed())
        return;
    m_row = &row;
    const auto forgetRow = qScopeGuard([this] { m_row = nullptr; });
    m_rowKnownBroken = !row.broken.isEmpty();
    switch (row.expect) {
    case Expect::NotOffered: expectNotOffered(row); break;
    case Expect::Offered: expectOffered(row); break;
    case Expect::Down:
        QCOMPARE(m_server->state(), Server::State::Down);
        QCOMPARE(m_server->lastFailure(), row.failure);
        QVERIFY(m_server->tools().isEmpty());
        break;
    case Expect::Call: expectCall(row); break;
    case Expect::Write: expectWrite(row); break;
    case Expect::SecretsKept: expectSecretsKept(row); break;
    case Expect::StderrBounded: expectStderrBounded(row); break;
    }
}

// ---- what each kind of row checks -------------------------------------------------------------

// Right before the verification `at` of a row whose promise is broken now: that one failure is
// expected, said with the promise it breaks, and ends the row (a pass there is an XPASS: the
// row's `broken` must then go).
void tst_McpHostile::expectBroken(Check at)
{
    if (m_row && m_row->brokenAt == at && !m_row->broken.isEmpty())
        QEXPECT_FAIL("", qPrintable(m_row->broken), Abort);
}

void tst_McpHostile::expectReadyAndAnswering()
{
    QCOMPARE(m_server->state(), Server::State::Ready);
    const ToolCallOutcome ok = call(QStringLiteral("ok"), {});
    expectBroken(StaysReady);
    QCOMPARE(ok.result.code, ResultCode::Ok);
}

void tst_McpHostile::expectNotOffered(const Row &row)
{
    QCOMPARE(m_server->state(), Server::State::Ready);
    QVERIFY2(find(QStringLiteral("ok")), "the server's sound tools are offered beside");
    for (const QString &name : row.tools)
        QVERIFY2(!find(name), qPrintable(QStringLiteral("%1 is offered").arg(name.left(64))));
    const QStringList refused = m_server->refusedTools();
    QVERIFY2(refused.size() >= row.tools.size(), qPrintable(refused.join(u'\n')));
    for (const QString &name : row.tools) {
        if (name.isEmpty())
            continue;
        QVERIFY2(!refused.filter(name.left(64)).isEmpty(), qPrintable(refused.join(u'\n')));
    }
    QVERIFY2(!refused.filter(row.reason, Qt::CaseInsensitive).isEmpty(),
             qPrintable(refused.join(u'\n')));
}

void tst_McpHostile::expectOffered(const Row &row)
{
    QCOMPARE(m_server->state(), Server::State::Ready);
    if (row.checks & OneNamePerTool) {
        // Whatever the server listed, the model sees each name once, and what is not offered
        // is named with the reason (the dock, --list-tools).
        QStringList exposed;
        for (const auto &tool : m_server->tools())
            exposed.append(tool->name());
        QStringList unique = exposed;
        unique.removeDuplicates();
        QCOMPARE(exposed.size(), unique.size());
        int offered = 0;
        for (const QString &name : row.tools)
            offered += bool(find(name));
        QCOMPARE(offered, 1);
        QVERIFY2(!m_server->refusedTools().isEmpty(), "what was not offered is not named");
        if (!row.reason.isEmpty())
            QVERIFY2(!m_server->refusedTools().filter(row.reason).isEmpty(),
                     qPrintable(m_server->refusedTools().join(u'\n')));
        return;
    }
    const auto tool = find(row.tools.first());
    QVERIFY2(tool, qPrintable(m_server->refusedTools().join(u'\n')));
    if (row.checks & ExposedNameBounded) {
        static const QRegularExpression allowed(QStringLiteral("^[A-Za-z0-9_-]{1,64}$"));
        QVERIFY2(allowed.match(tool->name()).hasMatch(), qPrintable(tool->name()));
    }
    if (row.checks & DescriptionCut) {
        QVERIFY(tool->info().description.size() <= 2048 + 1);
        QVERIFY(tool->descriptor().description.size() <= 2048 + 200);
        QVERIFY(tool->info().title.size() <= 256);
    }
    if (row.checks & ConfirmFirst) {
        QCOMPARE(tool->policy(), ToolPolicy::Write);
        QVERIFY(tool->descriptor().requiresConfirmation);
    }
    if (row.checks & PingAnswered)
        QTRY_COMPARE_WITH_TIMEOUT(effectsStartingWith(QStringLiteral("answer srv-early ok")), 1,
                                  kWaitMs);
    const ToolCallOutcome ok = call(QStringLiteral("ok"), {});
    QCOMPARE(ok.result.code, ResultCode::Ok);
}

void tst_McpHostile::expectCall(const Row &row)
{
    QCOMPARE(m_server->state(), Server::State::Ready);
    const QString tool = row.tools.first();
    if (row.checks & SixAtOnce) {
        const QList<ToolCallOutcome> outcomes = callAtOnce(tool, 6);
        QCOMPARE(outcomes.size(), 6);
        for (const ToolCallOutcome &outcome : outcomes)
            QCOMPARE(outcome.result.code, row.code);
        // Each was told to the server, and the server is still reachable for the next call.
        QTRY_COMPARE_WITH_TIMEOUT(effectsStartingWith(QStringLiteral("cancelled ")), 6, kWaitMs);
        expectReadyAndAnswering();
        return;
    }
    resetPeakResident();
    const qint64 residentBefore = residentKiB();
    QElapsedTimer clock;
    clock.start();
    const ToolCallOutcome outcome = call(tool, row.arguments, row.checks & Retried ? 2 : 0);
    const qint64 elapsed = clock.elapsed();
    QVERIFY2(!outcome.result.codeName().isEmpty(), "the call never ended");
    QCOMPARE(outcome.result.code, row.code);
    // Nothing the model or the chat reads carries the server's own words but data.
    QVERIFY(!outcome.result.message.contains(QLatin1String("oops")));
    if (row.checks & Fast)
        QVERIFY2(elapsed < 2000, qPrintable(QString::number(elapsed)));
    if (row.checks & NeverSent) {
        QVERIFY(outcome.attempts.isEmpty());
        QCOMPARE(effectsStartingWith(QStringLiteral("call ") + tool), 0);
    }
    if (row.checks & BoundedMemory) {
        const qint64 grown = peakResidentKiB() - residentBefore;
        QVERIFY2(grown < memoryBoundKiB(64 * 1024), qPrintable(QString::number(grown)));
    }
    if (row.checks & Truncated) {
        const QJsonObject data = outcome.result.data.toObject();
        QCOMPARE(data.value(QStringLiteral("truncated")).toBool(), true);
        QVERIFY(data.value(QStringLiteral("text")).toString().size() <= 8000 + 16);
        QVERIFY(data.value(QStringLiteral("content")).toArray().size() <= 32);
        QVERIFY(QJsonDocument(data).toJson(QJsonDocument::Compact).size() < 8000 + 8000 + 4096);
    }
    if (row.checks & FirstAnswerKept)
        QCOMPARE(outcome.result.data[QStringLiteral("text")].toString(),
                 QStringLiteral("the first answer"));
    if (row.checks & UntilHardMaximum) {
        QCOMPARE(outcome.attempts.size(), 1);
        const qint64 lasted = outcome.attempts.first().durationMs;
        QVERIFY2(lasted >= kShortHardMaximumMs - 50, qPrintable(QString::number(lasted)));
        QVERIFY2(lasted < kShortHardMaximumMs + 1000, qPrintable(QString::number(lasted)));
    }
    if (row.checks & IdleNotExtended) {
        QCOMPARE(outcome.attempts.size(), 1);
        const qint64 lasted = outcome.attempts.first().durationMs;
        QVERIFY2(lasted < kShortHardMaximumMs - 200, qPrintable(QString::number(lasted)));
    }
    if (row.checks & Retried) {
        QCOMPARE(outcome.attempts.size(), 3);
        QTRY_COMPARE_WITH_TIMEOUT(effectsStartingWith(QStringLiteral("call ") + tool), 3, kWaitMs);
    }
    if (row.checks & ToldToCancel)
        QTRY_COMPARE_WITH_TIMEOUT(effectsStartingWith(QStringLiteral("cancelled ")), 1, kWaitMs);
    if (row.checks & Resumed)
        QCOMPARE(effectsStartingWith(QStringLiteral("get e1")), 1);
    if (row.checks & RequestRefused)
        QTRY_COMPARE_WITH_TIMEOUT(effectsStartingWith(QStringLiteral("answer srv-1 -32601")), 1,
                                  kWaitMs);
    if (row.checks & QuestionsBounded) {
        QTRY_COMPARE_WITH_TIMEOUT(effectsStartingWith(QStringLiteral("answer q")), 10, kWaitMs);
        const QStringList answers = effects().filter(QRegularExpression(QStringLiteral("^answer q")));
        QCOMPARE(answers.filter(QStringLiteral(" decline")).size(), 6);
        QCOMPARE(answers.filter(QStringLiteral(" cancel")).size(), 4);
    }
    if (row.checks & OwnWordsOnly) {
        const QByteArray result
            = QJsonDocument(outcome.result.toJson()).toJson(QJsonDocument::Compact);
        QVERIFY2(!result.contains("eeeeeeee") && !result.contains("tttttttt"),
                 result.left(500).constData());
    }
    if (row.checks & ServerDown) {
        // A server that broke framing is not spoken to again (until its restart).
        QTRY_COMPARE_WITH_TIMEOUT(m_server->state(), Server::State::Down, kWaitMs);
        QCOMPARE(m_server->lastFailure(), row.failure);
    }
    if (row.checks & Restarts) {
        // Down with the expired session, then a new one: initialize again, without the old
        // session's id, and the call answers on it.
        QTRY_COMPARE_WITH_TIMEOUT(effectsStartingWith(QStringLiteral("initialize -")), 2,
                                  kWaitMs);
        QCOMPARE(effectsStartingWith(QStringLiteral("initialize ")), 2);
        QTRY_COMPARE_WITH_TIMEOUT(m_server->state(), Server::State::Ready, kWaitMs);
        QCOMPARE(call(tool, {}).result.code, ResultCode::Ok);
    }
    if (row.checks & StaysReady)
        expectReadyAndAnswering();
}

void tst_McpHostile::expectWrite(const Row &row)
{
    QCOMPARE(m_server->state(), Server::State::Ready);
    const QString requestId = QStringLiteral("r-hostile-write");
    int confirmations = 0;
    const TurnResult first = askToWrite(row.arguments, requestId, &confirmations);
    QCOMPARE(confirmations, 1); // no annotations: staff confirm it first
    QCOMPARE(first.toolCalls.size(), 1);
    const ToolCallRecord &write = first.toolCalls.first();
    QCOMPARE(write.result.code, row.code);
    QCOMPARE(write.attemptsMade(), 1);
    QCOMPARE(first.unknownExecutionStatus, 1);
    // It acted once, and the request reached it once (no HTTP stack sent it again).
    QCOMPARE(effectsStartingWith(QStringLiteral("write ")), 1);
    QCOMPARE(effectsStartingWith(QStringLiteral("call write")), 1);
    if (row.checks & ToldToCancel)
        QTRY_COMPARE_WITH_TIMEOUT(effectsStartingWith(QStringLiteral("cancelled ")), 1, kWaitMs);
    if (row.checks & Resumed)
        QCOMPARE(effectsStartingWith(QStringLiteral("get e1")), 1);
    // The same request again (a replay: the same operation) is answered from what is known.
    const TurnResult again = askToWrite(row.arguments, requestId);
    QCOMPARE(again.toolCalls.size(), 1);
    QCOMPARE(again.toolCalls.first().result.code, ResultCode::ExecutionStatusUnknown);
    QCOMPARE(effectsStartingWith(QStringLiteral("write ")), 1);
    QCOMPARE(effectsStartingWith(QStringLiteral("call write")), 1);
}

void tst_McpHostile::expectSecretsKept(const Row &row)
{
    QCOMPARE(m_server->state(), Server::State::Ready);
    const ToolCallOutcome outcome = call(row.tools.first(), {});
    QCOMPARE(outcome.result.code, row.code);
    // What the model and the chat read is the failure table's, never the server's words.
    const QByteArray result
        = QJsonDocument(outcome.result.toJson()).toJson(QJsonDocument::Compact);
    QVERIFY(!result.contains(kSecret.toUtf8()));
    QVERIFY(!m_server->lastError().contains(kSecret));
    // The echoes reached the log (so their absence is not silence), redacted; stdio's stderr
    // is read as it comes, so the log is read again until its lines are there.
    const QByteArray echoed = row.transport == Transport::Stdio
        ? QByteArrayLiteral("using token [redacted]")
        : row.serverCase == QLatin1String("secret-in-http-500")
        ? QByteArrayLiteral("refused key [redacted]")
        : QByteArrayLiteral("unauthorized: [redacted]");
    QTRY_VERIFY_WITH_TIMEOUT(dataDirectory().contains(echoed), kWaitMs);
    const QByteArray all = dataDirectory();
    QVERIFY(!all.contains(kSecret.toUtf8()));
    QVERIFY(!all.contains(kSecret.left(10).toUtf8())); // nor the start of a line cut inside it
    if (row.serverCase == QLatin1String("secrets-echo"))
        QVERIFY2(all.contains(R"("credentials":"[redacted]")"), all.right(2000).constData());
}

void tst_McpHostile::expectStderrBounded(const Row &row)
{
    QCOMPARE(m_server->state(), Server::State::Ready);
    QCOMPARE(call(row.tools.first(), {}).result.code, row.code);
    const QByteArray prefix = "stdio server \"" + m_serverName.toUtf8() + "\" stderr:";
    const auto logged = [&] {
        qsizetype bytes = 0;
        int dropped = 0;
        for (const QByteArray &line : dataDirectory().split('\n')) {
            if (line.contains(prefix))
                bytes += line.size() - line.indexOf(prefix) - prefix.size();
            dropped += line.contains("\"" + m_serverName.toUtf8() + "\" stderr: more than");
        }
        return std::make_pair(bytes, dropped);
    };
    // All 4 MB have been written before the answer; the log has had them once it says so.
    QTRY_COMPARE_WITH_TIMEOUT(logged().second, 1, kWaitMs);
    const auto [bytes, dropped] = logged();
    QCOMPARE(dropped, 1);
    QVERIFY2(bytes <= 256 * 1024 + 2 * 1024, qPrintable(QString::number(bytes)));
    QVERIFY(bytes >= 200 * 1024);
    expectReadyAndAnswering();
}

QTEST_GUILESS_MAIN(tst_McpHostile)
#include "tst_mcphostile.moc"
