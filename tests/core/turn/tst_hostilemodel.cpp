// A corpus of malformed and hostile model responses (issue #8), at the HTTP and the SSE
// level, each with its classified outcome. Every case runs through the real
// OpenAiCompatibleModel inside a FallbackChatModel whose last link is the offline demo model,
// and then through a whole AgentLoop turn: no crash, no hang past the deadline, no empty
// answer, no internals (URL, host, key, server text) in what staff or the export see, and
// bounded memory. Cases whose outcome depends on the loop's own bounds (tool calls per
// message, argument nesting) are left to the loop's suites.
#include "agentdoubles.h"
#include "fakeopenaiserver.h"
#include "processmemory.h"

#include "core/turn/agentloop.h"
#include "core/llm/fallbackchatmodel.h"
#include "core/support/offlinedemomodel.h"
#include "core/llm/openaicompatiblemodel.h"
#include "core/resilience/toolexecutor.h"
#include "core/tools/toolregistry.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

Q_DECLARE_METATYPE(AgentConsole::Testing::FakeResponse)

namespace {

const QString TestKey = QStringLiteral("sk-test-SECRET-4711");
// What a hostile server puts in its text: none of it may reach staff, the model or an export.
const QString ServerText =
    QStringLiteral("Traceback at /srv/app.py: key sk-test-SECRET-4711 http://internal.test/x");

// Outcomes. A model error code: the remote model failed with it and the fallback answered.
const QString Answered = QStringLiteral("answered");    // the remote model answered
const QString Refused = QStringLiteral("refused");      // a content-filter refusal, worded later
const QString AfterText = QStringLiteral("after-text:"); // + code: failed after streaming text

// ---- builders ----------------------------------------------------------------------------

FakeResponse raw(int status, const QByteArray &body,
                 const QByteArray &contentType = "application/json")
{
    FakeResponse response;
    response.status = status;
    response.body = body;
    response.headers = {{"Content-Type", contentType}};
    return response;
}

QByteArray compact(const QJsonValue &value)
{
    if (value.isObject())
        return QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact);
    if (value.isArray())
        return QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact);
    return QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact).mid(1).chopped(1);
}

// A whole completion whose message is `message`.
FakeResponse completion(const QJsonValue &message, const QJsonValue &finish = "stop")
{
    return raw(200, compact(QJsonObject{
                        {QStringLiteral("choices"),
                         QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                                {QStringLiteral("message"), message},
                                                {QStringLiteral("finish_reason"), finish}}}}}));
}

FakeResponse choices(const QJsonValue &choicesValue)
{
    return raw(200, compact(QJsonObject{{QStringLiteral("choices"), choicesValue}}));
}

QJsonObject text(const QJsonValue &content)
{
    return {{QStringLiteral("role"), QStringLiteral("assistant")},
            {QStringLiteral("content"), content}};
}

QJsonObject withCalls(const QJsonValue &calls, const QJsonValue &content = QJsonValue::Null)
{
    return {{QStringLiteral("role"), QStringLiteral("assistant")},
            {QStringLiteral("content"), content},
            {QStringLiteral("tool_calls"), calls}};
}

QJsonObject call(const QJsonValue &id, const QJsonValue &name, const QJsonValue &arguments)
{
    QJsonObject call{{QStringLiteral("type"), QStringLiteral("function")},
                     {QStringLiteral("function"),
                      QJsonObject{{QStringLiteral("name"), name},
                                  {QStringLiteral("arguments"), arguments}}}};
    if (!id.isUndefined())
        call.insert(QStringLiteral("id"), id);
    return call;
}

const QString OrderArgs = QStringLiteral("{\"orderId\":\"A1001\"}");

// A stream of raw pieces (each a complete or partial piece of SSE text).
FakeResponse stream(const QList<QByteArray> &pieces)
{
    QList<FakeChunk> chunks;
    for (const QByteArray &piece : pieces)
        chunks.append({piece, 1});
    return FakeResponse::events(chunks);
}

QByteArray data(const QByteArray &payload)
{
    return "data: " + payload + "\n\n";
}

QByteArray deltaChunk(const QJsonValue &delta, const QJsonValue &finish = QJsonValue::Null)
{
    return data(compact(QJsonObject{
        {QStringLiteral("choices"),
         QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                {QStringLiteral("delta"), delta},
                                {QStringLiteral("finish_reason"), finish}}}}}));
}

QByteArray callDelta(const QJsonValue &index, const QJsonValue &id, const QJsonValue &name,
                     const QJsonValue &arguments)
{
    QJsonObject function;
    if (!name.isUndefined())
        function.insert(QStringLiteral("name"), name);
    if (!arguments.isUndefined())
        function.insert(QStringLiteral("arguments"), arguments);
    QJsonObject entry{{QStringLiteral("function"), function}};
    if (!index.isUndefined())
        entry.insert(QStringLiteral("index"), index);
    if (!id.isUndefined())
        entry.insert(QStringLiteral("id"), id);
    return deltaChunk(QJsonObject{{QStringLiteral("tool_calls"), QJsonArray{entry}}});
}

QByteArray finishChunk(const QJsonValue &reason)
{
    return deltaChunk(QJsonObject{}, reason);
}

const QByteArray Done = "data: [DONE]\n\n";

FakeResponse withHead(const QByteArray &head, const QByteArray &body)
{
    FakeResponse response;
    response.rawHead = head;
    response.body = body;
    return response;
}

QByteArray validBody()
{
    return compact(QJsonObject{
        {QStringLiteral("choices"),
         QJsonArray{QJsonObject{{QStringLiteral("message"), text(QStringLiteral("Shipped."))},
                                {QStringLiteral("finish_reason"), QStringLiteral("stop")}}}}});
}

// What staff, the model and an export may never contain.
QString internalIn(const QString &shown)
{
    for (const char *secret : {"127.0.0", "sk-test", "SECRET", "http://", "https://",
                               "Traceback", "internal.test", "/srv/"}) {
        if (shown.contains(QLatin1String(secret)))
            return QString::fromLatin1(secret);
    }
    return {};
}

} // namespace

class tst_HostileModel final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void throughTheFallbackChain_data() { corpus(); }
    void throughTheFallbackChain();
    void throughAnAgentTurn_data() { corpus(); }
    void throughAnAgentTurn();

private:
    static void corpus();
    OpenAiConfig config(bool stream) const;

    std::unique_ptr<FakeOpenAiServer> m_server;
};

void tst_HostileModel::initTestCase()
{
    // Every case logs its failure; only what the test itself says is of interest here.
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.*=false"));
}

void tst_HostileModel::init()
{
    m_server = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_server->listen());
}

void tst_HostileModel::cleanup()
{
    m_server.reset();
}

OpenAiConfig tst_HostileModel::config(bool stream) const
{
    OpenAiConfig config;
    config.baseUrl = m_server->baseUrl();
    config.model = QStringLiteral("remote-model");
    config.apiKey = TestKey;
    config.stream = stream;
    config.connectTimeoutMs = 400;
    config.idleTimeoutMs = 400;
    config.maxAttempts = 2;
    config.initialBackoffMs = 10;
    config.retryAfterCapMs = 50;
    return config;
}

void tst_HostileModel::corpus()
{
    QTest::addColumn<FakeResponse>("response");
    QTest::addColumn<bool>("streamed"); // what the client asks for
    QTest::addColumn<QString>("outcome");

    const QString invalid = ModelError::InvalidResponse;
    const auto add = [](const char *name, const FakeResponse &response, bool streamed,
                        const QString &outcome) {
        QTest::newRow(name) << response << streamed << outcome;
    };

    // ---- HTTP: bodies that are not a completion -----------------------------------------
    add("200 empty body", raw(200, ""), false, invalid);
    add("200 null", raw(200, "null"), false, invalid);
    add("200 array", raw(200, "[]"), false, invalid);
    add("200 empty object", raw(200, "{}"), false, invalid);
    add("200 plain text", raw(200, "OK", "text/plain"), false, invalid);
    add("200 HTML error page",
        raw(200, "<html><body><h1>502 Bad Gateway</h1>nginx at 127.0.0.1</body></html>",
            "text/html"),
        false, invalid);
    add("200 truncated JSON", raw(200, "{\"choices\":[{\"message\":{\"content\":\"Hi"), false,
        invalid);
    add("200 JSON then garbage", raw(200, validBody() + "}}garbage"), false, invalid);
    add("200 invalid UTF-8", raw(200, "{\"choices\":[{\"message\":{\"content\":\"\xff\xfe\"},"
                                      "\"finish_reason\":\"stop\"}]}"),
        false, invalid);
    add("200 raw NUL byte", raw(200, QByteArray("{\"choices\":[{\"message\":{\"content\":\"a")
                                         + QByteArray(1, '\0') + "b\"}}]}"),
        false, Answered); // Qt's parser takes it; the NUL is removed from the text
    add("200 nested 5000 deep", raw(200, QByteArray(5000, '[') + QByteArray(5000, ']')), false,
        invalid);
    add("200 body over 16 MiB",
        raw(200, "{\"x\":\"" + QByteArray(16 * 1024 * 1024, 'a') + "\"}"), false, invalid);

    // ---- HTTP: wrong types at every level -------------------------------------------------
    add("choices is an object", choices(QJsonObject{}), false, invalid);
    add("choices is empty", choices(QJsonArray{}), false, invalid);
    add("choices is a string", choices(QStringLiteral("x")), false, invalid);
    add("choices [null]", choices(QJsonArray{QJsonValue::Null}), false, invalid);
    add("choices [1]", choices(QJsonArray{1}), false, invalid);
    add("choice without message", choices(QJsonArray{QJsonObject{
                                      {QStringLiteral("finish_reason"), QStringLiteral("stop")}}}),
        false, invalid);
    add("message null", completion(QJsonValue::Null), false, invalid);
    add("message a string", completion(QStringLiteral("Shipped.")), false, invalid);
    add("message an array", completion(QJsonArray{}), false, invalid);
    add("content a number", completion(text(42)), false, invalid);
    add("content an object", completion(text(QJsonObject{{QStringLiteral("a"), 1}})), false,
        invalid);
    add("content an array", completion(text(QJsonArray{QStringLiteral("Shipped.")})), false,
        invalid);
    add("content true", completion(text(true)), false, invalid);
    add("content empty", completion(text(QString(""))), false, invalid);
    add("content null, no calls", completion(text(QJsonValue::Null)), false, invalid);
    add("content blanks", completion(text(QStringLiteral(" \n\t "))), false, invalid);
    add("content missing",
        completion(QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")}}), false,
        invalid);
    add("reasoning a number",
        completion(QJsonObject{{QStringLiteral("content"), QStringLiteral("Shipped.")},
                               {QStringLiteral("reasoning_content"), 7}}),
        false, invalid);
    add("tool_calls an object", completion(withCalls(QJsonObject{})), false, invalid);
    add("tool_calls a string", completion(withCalls(QStringLiteral("queryOrderStatus"))), false,
        invalid);
    add("tool_calls [1]", completion(withCalls(QJsonArray{1})), false, invalid);
    add("tool call function a string",
        completion(withCalls(QJsonArray{QJsonObject{{QStringLiteral("function"),
                                                     QStringLiteral("queryOrderStatus")}}})),
        false, invalid);
    add("tool call name a number", completion(withCalls(QJsonArray{call("c1", 42, OrderArgs)})),
        false, invalid);
    add("tool call name empty", completion(withCalls(QJsonArray{call("c1", "", OrderArgs)})),
        false, invalid);
    add("tool call name missing",
        completion(withCalls(QJsonArray{QJsonObject{
            {QStringLiteral("id"), QStringLiteral("c1")},
            {QStringLiteral("function"),
             QJsonObject{{QStringLiteral("arguments"), OrderArgs}}}}})),
        false, invalid);
    add("tool call arguments a number",
        completion(withCalls(QJsonArray{call("c1", "queryOrderStatus", 42)})), false, invalid);
    add("tool call arguments an array",
        completion(withCalls(QJsonArray{call("c1", "queryOrderStatus", QJsonArray{})})), false,
        invalid);
    add("tool call id a number",
        completion(withCalls(QJsonArray{call(7, "queryOrderStatus", OrderArgs)})), false,
        invalid);
    add("finish_reason a number", completion(text(QStringLiteral("Shipped.")), 42), false,
        invalid);
    add("finish tool_calls, no calls", completion(text(QJsonValue::Null), "tool_calls"), false,
        invalid);
    add("finish tool_calls, text, no calls",
        completion(text(QStringLiteral("Let me check.")), "tool_calls"), false, invalid);
    add("error object in a 200",
        raw(200, compact(QJsonObject{{QStringLiteral("error"),
                                      QJsonObject{{QStringLiteral("message"), ServerText},
                                                  {QStringLiteral("type"),
                                                   QStringLiteral("server_error")}}}})),
        false, ModelError::Unavailable);
    add("quota error object in a 200",
        raw(200, compact(QJsonObject{{QStringLiteral("error"),
                                      QJsonObject{{QStringLiteral("message"), ServerText},
                                                  {QStringLiteral("code"),
                                                   QStringLiteral("insufficient_quota")}}}})),
        false, ModelError::QuotaExhausted);
    add("error a string in a 200",
        raw(200, compact(QJsonObject{{QStringLiteral("error"), ServerText}})), false, invalid);

    // ---- HTTP: odd but readable -------------------------------------------------------------
    add("tool_calls empty, text", completion(withCalls(QJsonArray{}, QStringLiteral("Shipped."))),
        false, Answered);
    add("tool_calls null, text", completion(withCalls(QJsonValue::Null, QStringLiteral("Hi."))),
        false, Answered);
    add("finish length", completion(text(QStringLiteral("Order A1001 is")), "length"), false,
        Answered);
    add("finish unknown", completion(text(QStringLiteral("Shipped.")), "banana"), false,
        Answered);
    add("finish null", completion(text(QStringLiteral("Shipped.")), QJsonValue::Null), false,
        Answered);
    add("content filter, no text", completion(text(QJsonValue::Null), "content_filter"), false,
        Refused);
    add("escaped NUL in content", completion(text(QStringLiteral("A\u0000B"))), false, Answered);
    add("duplicate call ids",
        completion(withCalls(QJsonArray{call("same", "queryOrderStatus", OrderArgs),
                                        call("same", "queryLogistics", OrderArgs)})),
        false, Answered);
    add("missing call ids",
        completion(withCalls(QJsonArray{call(QJsonValue::Undefined, "queryOrderStatus",
                                             OrderArgs)})),
        false, Answered);
    add("arguments as an object",
        completion(withCalls(QJsonArray{call("c1", "queryOrderStatus",
                                             QJsonObject{{QStringLiteral("orderId"),
                                                          QStringLiteral("A1001")}})})),
        false, Answered);
    add("arguments malformed JSON",
        completion(withCalls(QJsonArray{call("c1", "queryOrderStatus", "{\"orderId\":")})),
        false, Answered);
    add("unknown tool name",
        completion(withCalls(QJsonArray{call("c1", "rm -rf /", OrderArgs)})), false, Answered);
    add("HTML content type, JSON body", raw(200, validBody(), "text/html"), false, Answered);
    add("100 Continue first",
        withHead("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: "
                 "application/json\r\nContent-Length: "
                     + QByteArray::number(validBody().size()) + "\r\nConnection: close\r\n\r\n",
                 validBody()),
        false, Answered);

    // ---- HTTP: statuses -----------------------------------------------------------------------
    FakeResponse html500 = raw(500, "<html><pre>" + ServerText.toUtf8() + "</pre></html>",
                               "text/html");
    add("500 HTML stack trace", html500, false, ModelError::Unavailable);
    add("502 empty", raw(502, ""), false, ModelError::Unavailable);
    FakeResponse busy = FakeResponse::error(503, QStringLiteral("overloaded"), ServerText);
    busy.headers.append(qMakePair(QByteArray("Retry-After"), QByteArray("999999")));
    add("503 huge Retry-After", busy, false, ModelError::Unavailable);
    add("504", FakeResponse::error(504, QStringLiteral("timeout"), ServerText), false,
        ModelError::Unavailable);
    add("599", raw(599, ""), false, ModelError::Unavailable);
    add("429 rate limit", FakeResponse::error(429, QStringLiteral("rate_limit_exceeded"),
                                              ServerText),
        false, ModelError::RateLimited);
    FakeResponse retryNever = FakeResponse::error(429, QString(), ServerText);
    retryNever.headers.append(qMakePair(QByteArray("retry-after-ms"), QByteArray("-5")));
    add("429 negative retry-after-ms", retryNever, false, ModelError::RateLimited);
    add("429 insufficient quota",
        FakeResponse::error(429, QStringLiteral("insufficient_quota"), ServerText), false,
        ModelError::QuotaExhausted);
    add("402 balance", FakeResponse::error(402, QStringLiteral("balance"), ServerText), false,
        ModelError::QuotaExhausted);
    add("401 quoting the key",
        FakeResponse::error(401, QStringLiteral("invalid_api_key"), ServerText), false,
        ModelError::AuthFailed);
    add("403", FakeResponse::error(403, QStringLiteral("forbidden"), ServerText), false,
        ModelError::AuthFailed);
    add("400", FakeResponse::error(400, QStringLiteral("invalid_request_error"), ServerText),
        false, ModelError::BadRequest);
    add("404 HTML", raw(404, "<h1>Not Found</h1>", "text/html"), false,
        ModelError::BadRequest);
    add("413", raw(413, ""), false, ModelError::BadRequest);
    add("418", raw(418, "teapot", "text/plain"), false, ModelError::BadRequest);
    for (const int status : {300, 301, 302, 303, 307, 308}) {
        FakeResponse moved = raw(status, "");
        moved.headers.append(qMakePair(QByteArray("Location"),
                                       QByteArray("http://127.0.0.2:1/v1/chat/completions")));
        QTest::addRow("%d redirect", status) << moved << false << ModelError::EndpointMoved;
        QTest::addRow("%d redirect, streamed", status)
            << moved << true << ModelError::EndpointMoved;
    }
    add("102 Processing",
        withHead("HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: "
                     + QByteArray::number(validBody().size()) + "\r\n\r\n",
                 validBody()),
        false, invalid);
    add("103 Early Hints",
        withHead("HTTP/1.1 103 Early Hints\r\nLink: <http://127.0.0.1/x>\r\n\r\nHTTP/1.1 200 "
                 "OK\r\nContent-Length: "
                     + QByteArray::number(validBody().size()) + "\r\n\r\n",
                 validBody()),
        false, invalid);
    add("not HTTP at all", withHead("SSH-2.0-OpenSSH_9.2\r\n", ""), false,
        ModelError::Unavailable);
    add("status line without a code", withHead("HTTP/1.1 OK\r\n\r\n", validBody()), false,
        ModelError::Unavailable);
    FakeResponse silent;
    silent.headerDelayMs = -1;
    add("no answer at all", silent, false, ModelError::Timeout);
    add("no answer at all, streamed", silent, true, ModelError::Timeout);
    add("body shorter than its length",
        withHead("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n"
                 "Connection: close\r\n\r\n",
                 validBody()),
        false, ModelError::Unavailable);

    // ---- SSE: streams that carry no readable message ------------------------------------
    add("[DONE] first", stream({Done}), true, invalid);
    add("role only, then [DONE]",
        stream({deltaChunk(QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")}}),
                Done}),
        true, invalid);
    add("data not JSON", stream({data("Shipped."), Done}), true, invalid);
    add("data a JSON array", stream({data("[]"), Done}), true, invalid);
    add("data a number", stream({data("42"), Done}), true, invalid);
    add("data invalid UTF-8",
        stream({data("{\"choices\":[{\"delta\":{\"content\":\"\xc3\x28\"}}]}"), Done}),
        true, invalid);
    add("data with a NUL byte",
        stream({data(QByteArray("{\"choices\":[{\"delta\":{\"content\":\"a")
                     + QByteArray(1, '\0') + "\"}}]}"),
                Done}),
        true, Answered);
    add("stream choices an object", stream({data("{\"choices\":{}}"), Done}), true, invalid);
    add("stream choices [null]", stream({data("{\"choices\":[null]}"), Done}), true, invalid);
    add("delta a string", stream({data("{\"choices\":[{\"delta\":\"Shipped.\"}]}"), Done}), true,
        invalid);
    add("delta content a number", stream({deltaChunk(QJsonObject{{QStringLiteral("content"), 42}}),
                                          Done}),
        true, invalid);
    add("delta content an object",
        stream({deltaChunk(QJsonObject{{QStringLiteral("content"), QJsonObject{}}}), Done}), true,
        invalid);
    add("delta tool_calls an object",
        stream({deltaChunk(QJsonObject{{QStringLiteral("tool_calls"), QJsonObject{}}}), Done}),
        true, invalid);
    add("delta tool_calls [1]",
        stream({deltaChunk(QJsonObject{{QStringLiteral("tool_calls"), QJsonArray{1}}}), Done}),
        true, invalid);
    add("index -1", stream({callDelta(-1, "c1", "queryOrderStatus", OrderArgs),
                            finishChunk("tool_calls"), Done}),
        true, invalid);
    add("index 1e9", stream({callDelta(1e9, "c1", "queryOrderStatus", OrderArgs),
                             finishChunk("tool_calls"), Done}),
        true, invalid);
    add("index 1.5", stream({callDelta(1.5, "c1", "queryOrderStatus", OrderArgs),
                             finishChunk("tool_calls"), Done}),
        true, invalid);
    add("index a string", stream({callDelta("0", "c1", "queryOrderStatus", OrderArgs),
                                  finishChunk("tool_calls"), Done}),
        true, invalid);
    add("call without a name", stream({callDelta(0, "c1", QJsonValue::Undefined, OrderArgs),
                                       finishChunk("tool_calls"), Done}),
        true, invalid);
    add("finish tool_calls, no calls, streamed", stream({finishChunk("tool_calls"), Done}), true,
        invalid);
    add("reasoning only",
        stream({deltaChunk(QJsonObject{{QStringLiteral("reasoning_content"),
                                        QStringLiteral("Hmm.")}}),
                finishChunk("stop"), Done}),
        true, invalid);
    add("finish reason a number, streamed", stream({finishChunk(42), Done}), true, invalid);
    add("event: error", stream({"event: error\ndata: {\"message\":\"" + ServerText.toUtf8()
                                    + "\"}\n\n"}),
        true, ModelError::Unavailable);
    add("error chunk in the stream",
        stream({data(compact(QJsonObject{{QStringLiteral("error"),
                                          QJsonObject{{QStringLiteral("message"), ServerText},
                                                      {QStringLiteral("type"),
                                                       QStringLiteral("overloaded")}}}}))}),
        true, ModelError::Unavailable);
    add("quota error chunk in the stream",
        stream({data(compact(QJsonObject{
            {QStringLiteral("error"),
             QJsonObject{{QStringLiteral("code"), QStringLiteral("insufficient_quota")}}}}))}),
        true, ModelError::QuotaExhausted);
    add("ends without finish or [DONE]",
        stream({deltaChunk(QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")}})}),
        true, ModelError::Truncated);
    add("empty event stream",
        withHead("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 0\r\n"
                 "Connection: close\r\n\r\n",
                 ""),
        true, ModelError::Truncated);
    FakeResponse dropped = stream({deltaChunk(QJsonObject{{QStringLiteral("role"),
                                                           QStringLiteral("assistant")}}),
                                   Done});
    dropped.dropAfterChunks = 1;
    add("dropped before any text", dropped, true, ModelError::Truncated);
    FakeResponse stalled = stream({deltaChunk(QJsonObject{{QStringLiteral("role"),
                                                           QStringLiteral("assistant")}}),
                                   Done});
    stalled.stallAfterChunks = 1;
    add("stalls after the role", stalled, true, ModelError::Timeout);
    FakeResponse keptAlive = stream({": keep-alive\n\n", ": keep-alive\n\n", ": keep-alive\n\n",
                                     Done});
    keptAlive.stallAfterChunks = 3;
    add("keep-alives only, then silence", keptAlive, true, ModelError::Timeout);
    add("a line over 1 MiB", stream({"data: " + QByteArray(1024 * 1024 + 10, 'x') + "\n\n"}),
        true, invalid);
    add("an event of many lines over 1 MiB",
        stream({QByteArray("data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n").repeated(40000)}),
        true, invalid);
    FakeResponse huge = stream({deltaChunk(QJsonObject{{QStringLiteral("role"),
                                                        QStringLiteral("assistant")}})});
    huge.bulkPiece = QByteArray("event: ping\ndata: {}\n\n").repeated(1000);
    huge.bulkCount = 1000; // 20 MB
    add("20 MB of pings", huge, true, invalid);
    FakeResponse badChunking;
    badChunking.rawHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                          "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    badChunking.body = "zz\r\n" + Done + "\r\n0\r\n\r\n";
    add("broken chunked encoding", badChunking, true, ModelError::Truncated);
    add("JSON content type, SSE body", raw(200, data("{}") + Done), true, invalid);

    // ---- SSE: failing after text is final (no second answer after the first's start) ------
    add("garbage after text",
        stream({deltaChunk(QJsonObject{{QStringLiteral("content"), QStringLiteral("Order ")}}),
                data("{not json"), Done}),
        true, AfterText + invalid);
    FakeResponse droppedLate = stream(
        {deltaChunk(QJsonObject{{QStringLiteral("content"), QStringLiteral("Order ")}}), Done});
    droppedLate.dropAfterChunks = 1;
    add("dropped after text", droppedLate, true, AfterText + ModelError::Truncated);

    // ---- SSE: odd but readable ----------------------------------------------------------------
    const QByteArray shipped =
        deltaChunk(QJsonObject{{QStringLiteral("content"), QStringLiteral("Shipped.")}});
    add("plain stream", stream({shipped, finishChunk("stop"), Done}), true, Answered);
    add("event: ping between", stream({"event: ping\ndata: {}\n\n", shipped,
                                       "event: ping\ndata: ping\n\n", finishChunk("stop"), Done}),
        true, Answered);
    add("unknown event types", stream({"event: usage\ndata: nonsense\n\n", shipped,
                                       "event: message\n" + finishChunk("stop"), Done}),
        true, Answered);
    add("id and retry fields", stream({"id: 1\nretry: 5\n" + shipped, finishChunk("stop"), Done}),
        true, Answered);
    add("CR line endings", stream({QByteArray(shipped).replace('\n', '\r'), Done}), true,
        Answered);
    add("CRLF line endings", stream({QByteArray(shipped).replace("\n", "\r\n"),
                                     QByteArray(Done).replace("\n", "\r\n")}),
        true, Answered);
    add("no space after data:", stream({QByteArray(shipped).replace("data: ", "data:"),
                                        "data:[DONE]\n\n"}),
        true, Answered);
    add("JSON over two data lines",
        stream({"data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"Shipped.\"}}]}\n\n",
                Done}),
        true, Answered);
    add("usage-only chunk first", stream({data("{\"choices\":[],\"usage\":{\"total_tokens\":3}}"),
                                          shipped, finishChunk("stop"), Done}),
        true, Answered);
    add("two [DONE]", stream({shipped, Done, Done}), true, Answered);
    add("garbage after [DONE]", stream({shipped, Done, data("{garbage")}), true, Answered);
    add("finish without [DONE]", stream({shipped, finishChunk("stop")}), true, Answered);
    add("finish length, streamed", stream({shipped, finishChunk("length"), Done}), true,
        Answered);
    add("many keep-alives first",
        stream({QByteArray(": keep-alive\n\n").repeated(5000), shipped, Done}), true, Answered);
    add("leading blanks then text",
        stream({deltaChunk(QJsonObject{{QStringLiteral("content"), QStringLiteral("\n\n")}}),
                shipped, Done}),
        true, Answered);
    add("reasoning then text",
        stream({deltaChunk(QJsonObject{{QStringLiteral("reasoning_content"),
                                        QStringLiteral("Think.")}}),
                shipped, Done}),
        true, Answered);
    add("call name split across chunks",
        stream({callDelta(0, "c1", "queryOrder", ""), callDelta(0, QJsonValue::Null, "Status",
                                                               OrderArgs),
                finishChunk("tool_calls"), Done}),
        true, Answered);
    add("two calls sharing an index",
        stream({callDelta(0, "c1", "queryOrderStatus", OrderArgs),
                callDelta(0, "c2", "queryLogistics", OrderArgs), finishChunk("tool_calls"),
                Done}),
        true, Answered);
    add("interleaved calls", stream({callDelta(0, "c1", "queryOrderStatus", "{\"orderId\":"),
                                     callDelta(1, "c2", "queryLogistics", "{\"orderId\":"),
                                     callDelta(0, QJsonValue::Undefined, QJsonValue::Undefined,
                                               "\"A1001\"}"),
                                     callDelta(1, QJsonValue::Undefined, QJsonValue::Undefined,
                                               "\"A1001\"}"),
                                     finishChunk("tool_calls"), Done}),
        true, Answered);
    add("calls without index", stream({callDelta(QJsonValue::Undefined, "c1", "queryOrderStatus",
                                                 OrderArgs),
                                       finishChunk("tool_calls"), Done}),
        true, Answered);
    add("calls without ids", stream({callDelta(0, QJsonValue::Undefined, "queryOrderStatus",
                                               OrderArgs),
                                     callDelta(1, QJsonValue::Undefined, "queryLogistics",
                                               OrderArgs),
                                     finishChunk("tool_calls"), Done}),
        true, Answered);
    add("duplicate ids, streamed", stream({callDelta(0, "dup", "queryOrderStatus", OrderArgs),
                                           callDelta(1, "dup", "queryLogistics", OrderArgs),
                                           finishChunk("tool_calls"), Done}),
        true, Answered);
    add("index 4095", stream({callDelta(4095, "c1", "queryOrderStatus", OrderArgs),
                              finishChunk("tool_calls"), Done}),
        true, Answered);
    add("stream finish stop with calls (Ollama)",
        stream({callDelta(0, "c1", "queryOrderStatus", OrderArgs), finishChunk("stop"), Done}),
        true, Answered);
    add("server ignores stream: JSON answer", completion(text(QStringLiteral("Shipped."))), true,
        Answered);
    add("content filter, streamed", stream({finishChunk("content_filter"), Done}), true, Refused);
}

void tst_HostileModel::throughTheFallbackChain()
{
    QFETCH(FakeResponse, response);
    QFETCH(bool, streamed);
    QFETCH(QString, outcome);
    m_server->enqueue(response);
    m_server->enqueue(response); // the same again for a retry

    OpenAiCompatibleModel remote(config(streamed));
    OfflineDemoModel offline;
    FallbackChatModel chain({{&remote, nullptr}, {&offline, nullptr}});
    QSignalSpy fellBack(&chain, &FallbackChatModel::fellBack);

    ChatRequest request;
    request.messages = {ChatMessage::user(QStringLiteral("Where is order A1001?"))};
    request.budget = std::make_shared<RetryBudget>(4, QDeadlineTimer(10000));

    resetPeakResident();
    const qint64 before = std::max(peakResidentKiB(), residentKiB());
    QElapsedTimer clock;
    clock.start();
    std::unique_ptr<ChatReply> reply(chain.complete(request));
    QString streamedText;
    connect(reply.get(), &ChatReply::contentDelta, reply.get(),
            [&streamedText](const QString &piece) { streamedText += piece; });
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    QVERIFY2(finished.wait(12000), "no hang past the deadline");
    QCOMPARE(finished.size(), 1);
    QVERIFY(clock.elapsed() < 12000);
    const ChatResponse result = reply->response();
    const qint64 growth = peakResidentKiB() - before;
    QVERIFY2(growth < memoryBoundKiB(160 * 1024),
             qPrintable(QStringLiteral("peak RSS grew %1 KiB").arg(growth)));

    const QString shown = result.content + result.errorMessage + streamedText;
    QVERIFY2(!shown.contains(QChar(0)), "no NUL reaches the chat");
    QVERIFY2(internalIn(shown).isEmpty(), qPrintable(internalIn(shown)));
    QVERIFY(internalIn(result.reasoningOrigin).isEmpty());

    if (outcome == Answered || outcome == Refused) {
        QVERIFY2(!result.isError(), qPrintable(result.errorCode));
        QCOMPARE(result.model, remote.modelName());
        QCOMPARE(fellBack.size(), 0);
        if (outcome == Refused) {
            QCOMPARE(result.finishReason, FinishReason::ContentFilter);
        } else {
            QVERIFY(!result.content.trimmed().isEmpty() || !result.toolCalls.isEmpty());
        }
    } else if (outcome.startsWith(AfterText)) {
        QVERIFY(result.isError());
        QCOMPARE(result.errorCode, outcome.mid(AfterText.size()));
        QVERIFY(!streamedText.isEmpty());
        QVERIFY(!result.errorMessage.isEmpty());
        QCOMPARE(fellBack.size(), 0);
    } else {
        QCOMPARE(fellBack.size(), 1);
        QCOMPARE(fellBack.at(0).at(1).toString(), outcome);
        QVERIFY2(!result.isError(), qPrintable(result.errorCode));
        QCOMPARE(result.model, offline.modelName());
        QCOMPARE(result.fallbackHops, 1);
        QVERIFY(!result.content.trimmed().isEmpty() || !result.toolCalls.isEmpty());
    }
    QSet<QString> ids;
    for (const ModelToolCall &call : result.toolCalls) {
        QVERIFY(!call.name.isEmpty());
        QVERIFY(!call.id.isEmpty());
        QVERIFY2(!ids.contains(call.id), "tool call ids stay distinct");
        ids.insert(call.id);
    }
}

void tst_HostileModel::throughAnAgentTurn()
{
    QFETCH(FakeResponse, response);
    QFETCH(bool, streamed);
    QFETCH(QString, outcome);
    m_server->enqueue(response);
    m_server->enqueue(response);
    // Later calls of the turn (the answer round) get an ordinary answer.
    FakeResponse answer = completion(text(QStringLiteral("Order A1001 has shipped.")));
    for (int i = 0; i < 8; ++i)
        m_server->enqueue(answer);

    ToolRegistry registry;
    for (const char *name : {"queryOrderStatus", "queryLogistics", "queryInventory"}) {
        registry.add(std::make_shared<FunctionTool>(
            QString::fromLatin1(name), false, [](const AttemptContext &) {
                return AttemptResult::completed(ToolResult::ok(QStringLiteral("found"), {}));
            }));
    }
    ToolExecutor executor;
    OpenAiCompatibleModel remote(config(streamed));
    OfflineDemoModel offline;
    FallbackChatModel chain({{&remote, nullptr}, {&offline, nullptr}});
    AgentLoop loop({.model = &chain, .tools = &registry, .executor = &executor});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    loop.setTurnLimits({std::chrono::milliseconds(10000), 8});
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);

    QElapsedTimer clock;
    clock.start();
    QVERIFY(!loop.ask(QStringLiteral("Where is order A1001?")).isEmpty());
    QVERIFY2(finished.wait(15000), "no hang past the turn's deadline");
    QVERIFY(clock.elapsed() < 15000);
    const auto turn = finished.first().first().value<TurnResult>();

    QVERIFY2(!turn.answer.trimmed().isEmpty(), "never an empty answer");
    if (outcome.startsWith(AfterText))
        QCOMPARE(turn.status, TurnStatus::Failed);
    else
        QCOMPARE(turn.status, TurnStatus::Completed);
    const QString exported = QString::fromUtf8(QJsonDocument(turn.toJson()).toJson());
    QVERIFY2(internalIn(exported).isEmpty(), qPrintable(internalIn(exported)));
    QVERIFY2(internalIn(turn.answer).isEmpty(), qPrintable(internalIn(turn.answer)));
    QVERIFY(turn.modelRetries() <= turn.modelAttempts);
    // What the model was told in later rounds never carries internals either.
    for (int i = 1; i < m_server->requestCount(); ++i) {
        const QString sent = QString::fromUtf8(m_server->requests().at(i).body);
        QVERIFY2(!sent.contains(QLatin1String("Traceback")), "server text sent back");
        QVERIFY2(!sent.contains(QLatin1String("SECRET")), "key text sent back");
    }
}

QTEST_MAIN(tst_HostileModel)
#include "tst_hostilemodel.moc"
