#include "core/mcp/mcpsession.h"
#include "core/mcp/mcptoolinfo.h"
#include "core/mcp/stdiotransport.h"

#include <QJsonArray>
#include <QLoggingCategory>
#include <QPointer>
#include <QSignalSpy>
#include <QTest>

using namespace AgentConsole::Mcp;

namespace {

constexpr int kWaitMs = 10000; // an upper bound for QSignalSpy::wait, never a sleep

std::unique_ptr<Session> makeSession(const QString &mode, Session::Options options = {})
{
    StdioTransport::Options transport;
    transport.serverName = QStringLiteral("fake-") + mode;
    transport.program = QStringLiteral(FAKE_MCP_SERVER);
    transport.arguments = {mode};
    transport.terminateAfterMs = 300;
    transport.killAfterMs = 300;
    return std::make_unique<Session>(std::make_unique<StdioTransport>(transport), options);
}

// The reply of one request, waited for on the event loop.
Reply await(PendingRequest *request)
{
    QSignalSpy finished(request, &PendingRequest::finished);
    if (!finished.wait(kWaitMs))
        return {{}, Error::of(Failure::Timeout, QStringLiteral("the test gave up")), {}};
    return finished.first().first().value<Reply>();
}

Reply callTool(Session *session, const QString &name, const QJsonObject &arguments = {},
               const Session::RequestOptions &options = {})
{
    return await(session->request(QStringLiteral("tools/call"),
                                  {{QStringLiteral("name"), name},
                                   {QStringLiteral("arguments"), arguments}},
                                  options));
}

QJsonObject stats(Session *session)
{
    return callTool(session, QStringLiteral("stats")).result.toObject()
        .value(QStringLiteral("structuredContent")).toObject();
}

} // namespace

class tst_McpSession : public QObject
{
    Q_OBJECT

private slots:
    void initializeNegotiatesTheLatestVersion();
    void acceptsAnOlderServersVersion();
    void refusesAnUnknownVersion();
    void serverThatNeverAnswersInitialize();
    void programThatDoesNotExist();
    void listsToolsAcrossPages();
    void endlessPagesAreBounded();
    void callAnswers();
    void answersTheServersPing();
    void hangTimesOutAndSendsCancelled();
    void cancelSendsCancelled();
    void progressKeepsTheRequestAlive();
    void progressStopsAtTheHardMaximum();
    void crashMidCall();
    void malformedJsonRpc();
    void oversizedResult();
    void jsonRpcErrorIsClassified();
    void toolsListChanged();
    void requestsBeforeReadyFailAtOnce();
    void cleanShutdown();
    void stubbornServerIsEnded();
    void stderrGoesToTheLogBounded();
    void policyFromAnnotations_data();
    void policyFromAnnotations();
};

void tst_McpSession::initializeNegotiatesTheLatestVersion()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    QCOMPARE(session->state(), Session::State::Ready);
    QCOMPARE(session->protocolVersion(), QStringLiteral("2025-11-25"));
    QCOMPARE(session->serverInfo().value(QStringLiteral("name")).toString(), QStringLiteral("fake-mcp"));
    QVERIFY(session->serverCapabilities().contains(QStringLiteral("tools")));
    const Reply ping = await(session->ping());
    QVERIFY2(ping.ok(), qPrintable(ping.error.describe()));
}

void tst_McpSession::acceptsAnOlderServersVersion()
{
    auto session = makeSession(QStringLiteral("old-version"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    QCOMPARE(session->protocolVersion(), QStringLiteral("2025-03-26"));
}

void tst_McpSession::refusesAnUnknownVersion()
{
    auto session = makeSession(QStringLiteral("bad-version"));
    QSignalSpy failed(session.get(), &Session::failed);
    session->start();
    QVERIFY(failed.wait(kWaitMs));
    QCOMPARE(failed.first().first().value<Error>().failure, Failure::ProtocolVersion);
    QCOMPARE(session->state(), Session::State::Failed);
}

void tst_McpSession::serverThatNeverAnswersInitialize()
{
    Session::Options options;
    options.initializeTimeoutMs = 300;
    auto session = makeSession(QStringLiteral("no-init"), options);
    QSignalSpy failed(session.get(), &Session::failed);
    QElapsedTimer clock;
    clock.start();
    session->start();
    QVERIFY(failed.wait(kWaitMs));
    QCOMPARE(failed.first().first().value<Error>().failure, Failure::Timeout);
    QVERIFY(clock.elapsed() >= 290);
    QSignalSpy closed(session.get(), &Session::closed);
    session->close();
    QVERIFY(closed.wait(kWaitMs));
}

void tst_McpSession::programThatDoesNotExist()
{
    StdioTransport::Options transport;
    transport.serverName = QStringLiteral("missing");
    transport.program = QStringLiteral("/nonexistent/mcp-server");
    Session session(std::make_unique<StdioTransport>(transport), {});
    QSignalSpy failed(&session, &Session::failed);
    session.start();
    QVERIFY(failed.wait(kWaitMs));
    QCOMPARE(failed.first().first().value<Error>().failure, Failure::TransportFailed);
}

void tst_McpSession::listsToolsAcrossPages()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    ToolLister lister(session.get());
    QSignalSpy finished(&lister, &ToolLister::finished);
    lister.list();
    QVERIFY(finished.wait(kWaitMs));
    const auto tools = finished.first().at(0).value<QList<ToolInfo>>();
    QVERIFY(!finished.first().at(2).value<Error>().isError());
    QCOMPARE(tools.size(), 13); // five on the first page, eight on the second
    QCOMPARE(tools.first().name, QStringLiteral("echo"));
    QCOMPARE(tools.first().annotations.readOnly, std::optional<bool>(true));
    QCOMPARE(tools.last().name, QStringLiteral("add_tool"));
}

void tst_McpSession::endlessPagesAreBounded()
{
    auto session = makeSession(QStringLiteral("endless-pages"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    ToolLister lister(session.get());
    QSignalSpy finished(&lister, &ToolLister::finished);
    lister.list();
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(finished.first().at(2).value<Error>().failure, Failure::Oversized);
}

void tst_McpSession::callAnswers()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    const Reply reply = callTool(session.get(), QStringLiteral("echo"),
                                 {{QStringLiteral("text"), QStringLiteral("hello")}});
    QVERIFY2(reply.ok(), qPrintable(reply.error.describe()));
    QCOMPARE(reply.result[QStringLiteral("content")][0][QStringLiteral("text")].toString(),
             QStringLiteral("hello"));
}

void tst_McpSession::answersTheServersPing()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    QTRY_VERIFY_WITH_TIMEOUT(stats(session.get()).value(QStringLiteral("pingAnswered")).toBool(),
                             kWaitMs);
}

void tst_McpSession::hangTimesOutAndSendsCancelled()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    QPointer<PendingRequest> request = session->request(
        QStringLiteral("tools/call"), {{QStringLiteral("name"), QStringLiteral("hang")}},
        {200, 0, false, {}});
    const qint64 id = request->id();
    const Reply reply = await(request);
    QCOMPARE(reply.error.failure, Failure::Timeout);
    QCOMPARE(session->inFlight(), 0);
    // The server heard of it: notifications/cancelled with the request's id.
    QCOMPARE(stats(session.get()).value(QStringLiteral("cancelled")).toArray(),
             QJsonArray{double(id)});
    QCOMPARE(session->state(), Session::State::Ready); // one slow call does not end the session
}

void tst_McpSession::cancelSendsCancelled()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    PendingRequest *request = session->request(
        QStringLiteral("tools/call"), {{QStringLiteral("name"), QStringLiteral("hang")}});
    const qint64 id = request->id();
    QSignalSpy finished(request, &PendingRequest::finished);
    request->cancel(QStringLiteral("staff cancelled"));
    QCOMPARE(finished.size(), 1); // at once
    QCOMPARE(finished.first().first().value<Reply>().error.failure, Failure::Cancelled);
    QCOMPARE(stats(session.get()).value(QStringLiteral("cancelled")).toArray(),
             QJsonArray{double(id)});
}

void tst_McpSession::progressKeepsTheRequestAlive()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    // Eight steps of 100 ms: 900 ms in all, past the 600 ms timeout, but never 600 ms without
    // progress (the margin is for slow sanitizer builds).
    PendingRequest *request = session->request(
        QStringLiteral("tools/call"),
        {{QStringLiteral("name"), QStringLiteral("slow_progress")},
         {QStringLiteral("arguments"), QJsonObject{{QStringLiteral("steps"), 8},
                                                   {QStringLiteral("intervalMs"), 100}}}},
        {600, 5000, true, {}});
    QSignalSpy progressed(request, &PendingRequest::progressed);
    const Reply reply = await(request);
    QVERIFY2(reply.ok(), qPrintable(reply.error.describe()));
    QCOMPARE(progressed.size(), 8);
    QCOMPARE(progressed.last().at(0).toDouble(), 8.0);
}

void tst_McpSession::progressStopsAtTheHardMaximum()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    QElapsedTimer clock;
    clock.start();
    const Reply reply = callTool(session.get(), QStringLiteral("slow_progress"),
                                 {{QStringLiteral("steps"), 50}, {QStringLiteral("intervalMs"), 50}},
                                 {300, 600, true, {}});
    QCOMPARE(reply.error.failure, Failure::Timeout);
    QVERIFY(reply.error.detail.contains(QStringLiteral("hard maximum")));
    QVERIFY(clock.elapsed() < 2000);
    QCOMPARE(stats(session.get()).value(QStringLiteral("cancelled")).toArray().size(), 1);
}

void tst_McpSession::crashMidCall()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    QSignalSpy failed(session.get(), &Session::failed);
    const Reply reply = callTool(session.get(), QStringLiteral("crash"));
    QCOMPARE(reply.error.failure, Failure::TransportClosed);
    QCOMPARE(failed.size(), 1);
    QCOMPARE(session->state(), Session::State::Failed);
    // Nothing more is sent to a dead server: later requests fail at once.
    QCOMPARE(callTool(session.get(), QStringLiteral("echo")).error.failure, Failure::NotConnected);
}

void tst_McpSession::malformedJsonRpc()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    const Reply reply = callTool(session.get(), QStringLiteral("malformed"));
    QCOMPARE(reply.error.failure, Failure::Malformed);
    QCOMPARE(session->state(), Session::State::Failed);
}

void tst_McpSession::oversizedResult()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    const Reply reply = callTool(session.get(), QStringLiteral("oversized"));
    QCOMPARE(reply.error.failure, Failure::Oversized);
}

void tst_McpSession::jsonRpcErrorIsClassified()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    const Reply unknown = callTool(session.get(), QStringLiteral("no_such_tool"));
    QCOMPARE(unknown.error.failure, Failure::RemoteError);
    QCOMPARE(unknown.error.code, JsonRpcCode::InvalidParams);
    QVERIFY(!isTransient(unknown.error));
    const Reply flaky = callTool(session.get(), QStringLiteral("flaky"));
    QCOMPARE(flaky.error.code, JsonRpcCode::InternalError);
    QVERIFY(isTransient(flaky.error));
    const Reply method = await(session->request(QStringLiteral("resources/list")));
    QCOMPARE(method.error.code, JsonRpcCode::MethodNotFound);
    QCOMPARE(session->state(), Session::State::Ready);
}

void tst_McpSession::toolsListChanged()
{
    auto session = makeSession(QStringLiteral("list-changed"));
    QSignalSpy changed(session.get(), &Session::toolsChanged);
    session->start();
    QVERIFY(changed.wait(kWaitMs));
}

void tst_McpSession::requestsBeforeReadyFailAtOnce()
{
    auto session = makeSession(QStringLiteral("normal"));
    const Reply reply = await(session->request(QStringLiteral("tools/list")));
    QCOMPARE(reply.error.failure, Failure::NotConnected);
}

void tst_McpSession::cleanShutdown()
{
    auto session = makeSession(QStringLiteral("normal"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    QPointer<PendingRequest> hanging = session->request(
        QStringLiteral("tools/call"), {{QStringLiteral("name"), QStringLiteral("hang")}});
    QSignalSpy finished(hanging.data(), &PendingRequest::finished);
    QSignalSpy closed(session.get(), &Session::closed);
    session->close();
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.first().first().value<Reply>().error.failure, Failure::Cancelled);
    QVERIFY(closed.wait(kWaitMs));
    QCOMPARE(session->state(), Session::State::Closed);
}

void tst_McpSession::stubbornServerIsEnded()
{
    for (const QString &mode : {QStringLiteral("stubborn"), QStringLiteral("deaf")}) {
        auto session = makeSession(mode);
        QSignalSpy ready(session.get(), &Session::ready);
        session->start();
        QVERIFY(ready.wait(kWaitMs));
        QSignalSpy closed(session.get(), &Session::closed);
        QElapsedTimer clock;
        clock.start();
        session->close();
        QVERIFY(closed.wait(kWaitMs));
        // stdin closed, 300 ms, SIGTERM (deaf ignores it), 300 ms, SIGKILL.
        QVERIFY2(clock.elapsed() >= 280, qPrintable(mode));
        QCOMPARE(session->state(), Session::State::Closed);
    }
}

namespace {
QStringList g_logged;
QLoggingCategory::CategoryFilter g_previousFilter = nullptr;
void mcpInfoOn(QLoggingCategory *category)
{
    if (g_previousFilter)
        g_previousFilter(category);
    if (qstrcmp(category->categoryName(), "agentconsole.mcp") == 0)
        category->setEnabled(QtInfoMsg, true);
}
void captureMcpLog(QtMsgType, const QMessageLogContext &context, const QString &message)
{
    if (qstrcmp(context.category, "agentconsole.mcp") == 0)
        g_logged.append(message);
}
} // namespace

void tst_McpSession::stderrGoesToTheLogBounded()
{
    // The suite runs with info off (QT_LOGGING_RULES, which wins over setFilterRules): a
    // category filter switches agentconsole.mcp's info on after the rules are applied.
    g_previousFilter = QLoggingCategory::installFilter(mcpInfoOn);
    g_logged.clear();
    const QtMessageHandler previous = qInstallMessageHandler(captureMcpLog);
    auto session = makeSession(QStringLiteral("noisy"));
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    QTRY_VERIFY_WITH_TIMEOUT(g_logged.filter(QStringLiteral("the rest is dropped")).size() == 1,
                             kWaitMs);
    qInstallMessageHandler(previous);
    QLoggingCategory::installFilter(g_previousFilter);
    const QStringList lines = g_logged.filter(QStringLiteral("stderr:"));
    QVERIFY(lines.first().contains(QStringLiteral("fake server: initialized")));
    qsizetype total = 0;
    for (const QString &line : lines) {
        QVERIFY(line.size() < 1200); // a 2,000-byte line is cut at 1,024
        total += line.size();
    }
    QVERIFY(total < 300 * 1024); // 4 MB written, about 256 KiB logged
}

void tst_McpSession::policyFromAnnotations_data()
{
    QTest::addColumn<QJsonObject>("annotations");
    QTest::addColumn<ToolPolicy>("policy");
    QTest::newRow("none") << QJsonObject{} << ToolPolicy::Write;
    QTest::newRow("read-only") << QJsonObject{{"readOnlyHint", true}} << ToolPolicy::Read;
    QTest::newRow("read-only and destructive")
        << QJsonObject{{"readOnlyHint", true}, {"destructiveHint", true}} << ToolPolicy::Read;
    QTest::newRow("idempotent") << QJsonObject{{"idempotentHint", true}} << ToolPolicy::IdempotentWrite;
    QTest::newRow("not destructive only") << QJsonObject{{"destructiveHint", false}} << ToolPolicy::Write;
    QTest::newRow("hint as string") << QJsonObject{{"readOnlyHint", "true"}} << ToolPolicy::Write;
}

void tst_McpSession::policyFromAnnotations()
{
    QFETCH(QJsonObject, annotations);
    QFETCH(ToolPolicy, policy);
    QString problem;
    const auto tool = parseToolInfo(
        {{"name", "t"}, {"inputSchema", QJsonObject{{"type", "object"}}}, {"annotations", annotations}},
        {}, &problem);
    QVERIFY(tool);
    QCOMPARE(policyOf(tool->annotations), policy);
}

QTEST_GUILESS_MAIN(tst_McpSession)
#include "tst_mcpsession.moc"
