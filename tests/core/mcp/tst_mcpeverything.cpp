#include "everythingserver.h"

#include "core/mcp/httptransport.h"
#include "core/mcp/mcpsession.h"
#include "core/mcp/mcptool.h"
#include "core/mcp/mcptoolinfo.h"
#include "core/mcp/stdiotransport.h"
#include "core/resilience/resultcode.h"
#include "core/resilience/toolexecutor.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

#include <csignal>
#include <sys/types.h>

using namespace AgentConsole;
using namespace AgentConsole::Mcp;

namespace {

constexpr int kWaitMs = 20000;
const QString kModules = QStringLiteral(MCP_NODE_MODULES);
const QString kNode = kModules + QStringLiteral("/.bin/node");
const QString kEverything =
    kModules + QStringLiteral("/@modelcontextprotocol/server-everything/dist/index.js");

} // namespace

// The official reference server, @modelcontextprotocol/server-everything (npm, installed into
// the build tree with the conformance suite), over stdio and Streamable HTTP: its tools with
// their annotations, a read-only call, a long call kept alive by progress past the idle
// timeout, a cancelled call, and a non-idempotent tool that is never retried.
class tst_McpEverything : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();
    void listsToolsWithTheirAnnotations_data() { transports(); }
    void listsToolsWithTheirAnnotations();
    void readOnlyToolAnswers_data() { transports(); }
    void readOnlyToolAnswers();
    void progressOutlivesTheIdleTimeout_data() { transports(); }
    void progressOutlivesTheIdleTimeout();
    void cancelledCallLeavesTheSessionUsable_data() { transports(); }
    void cancelledCallLeavesTheSessionUsable();
    void nonIdempotentToolIsNeverRetried_data() { transports(); }
    void nonIdempotentToolIsNeverRetried();

private:
    void transports();
    bool connectTo(const QString &transport);
    std::shared_ptr<McpTool> tool(const QString &name, McpTool::Settings settings = {});
    ToolCallOutcome run(const std::shared_ptr<McpTool> &tool, const QJsonObject &arguments);

    std::unique_ptr<QProcess> m_httpServer;
    std::unique_ptr<Session> m_session;
    std::shared_ptr<SessionHandle> m_handle;
    QList<ToolInfo> m_tools;
    std::unique_ptr<ToolExecutor> m_executor;
    RetryPolicy m_fast; // the base of every call's policy (McpTool::retryPolicy)
};

void tst_McpEverything::initTestCase()
{
    if (!QFileInfo::exists(kEverything)) {
        const QString why = QStringLiteral("server-everything is not installed in %1 "
                                           "(tests/core/mcp/conformance.sh --install, or npm "
                                           "unreachable)")
                                .arg(kModules);
        if (qEnvironmentVariableIsSet("CI"))
            QFAIL(qPrintable(why));
        QSKIP(qPrintable(why));
    }
}

void tst_McpEverything::transports()
{
    QTest::addColumn<QString>("transport");
    QTest::newRow("stdio") << QStringLiteral("stdio");
    QTest::newRow("http") << QStringLiteral("http");
}

void tst_McpEverything::init()
{
    m_fast = RetryPolicy::defaults();
    m_fast.initialDelay = std::chrono::milliseconds(20);
    m_executor = std::make_unique<ToolExecutor>();
}

void tst_McpEverything::cleanup()
{
    m_executor.reset();
    if (m_session) {
        QSignalSpy closed(m_session.get(), &Session::closed);
        m_session->close();
        closed.wait(kWaitMs);
    }
    m_session.reset();
    if (m_httpServer) {
        m_httpServer->terminate();
        QSignalSpy finished(m_httpServer.get(), &QProcess::finished);
        if (m_httpServer->state() != QProcess::NotRunning && !finished.wait(kWaitMs))
            m_httpServer->kill();
    }
    m_httpServer.reset();
}

bool tst_McpEverything::connectTo(const QString &transport)
{
    std::unique_ptr<Transport> made;
    if (transport == QLatin1String("stdio")) {
        StdioTransport::Options options;
        options.serverName = QStringLiteral("everything");
        options.program = kNode;
        options.arguments = {kEverything, QStringLiteral("stdio")};
        made = std::make_unique<StdioTransport>(options);
    } else {
        quint16 port = 0;
        m_httpServer = Testing::startEverythingOverHttp(kNode, kEverything, kWaitMs, &port);
        if (!m_httpServer)
            return false;
        HttpTransport::Options options;
        options.url = QUrl(QStringLiteral("http://127.0.0.1:%1/mcp").arg(port));
        made = std::make_unique<HttpTransport>(options);
    }
    m_session = std::make_unique<Session>(std::move(made), Session::Options{});
    QSignalSpy ready(m_session.get(), &Session::ready);
    m_session->start();
    if (!ready.wait(kWaitMs))
        return false;
    ToolLister lister(m_session.get());
    QSignalSpy listed(&lister, &ToolLister::finished);
    lister.list();
    if (!listed.wait(kWaitMs))
        return false;
    m_tools = listed.first().first().value<QList<ToolInfo>>();
    m_handle = std::make_shared<SessionHandle>(m_session.get());
    return !m_tools.isEmpty();
}

std::shared_ptr<McpTool> tst_McpEverything::tool(const QString &name, McpTool::Settings settings)
{
    for (const ToolInfo &info : std::as_const(m_tools)) {
        if (info.name == name) {
            QString problem;
            return McpTool::create(m_handle, QStringLiteral("everything"), info, settings, &problem);
        }
    }
    return nullptr;
}

ToolCallOutcome tst_McpEverything::run(const std::shared_ptr<McpTool> &tool,
                                       const QJsonObject &arguments)
{
    ToolCallRequest request;
    request.tool = tool;
    request.arguments = arguments;
    request.context = {QStringLiteral("staff-1"), QStringLiteral("tenant-1"),
                       QStringLiteral("conv"), QStringLiteral("req"), Language::English};
    request.policy = tool->retryPolicy(m_fast);
    if (tool->descriptor().hasSideEffects)
        request.idempotencyKey = QStringLiteral("tenant-1:conv:req:%1:0").arg(tool->name());
    QFutureWatcher<ToolCallOutcome> watcher;
    QSignalSpy finished(&watcher, &QFutureWatcher<ToolCallOutcome>::finished);
    watcher.setFuture(m_executor->execute(std::move(request)));
    if (!finished.wait(kWaitMs))
        return {};
    return watcher.result();
}

void tst_McpEverything::listsToolsWithTheirAnnotations()
{
    QFETCH(QString, transport);
    QVERIFY(connectTo(transport));
    QVERIFY(m_session->protocolVersion().startsWith(QStringLiteral("2025-")));
    const auto longRunning = tool(QStringLiteral("trigger-long-running-operation"));
    QVERIFY(longRunning);
    QCOMPARE(longRunning->policy(), ToolPolicy::Read);
    QCOMPARE(longRunning->info().annotations.idempotent, std::optional<bool>(true));
    const auto toggle = tool(QStringLiteral("toggle-simulated-logging"));
    QVERIFY(toggle);
    QCOMPARE(toggle->info().annotations.readOnly, std::optional<bool>(false));
    QCOMPARE(toggle->policy(), ToolPolicy::Write);
    QVERIFY(toggle->descriptor().requiresConfirmation);
    // A task-only tool is not offered: this client runs no tasks.
    QVERIFY(!tool(QStringLiteral("simulate-research-query")));
}

void tst_McpEverything::readOnlyToolAnswers()
{
    QFETCH(QString, transport);
    QVERIFY(connectTo(transport));
    const ToolCallOutcome outcome = run(tool(QStringLiteral("echo")),
                                        {{QStringLiteral("message"), QStringLiteral("hi")}});
    QVERIFY2(outcome.result.success, qPrintable(outcome.result.codeName()));
    QVERIFY(outcome.result.data[QStringLiteral("text")].toString().contains(QStringLiteral("hi")));
    // Arguments are checked against the server's own schema first.
    const ToolCallOutcome invalid = run(tool(QStringLiteral("echo")), {{QStringLiteral("message"), 5}});
    QCOMPARE(invalid.result.code, ResultCode::InvalidArgument);
    QVERIFY(invalid.attempts.isEmpty());
}

void tst_McpEverything::progressOutlivesTheIdleTimeout()
{
    QFETCH(QString, transport);
    QVERIFY(connectTo(transport));
    McpTool::Settings settings;
    settings.idleTimeoutMs = 1000; // a step is 400 ms; the whole call 1.6 s
    settings.hardMaximumMs = 10000;
    const ToolCallOutcome outcome = run(tool(QStringLiteral("trigger-long-running-operation"), settings),
                                        {{QStringLiteral("duration"), 1.6}, {QStringLiteral("steps"), 4}});
    QVERIFY2(outcome.result.success, qPrintable(outcome.result.codeName()));
    QCOMPARE(outcome.attempts.size(), 1);
    QVERIFY(outcome.attempts.first().durationMs > 1000);
}

void tst_McpEverything::cancelledCallLeavesTheSessionUsable()
{
    QFETCH(QString, transport);
    QVERIFY(connectTo(transport));
    PendingRequest *request = m_session->request(
        QStringLiteral("tools/call"),
        {{QStringLiteral("name"), QStringLiteral("trigger-long-running-operation")},
         {QStringLiteral("arguments"), QJsonObject{{QStringLiteral("duration"), 10},
                                                   {QStringLiteral("steps"), 10}}}},
        {5000, 20000, true, {}});
    QSignalSpy progressed(request, &PendingRequest::progressed);
    QSignalSpy finished(request, &PendingRequest::finished);
    QVERIFY(progressed.wait(kWaitMs)); // it is running
    request->cancel(QStringLiteral("staff cancelled"));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.first().first().value<Reply>().error.failure, Failure::Cancelled);
    QSignalSpy pinged(m_session->ping(), &PendingRequest::finished);
    QVERIFY(pinged.wait(kWaitMs));
    QVERIFY(pinged.first().first().value<Reply>().ok());
}

void tst_McpEverything::nonIdempotentToolIsNeverRetried()
{
    QFETCH(QString, transport);
    QVERIFY(connectTo(transport));
    const auto toggle = tool(QStringLiteral("toggle-simulated-logging"));
    const auto echo = tool(QStringLiteral("echo"));
    // The server goes away: every attempt fails as unavailable, which a read retries.
    if (m_httpServer) {
        m_httpServer->kill();
        QSignalSpy finished(m_httpServer.get(), &QProcess::finished);
        QVERIFY(m_httpServer->state() == QProcess::NotRunning || finished.wait(kWaitMs));
    } else {
        QSignalSpy failed(m_session.get(), &Session::failed);
        ::kill(pid_t(static_cast<StdioTransport *>(m_session->transport())->processId()), SIGKILL);
        QVERIFY(failed.wait(kWaitMs));
    }
    const ToolCallOutcome write = run(toggle, {});
    // Over HTTP the POST may go out on the connection the server had open (when its close has
    // not been read yet), which then closes unanswered: whether the server read it cannot be
    // known, so a write says so (issue #40 §1); or the close was seen first and a new
    // connection is refused: unavailable. A stdio server's exit is always seen first. Either
    // way it is never sent again.
    QVERIFY2(write.result.code == ResultCode::ToolUnavailable
                 || (m_httpServer && write.result.code == ResultCode::ExecutionStatusUnknown),
             qPrintable(write.result.codeName()));
    QCOMPARE(write.attempts.size(), 1);
    const ToolCallOutcome read = run(echo, {{QStringLiteral("message"), QStringLiteral("x")}});
    QCOMPARE(read.result.code, ResultCode::ToolUnavailable);
    QCOMPARE(read.attempts.size(), 3);
}

QTEST_GUILESS_MAIN(tst_McpEverything)
#include "tst_mcpeverything.moc"
