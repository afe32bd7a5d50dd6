#include "fakeopenaiserver.h"

#include "core/mcp/httptransport.h"
#include "core/mcp/mcpsession.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Mcp;
using AgentConsole::Testing::FakeChunk;
using AgentConsole::Testing::FakeOpenAiServer;
using AgentConsole::Testing::FakeResponse;

namespace {

constexpr int kWaitMs = 10000;

QJsonObject result(int id, const QJsonObject &value)
{
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", value}};
}

FakeResponse initializeAnswer()
{
    FakeResponse response = FakeResponse::json(
        200, result(1, {{"protocolVersion", "2025-06-18"},
                        {"capabilities", QJsonObject{{"tools", QJsonObject{}}}},
                        {"serverInfo", QJsonObject{{"name", "fake-http"}, {"version", "1"}}}}));
    response.headers.append({QByteArray("Mcp-Session-Id"), QByteArray("session-42")});
    return response;
}

FakeResponse accepted()
{
    FakeResponse response;
    response.status = 202;
    return response;
}

QByteArray sseEvent(const QJsonObject &message, const QByteArray &id = {})
{
    QByteArray bytes;
    if (!id.isEmpty())
        bytes += "id: " + id + "\n";
    return bytes + "data: " + QJsonDocument(message).toJson(QJsonDocument::Compact) + "\n\n";
}

FakeResponse sse(const QList<FakeChunk> &chunks)
{
    FakeResponse response = FakeResponse::events(chunks);
    return response;
}

} // namespace

// The Streamable HTTP transport against a server with raw control over bytes and timing:
// headers, JSON and SSE answers, and every way an HTTP exchange fails.
class tst_McpHttp : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void sessionHeadersFollowInitialize();
    void sseAnswerWithProgressBeforeIt();
    void silentServerTimesOutAndIsToldToCancel();
    void aCallWhoseConnectionClosesUnansweredIsSentOnce();
    void failures_data();
    void failures();
    void expiredSessionTakesTheSessionDown();
    void brokenStreamWithoutAnEventIdFails();
    void brokenStreamWithAnEventIdIsResumed();
    void questionOnTheCallsStreamBelongsToIt();

private:
    void startSession(HttpTransport::Options options = {},
                      Session::Options sessionOptions = {});
    Reply call(const QString &method, const RequestOptions &options = {});

    std::unique_ptr<FakeOpenAiServer> m_server;
    std::unique_ptr<Session> m_session;
};

void tst_McpHttp::init()
{
    m_server = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_server->listen());
}

void tst_McpHttp::cleanup()
{
    m_session.reset();
    m_server.reset();
}

void tst_McpHttp::startSession(HttpTransport::Options options, Session::Options sessionOptions)
{
    options.url = QUrl(m_server->rootUrl().toString() + QStringLiteral("/mcp"));
    options.openServerStream = false; // the script answers POSTs only
    m_server->enqueue(initializeAnswer());
    m_server->enqueue(accepted()); // notifications/initialized
    m_session = std::make_unique<Session>(std::make_unique<HttpTransport>(options),
                                          sessionOptions);
    QSignalSpy ready(m_session.get(), &Session::ready);
    m_session->start();
    QVERIFY(ready.wait(kWaitMs));
    QTRY_COMPARE_WITH_TIMEOUT(m_server->requestCount(), 2, kWaitMs);
}

Reply tst_McpHttp::call(const QString &method, const RequestOptions &options)
{
    PendingRequest *request = m_session->request(method, {}, options);
    QSignalSpy finished(request, &PendingRequest::finished);
    if (!finished.wait(kWaitMs))
        return {{}, Error::of(Failure::Timeout, QStringLiteral("the test gave up")), {}};
    return finished.first().first().value<Reply>();
}

void tst_McpHttp::sessionHeadersFollowInitialize()
{
    HttpTransport::Options options;
    options.headers.insert("Authorization", "Bearer secret");
    startSession(options);
    QCOMPARE(m_session->protocolVersion(), QStringLiteral("2025-06-18"));
    m_server->enqueue(FakeResponse::json(200, result(2, {{"tools", QJsonArray{}}})));
    QVERIFY(call(QStringLiteral("tools/list")).ok());
    const auto &requests = m_server->requests();
    QCOMPARE(requests.size(), 3);
    // initialize: no session yet, no version yet; both accept types; our own headers.
    QVERIFY(!requests[0].headers.contains("mcp-session-id"));
    QVERIFY(requests[0].headers.value("accept").contains("application/json"));
    QVERIFY(requests[0].headers.value("accept").contains("text/event-stream"));
    QCOMPARE(requests[0].headers.value("authorization"), QByteArray("Bearer secret"));
    for (int i = 1; i < 3; ++i) {
        QCOMPARE(requests[i].headers.value("mcp-session-id"), QByteArray("session-42"));
        QCOMPARE(requests[i].headers.value("mcp-protocol-version"), QByteArray("2025-06-18"));
    }
    QCOMPARE(requests[1].json.value("method").toString(), QStringLiteral("notifications/initialized"));
}

void tst_McpHttp::sseAnswerWithProgressBeforeIt()
{
    startSession();
    m_server->enqueue(sse({{sseEvent({{"jsonrpc", "2.0"}, {"method", "notifications/progress"},
                                   {"params", QJsonObject{{"progressToken", 2}, {"progress", 1}}}}), 0},
                           {": keep-alive\n\n", 50},
                           {sseEvent(result(2, {{"content", QJsonArray{}}}), "e-1"), 50}}));
    PendingRequest *request =
        m_session->request(QStringLiteral("tools/call"), {}, {2000, 5000, true, {}});
    QSignalSpy progressed(request, &PendingRequest::progressed);
    QSignalSpy finished(request, &PendingRequest::finished);
    QVERIFY(finished.wait(kWaitMs));
    QVERIFY(finished.first().first().value<Reply>().ok());
    QCOMPARE(progressed.size(), 1);
}

void tst_McpHttp::silentServerTimesOutAndIsToldToCancel()
{
    startSession();
    FakeResponse silent;
    silent.headerDelayMs = -1;
    m_server->enqueue(silent);
    m_server->enqueue(accepted()); // notifications/cancelled
    const Reply reply = call(QStringLiteral("tools/call"), {300, 0, false, {}});
    QCOMPARE(reply.error.failure, Failure::Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(m_server->requestCount(), 4, kWaitMs);
    const QJsonObject cancelled = m_server->requests().last().json;
    QCOMPARE(cancelled.value("method").toString(), QStringLiteral("notifications/cancelled"));
    QCOMPARE(cancelled.value("params")[QStringLiteral("requestId")].toInt(), 2);
}

// Qt's HTTP client would send the tools/call again by itself on a connection closed before
// the answer, and a write would act twice (issue #40 §1): it is sent once and fails.
void tst_McpHttp::aCallWhoseConnectionClosesUnansweredIsSentOnce()
{
    startSession();
    FakeResponse closed;
    closed.closeUnanswered = true;
    m_server->enqueue(closed);
    // What a call sent again by the network stack would get: an answer that hides it.
    m_server->enqueue(FakeResponse::json(200, result(2, {{"content", QJsonArray{}}})));
    const Reply reply = call(QStringLiteral("tools/call"), {2000, 0, false, {}});
    QVERIFY(!reply.ok());
    int calls = 0;
    for (const auto &request : m_server->requests())
        calls += request.json.value("method").toString() == QLatin1String("tools/call");
    QCOMPARE(calls, 1);
}

void tst_McpHttp::failures_data()
{
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<Failure>("failure");
    QTest::addColumn<bool>("transient");
    QTest::newRow("401") << 401 << QByteArray("no") << Failure::AccessDenied << false;
    QTest::newRow("403") << 403 << QByteArray("no") << Failure::AccessDenied << false;
    QTest::newRow("400") << 400 << QByteArray("bad") << Failure::Rejected << false;
    QTest::newRow("503") << 503 << QByteArray("later") << Failure::TransportFailed << true;
    QTest::newRow("429") << 429 << QByteArray("slow down") << Failure::TransportFailed << true;
    QTest::newRow("307 not followed") << 307 << QByteArray() << Failure::Rejected << false;
    QTest::newRow("oversized") << 200 << QByteArray(8192, ' ') << Failure::Oversized << false;
    QTest::newRow("json-rpc error in a 500")
        << 500 << QJsonDocument(QJsonObject{{"jsonrpc", "2.0"}, {"id", 2},
                                            {"error", QJsonObject{{"code", -32603}, {"message", "x"}}}})
                      .toJson(QJsonDocument::Compact)
        << Failure::RemoteError << true;
}

void tst_McpHttp::failures()
{
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    QFETCH(Failure, failure);
    QFETCH(bool, transient);
    HttpTransport::Options options;
    options.maxFrameBytes = 4096;
    startSession(options);
    FakeResponse response;
    response.status = status;
    response.body = body;
    if (status == 307)
        response.headers.append({QByteArray("Location"), QByteArray("http://127.0.0.2:1/elsewhere")});
    m_server->enqueue(response);
    const Reply reply = call(QStringLiteral("tools/list"));
    QCOMPARE(reply.error.failure, failure);
    QCOMPARE(isTransient(reply.error), transient);
    QCOMPARE(m_server->requestCount(), 3); // a redirect is never followed
}

void tst_McpHttp::expiredSessionTakesTheSessionDown()
{
    startSession();
    FakeResponse gone;
    gone.status = 404;
    m_server->enqueue(gone);
    QSignalSpy failed(m_session.get(), &Session::failed);
    const Reply reply = call(QStringLiteral("tools/list"));
    QCOMPARE(reply.error.failure, Failure::SessionExpired);
    QCOMPARE(failed.size(), 1);
    QCOMPARE(m_session->state(), Session::State::Failed);
}

void tst_McpHttp::brokenStreamWithoutAnEventIdFails()
{
    startSession();
    FakeResponse broken = sse({{": opening\n\n", 0}, {"data: {\"jsonrpc\"", 20}});
    broken.dropAfterChunks = 2;
    m_server->enqueue(broken);
    const Reply reply = call(QStringLiteral("tools/call"));
    // The connection broke mid-answer and nothing names where to resume: the request was
    // delivered and its answer lost (a read is worth a retry; a write may have run).
    QCOMPARE(reply.error.failure, Failure::TransportClosed);
    QVERIFY(isTransient(reply.error));
    QCOMPARE(m_session->state(), Session::State::Ready);
}

void tst_McpHttp::brokenStreamWithAnEventIdIsResumed()
{
    startSession();
    FakeResponse broken = sse({{"id: e-1\nretry: 100\ndata: \n\n", 0}, {"data: {\"jsonrpc\"", 20}});
    broken.dropAfterChunks = 2;
    m_server->enqueue(broken);
    m_server->enqueue(sse({{sseEvent(result(2, {{"content", QJsonArray{}}}), "e-2"), 0}}));
    const Reply reply = call(QStringLiteral("tools/call"));
    QVERIFY2(reply.ok(), qPrintable(reply.error.describe()));
    const auto &resumed = m_server->requests().last();
    QCOMPARE(resumed.method, QByteArray("GET"));
    QCOMPARE(resumed.headers.value("last-event-id"), QByteArray("e-1"));
    QCOMPARE(resumed.headers.value("mcp-session-id"), QByteArray("session-42"));
    // After the server's retry: 100 ms, not the default second.
    const qint64 gap = m_server->gapBeforeRequest(m_server->requestCount() - 1);
    QVERIFY2(gap >= 90 && gap < 900, qPrintable(QString::number(gap)));
}

void tst_McpHttp::questionOnTheCallsStreamBelongsToIt()
{
    Session::Options sessionOptions;
    sessionOptions.elicitation = true;
    startSession({}, sessionOptions);
    // A tools/call (id 2) whose SSE answer first asks staff, then answers once it has heard.
    const QJsonObject properties{
        {"ok", QJsonObject{{"type", "boolean"}, {"default", true}}}};
    const QJsonObject ask{
        {"jsonrpc", "2.0"}, {"id", "e1"}, {"method", "elicitation/create"},
        {"params", QJsonObject{{"message", "Go on?"},
                               {"requestedSchema", QJsonObject{{"type", "object"},
                                                               {"properties", properties}}}}}};
    m_server->enqueue(sse({{sseEvent(ask, "1")},
                           {sseEvent(result(2, {{"content", QJsonArray{}}}), "2"), 300}}));
    m_server->enqueue(accepted()); // the POST that carries our answer
    qint64 related = -1;
    connect(m_session.get(), &Session::elicitationRequested, this,
            [&related](PendingElicitation *question) {
        related = question->relatedRequestId();
        question->answer(ElicitationAction::Accept);
    });
    QVERIFY(call(QStringLiteral("tools/call")).ok());
    QCOMPARE(related, 2); // the call whose stream carried it, not a guess
    QTRY_COMPARE_WITH_TIMEOUT(m_server->requestCount(), 4, kWaitMs);
    const QJsonObject answer = m_server->requests().at(3).json;
    QCOMPARE(answer.value("id").toString(), QStringLiteral("e1"));
    QCOMPARE(answer.value("result").toObject(),
             (QJsonObject{{"action", "accept"}, {"content", QJsonObject{{"ok", true}}}}));
}

QTEST_GUILESS_MAIN(tst_McpHttp)
#include "tst_mcphttp.moc"
