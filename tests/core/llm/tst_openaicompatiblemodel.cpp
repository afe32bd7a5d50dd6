#include "closedport.h"
#include "finishreasonprinting.h"
#include "fakeopenaiserver.h"

#include "core/llm/apikeysource.h"
#include "core/llm/openaicompatiblemodel.h"
#include "core/telemetry/logging.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

Q_DECLARE_METATYPE(AgentConsole::Testing::FakeResponse)

namespace {

const QString TestKey = QStringLiteral("sk-test-SECRET-4711");
// What a real server's error text looks like: it quotes the key and names a URL. None of it
// may reach the staff member or the model.
const QString ServerText =
    QStringLiteral("Incorrect API key provided: sk-test-SECRET-4711. See https://example.test/x");

// One model call observed from the outside: every delta and the finish, in order.
struct Observed
{
    QStringList events; // "delta:<text>" ..., then "finished"
    QStringList deltas;
    ChatResponse response;
    int finishedCount = 0;
    qint64 elapsedMs = 0;
};

Observed observe(ChatReply *reply, int timeoutMs = 10000)
{
    Observed observed;
    std::unique_ptr<ChatReply> owner(reply); // destroyed before `observed`, which it writes to
    QElapsedTimer clock;
    clock.start();
    QObject::connect(reply, &ChatReply::contentDelta, reply, [&observed](const QString &text) {
        observed.events.append(QStringLiteral("delta:") + text);
        observed.deltas.append(text);
    });
    QSignalSpy finished(reply, &ChatReply::finished);
    QObject::connect(reply, &ChatReply::finished, reply,
                     [&observed] { observed.events.append(QStringLiteral("finished")); });
    if (!finished.wait(timeoutMs))
        return observed;
    observed.elapsedMs = clock.elapsed();
    observed.finishedCount = int(finished.size());
    observed.response = reply->response();
    return observed;
}

QByteArray answerJson(const QString &content, const QString &finishReason = QStringLiteral("stop"))
{
    return QJsonDocument(
               QJsonObject{{QStringLiteral("id"), QStringLiteral("chatcmpl-1")},
                           {QStringLiteral("model"), QStringLiteral("fake-model")},
                           {QStringLiteral("choices"),
                            QJsonArray{QJsonObject{
                                {QStringLiteral("index"), 0},
                                {QStringLiteral("message"),
                                 QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                                             {QStringLiteral("content"), content}}},
                                {QStringLiteral("finish_reason"), finishReason}}}}})
        .toJson(QJsonDocument::Compact);
}

FakeResponse jsonAnswer(const QString &content)
{
    FakeResponse response;
    response.body = answerJson(content);
    return response;
}

FakeResponse sseAnswer(const QStringList &pieces, int delayMs = 5)
{
    QList<FakeChunk> chunks{{Sse::role(), 0}};
    for (const QString &piece : pieces)
        chunks.append({Sse::content(piece), delayMs});
    chunks.append({Sse::finish(QStringLiteral("stop")), delayMs});
    chunks.append({Sse::done(), 0});
    return FakeResponse::events(chunks);
}

ToolDescriptor orderTool(const QString &name = QStringLiteral("queryOrderStatus"))
{
    const QJsonObject schema{
        {QStringLiteral("type"), QStringLiteral("object")},
        {QStringLiteral("properties"),
         QJsonObject{{QStringLiteral("orderId"),
                      QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}}}}},
        {QStringLiteral("required"), QJsonArray{QStringLiteral("orderId")}}};
    ToolDescriptor tool;
    tool.name = name;
    tool.description = QStringLiteral("Looks up an order.");
    tool.parameters = schema;
    return tool;
}

ChatRequest question(const QString &text = QStringLiteral("Where is order A1001?"))
{
    ChatRequest request;
    request.messages = {ChatMessage::system(QStringLiteral("You are a support agent.")),
                        ChatMessage::user(text)};
    request.tools = {orderTool()};
    return request;
}

} // namespace

class tst_OpenAiCompatibleModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void plainAnswer();
    void streamedAnswer();
    void streamLinesSplitAcrossReads();
    void streamedToolCallSplitAcrossChunks();
    void parallelToolCallsInterleaved();
    void nonStreamedToolCalls();
    void serverIgnoringStreamFlag();
    void requestBodyShape();
    void noKeyNoAuthorizationHeader();
    void rootBaseUrlLikeDeepSeek();
    void presets_data();
    void presets();

    void statusHandling_data();
    void statusHandling();
    void retryAfterHonoured_data();
    void retryAfterHonoured();
    void exponentialBackoffWithoutHeader();
    void jitteredBackoffDiffersByConsoleAndReply();
    void chineseErrorMessage();
    void connectionRefusedIsRetried();
    void aRequestWhoseConnectionClosesUnansweredIsSentOnceAnAttempt();
    void unparseableBody();

    void keepAlivesInterleaved();
    void keepAlivesDoNotResetIdleTimeout();
    void stalledStreamTimesOut();
    void stalledStreamRetriedToSuccess();
    void noHeadersTimesOut();
    void disconnectBeforeTextIsRetried();
    void disconnectAfterTextIsTruncated();
    void streamEndingWithoutFinishIsTruncated();

    void malformedToolArgumentsPassedThrough();
    void unknownToolNamePassedThrough();
    void contentFilter();
    void serverOverloadFinishIsRetried();

    void retryBudgetRefusesRetry_data();
    void retryBudgetRefusesRetry();
    void retryStopsAtTheTurnDeadline();
    void keyAndServerTextNeverLogged();
    void abortDuringStream();
    void abortDuringBackoff();

    void apiKeyFromEnvironment();

private:
    OpenAiConfig config(bool stream = true) const;
    Observed call(const OpenAiConfig &config, const ChatRequest &request = question());

    std::unique_ptr<FakeOpenAiServer> m_server;
};

void tst_OpenAiCompatibleModel::init()
{
    m_server = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_server->listen());
}

void tst_OpenAiCompatibleModel::cleanup()
{
    m_server.reset();
}

// Short timeouts and backoff keep the suite fast; they are still far above loopback latency.
OpenAiConfig tst_OpenAiCompatibleModel::config(bool stream) const
{
    OpenAiConfig config;
    config.baseUrl = m_server->baseUrl();
    config.model = QStringLiteral("fake-model");
    config.apiKey = TestKey;
    config.stream = stream;
    config.connectTimeoutMs = 3000;
    config.idleTimeoutMs = 3000;
    config.initialBackoffMs = 20;
    config.retryAfterCapMs = 3000;
    return config;
}

Observed tst_OpenAiCompatibleModel::call(const OpenAiConfig &config, const ChatRequest &request)
{
    OpenAiCompatibleModel model(config);
    return observe(model.complete(request));
}

void tst_OpenAiCompatibleModel::plainAnswer()
{
    m_server->enqueue(jsonAnswer(QStringLiteral("Order A1001 has shipped.")));
    const Observed observed = call(config(false));
    QCOMPARE(observed.finishedCount, 1);
    QCOMPARE(observed.response.finishReason, FinishReason::Stop);
    QCOMPARE(observed.response.content, QStringLiteral("Order A1001 has shipped."));
    QCOMPARE(observed.response.model, QStringLiteral("fake-model"));
    QCOMPARE(observed.response.attempts, 1);
    QVERIFY(observed.response.toolCalls.isEmpty());
    QCOMPARE(observed.deltas, QStringList{observed.response.content});
    QCOMPARE(m_server->requests().at(0).json.value(QStringLiteral("stream")).toBool(true), false);
}

void tst_OpenAiCompatibleModel::streamedAnswer()
{
    const QStringList pieces{QStringLiteral("Order "), QStringLiteral("A1001 "),
                             QStringLiteral("has shipped.")};
    m_server->enqueue(sseAnswer(pieces));
    const Observed observed = call(config());
    QCOMPARE(observed.finishedCount, 1);
    QCOMPARE(observed.response.finishReason, FinishReason::Stop);
    QCOMPARE(observed.deltas, pieces);
    QCOMPARE(observed.events,
             QStringList({QStringLiteral("delta:Order "), QStringLiteral("delta:A1001 "),
                          QStringLiteral("delta:has shipped."), QStringLiteral("finished")}));
    QCOMPARE(observed.response.content, pieces.join(QString()));
    QCOMPARE(observed.response.attempts, 1);
}

// One event cut in the middle of its JSON and of its "\r\n" line end, over several reads.
void tst_OpenAiCompatibleModel::streamLinesSplitAcrossReads()
{
    QByteArray event = Sse::content(QStringLiteral("你好，订单已发货。"));
    event.replace("\n", "\r\n");
    const qsizetype cut = event.size() / 2;
    m_server->enqueue(FakeResponse::events({{Sse::role(), 0},
                                            {event.left(cut), 10},
                                            {event.mid(cut, event.size() - cut - 3), 10},
                                            {event.right(3), 10},
                                            {Sse::finish(QStringLiteral("stop")), 10},
                                            {Sse::done(), 0}}));
    const Observed observed = call(config());
    QCOMPARE(observed.response.finishReason, FinishReason::Stop);
    QCOMPARE(observed.response.content, QStringLiteral("你好，订单已发货。"));
    QCOMPARE(observed.deltas.size(), 1);
}

void tst_OpenAiCompatibleModel::streamedToolCallSplitAcrossChunks()
{
    const QByteArray first = Sse::toolCall(0, QStringLiteral("call_abc"),
                                           QStringLiteral("queryOrderStatus"), QString());
    m_server->enqueue(FakeResponse::events(
        {{Sse::role(), 0},
         {first.left(20), 5}, // the first event's line itself split over two reads
         {first.mid(20), 5},
         {Sse::toolArguments(0, QStringLiteral("{\"order")), 5},
         {Sse::toolArguments(0, QStringLiteral("Id\": \"A10")), 5},
         {Sse::toolArguments(0, QStringLiteral("01\"}")), 5},
         {Sse::finish(QStringLiteral("tool_calls")), 5},
         {Sse::done(), 0}}));
    const Observed observed = call(config());
    QCOMPARE(observed.response.finishReason, FinishReason::ToolCalls);
    QVERIFY(observed.deltas.isEmpty());
    const QList<ModelToolCall> expected{{QStringLiteral("call_abc"),
                                         QStringLiteral("queryOrderStatus"),
                                         QStringLiteral("{\"orderId\": \"A1001\"}")}};
    QCOMPARE(observed.response.toolCalls, expected);
}

void tst_OpenAiCompatibleModel::parallelToolCallsInterleaved()
{
    m_server->enqueue(FakeResponse::events(
        {{Sse::role(), 0},
         {Sse::toolCall(0, QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"),
                        QString()), 5},
         {Sse::toolCall(1, QStringLiteral("call_2"), QStringLiteral("queryInventory"),
                        QStringLiteral("{\"sku")), 5},
         {Sse::toolArguments(0, QStringLiteral("{\"orderId\":")), 5},
         {Sse::toolArguments(1, QStringLiteral("\":\"SKU-200\"}")), 5},
         {Sse::toolArguments(0, QStringLiteral("\"A1001\"}")), 5},
         {Sse::finish(QStringLiteral("tool_calls")), 5},
         {Sse::done(), 0}}));
    const Observed observed = call(config());
    QCOMPARE(observed.response.finishReason, FinishReason::ToolCalls);
    const QList<ModelToolCall> expected{
        {QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"),
         QStringLiteral("{\"orderId\":\"A1001\"}")},
        {QStringLiteral("call_2"), QStringLiteral("queryInventory"),
         QStringLiteral("{\"sku\":\"SKU-200\"}")}};
    QCOMPARE(observed.response.toolCalls, expected);
}

void tst_OpenAiCompatibleModel::nonStreamedToolCalls()
{
    const QJsonObject toolCall{{QStringLiteral("id"), QStringLiteral("call_9")},
                           {QStringLiteral("type"), QStringLiteral("function")},
                           {QStringLiteral("function"),
                            QJsonObject{{QStringLiteral("name"), QStringLiteral("queryLogistics")},
                                        {QStringLiteral("arguments"),
                                         QStringLiteral("{\"orderId\":\"A1002\"}")}}}};
    const QJsonObject message{{QStringLiteral("role"), QStringLiteral("assistant")},
                              {QStringLiteral("content"), QJsonValue::Null},
                              {QStringLiteral("tool_calls"), QJsonArray{toolCall}}};
    const QJsonObject choice{{QStringLiteral("message"), message},
                             {QStringLiteral("finish_reason"), QStringLiteral("tool_calls")}};
    m_server->enqueue(
        FakeResponse::json(200, QJsonObject{{QStringLiteral("choices"), QJsonArray{choice}}}));
    const Observed observed = call(config(false));
    QCOMPARE(observed.response.finishReason, FinishReason::ToolCalls);
    QCOMPARE(observed.response.content, QString());
    QVERIFY(observed.deltas.isEmpty());
    const QList<ModelToolCall> expected{{QStringLiteral("call_9"),
                                         QStringLiteral("queryLogistics"),
                                         QStringLiteral("{\"orderId\":\"A1002\"}")}};
    QCOMPARE(observed.response.toolCalls, expected);
}

// Some local servers answer "stream": true with one JSON body; the content type decides.
void tst_OpenAiCompatibleModel::serverIgnoringStreamFlag()
{
    m_server->enqueue(jsonAnswer(QStringLiteral("All in one.")));
    const Observed observed = call(config(true));
    QCOMPARE(observed.response.finishReason, FinishReason::Stop);
    QCOMPARE(observed.response.content, QStringLiteral("All in one."));
    QCOMPARE(observed.deltas, QStringList{QStringLiteral("All in one.")});
}

void tst_OpenAiCompatibleModel::requestBodyShape()
{
    OpenAiConfig cfg = config();
    cfg.extraHeaders = {{"X-Team", "support-7"}};
    ChatRequest request = question();
    const ModelToolCall earlier{QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"),
                                QStringLiteral("{\"orderId\":\"A1001\"}")};
    request.messages.append(ChatMessage::assistant(QString(), {earlier}));
    request.messages.append(ChatMessage::toolResult(QStringLiteral("call_1"),
                                                    QStringLiteral("queryOrderStatus"),
                                                    QStringLiteral("{\"success\":true}")));
    m_server->enqueue(sseAnswer({QStringLiteral("Shipped.")}));
    QCOMPARE(call(cfg, request).response.content, QStringLiteral("Shipped."));

    QCOMPARE(m_server->requestCount(), 1);
    const RecordedRequest &sent = m_server->requests().at(0);
    QCOMPARE(sent.method, QByteArray("POST"));
    QCOMPARE(sent.path, QByteArray("/v1/chat/completions"));
    QCOMPARE(sent.headers.value("authorization"), "Bearer " + TestKey.toUtf8());
    QCOMPARE(sent.headers.value("x-team"), QByteArray("support-7"));
    QVERIFY(sent.headers.value("content-type").startsWith("application/json"));

    const QJsonObject body = sent.json;
    QCOMPARE(body.value(QStringLiteral("model")).toString(), QStringLiteral("fake-model"));
    QCOMPARE(body.value(QStringLiteral("stream")).toBool(), true);
    QCOMPARE(body.value(QStringLiteral("tool_choice")).toString(), QStringLiteral("auto"));
    const QJsonArray tools = body.value(QStringLiteral("tools")).toArray();
    QCOMPARE(tools.size(), 1);
    QCOMPARE(tools.at(0).toObject(), orderTool().toFunctionJson());

    const QJsonArray messages = body.value(QStringLiteral("messages")).toArray();
    QCOMPARE(messages.size(), 4);
    QCOMPARE(messages.at(0).toObject().value(QStringLiteral("role")).toString(),
             QStringLiteral("system"));
    QCOMPARE(messages.at(1).toObject(),
             (QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                          {QStringLiteral("content"), QStringLiteral("Where is order A1001?")}}));
    const QJsonObject assistant = messages.at(2).toObject();
    QCOMPARE(assistant.value(QStringLiteral("role")).toString(), QStringLiteral("assistant"));
    QVERIFY(assistant.value(QStringLiteral("content")).isNull());
    const QJsonObject sentCall =
        assistant.value(QStringLiteral("tool_calls")).toArray().at(0).toObject();
    const QJsonObject function{{QStringLiteral("name"), QStringLiteral("queryOrderStatus")},
                               {QStringLiteral("arguments"), earlier.arguments}};
    QCOMPARE(sentCall, (QJsonObject{{QStringLiteral("id"), QStringLiteral("call_1")},
                                    {QStringLiteral("type"), QStringLiteral("function")},
                                    {QStringLiteral("function"), function}}));
    QCOMPARE(messages.at(3).toObject(),
             (QJsonObject{{QStringLiteral("role"), QStringLiteral("tool")},
                          {QStringLiteral("tool_call_id"), QStringLiteral("call_1")},
                          {QStringLiteral("content"), QStringLiteral("{\"success\":true}")}}));
}

void tst_OpenAiCompatibleModel::noKeyNoAuthorizationHeader()
{
    OpenAiConfig cfg = config(false);
    cfg.apiKey.clear();
    ChatRequest request = question();
    request.tools.clear();
    m_server->enqueue(jsonAnswer(QStringLiteral("Hi.")));
    QCOMPARE(call(cfg, request).response.content, QStringLiteral("Hi."));
    const RecordedRequest &sent = m_server->requests().at(0);
    QVERIFY(!sent.headers.contains("authorization"));
    QVERIFY(!sent.json.contains(QStringLiteral("tools")));
    QVERIFY(!sent.json.contains(QStringLiteral("tool_choice")));
}

// DeepSeek's base URL has no /v1: the path is appended to whatever the base is.
void tst_OpenAiCompatibleModel::rootBaseUrlLikeDeepSeek()
{
    OpenAiConfig cfg = config(false);
    cfg.baseUrl = QUrl(m_server->rootUrl().toString() + QLatin1Char('/'));
    m_server->enqueue(jsonAnswer(QStringLiteral("Hi.")));
    QCOMPARE(call(cfg).response.content, QStringLiteral("Hi."));
    QCOMPARE(m_server->requests().at(0).path, QByteArray("/chat/completions"));
}

void tst_OpenAiCompatibleModel::presets_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QUrl>("baseUrl");
    QTest::addColumn<QString>("model");
    QTest::newRow("deepseek") << QStringLiteral("deepseek")
                              << QUrl(QStringLiteral("https://api.deepseek.com"))
                              << QStringLiteral("deepseek-v4-flash");
    QTest::newRow("openai") << QStringLiteral("openai")
                            << QUrl(QStringLiteral("https://api.openai.com/v1"))
                            << QStringLiteral("gpt-4o-mini");
    QTest::newRow("ollama") << QStringLiteral("ollama")
                            << QUrl(QStringLiteral("http://127.0.0.1:11434/v1"))
                            << QStringLiteral("llama3.1");
    QTest::newRow("unknown") << QStringLiteral("nonesuch") << QUrl() << QString();
}

void tst_OpenAiCompatibleModel::presets()
{
    QFETCH(QString, name);
    QFETCH(QUrl, baseUrl);
    QFETCH(QString, model);
    const OpenAiConfig preset = OpenAiConfig::preset(name);
    QCOMPARE(preset.baseUrl, baseUrl);
    QCOMPARE(preset.model, model);
    QVERIFY(preset.apiKey.isEmpty()); // keys never come from code
    QCOMPARE(OpenAiCompatibleModel(preset).modelName(), model);
}

void tst_OpenAiCompatibleModel::statusHandling_data()
{
    QTest::addColumn<QList<FakeResponse>>("script");
    QTest::addColumn<QString>("errorCode"); // empty: the call succeeds
    QTest::addColumn<int>("attempts");

    const auto fail = [](int status, const char *code) {
        return FakeResponse::error(status, QLatin1String(code), ServerText);
    };
    const FakeResponse ok = sseAnswer({QStringLiteral("Fine.")});
    QTest::newRow("429 rate limit, then success")
        << QList{fail(429, "rate_limit_exceeded"), ok} << QString() << 2;
    QTest::newRow("429 rate limit always")
        << QList{fail(429, "rate_limit_exceeded"), fail(429, "rate_limit_exceeded"),
                 fail(429, "rate_limit_exceeded")}
        << ModelError::RateLimited << 3;
    QTest::newRow("429 without a code, then success")
        << QList{FakeResponse::json(429, {}), ok} << QString() << 2;
    QTest::newRow("429 insufficient quota")
        << QList{fail(429, "insufficient_quota"), ok} << ModelError::QuotaExhausted << 1;
    QTest::newRow("402 insufficient balance")
        << QList{fail(402, "invalid_request_error"), ok} << ModelError::QuotaExhausted << 1;
    QTest::newRow("401") << QList{fail(401, "invalid_api_key"), ok} << ModelError::AuthFailed << 1;
    QTest::newRow("403") << QList{fail(403, "forbidden"), ok} << ModelError::AuthFailed << 1;
    QTest::newRow("400") << QList{fail(400, "invalid_request_error"), ok}
                         << ModelError::BadRequest << 1;
    QTest::newRow("404") << QList{fail(404, "model_not_found"), ok} << ModelError::BadRequest << 1;
    QTest::newRow("422") << QList{fail(422, "invalid_request_error"), ok}
                         << ModelError::BadRequest << 1;
    QTest::newRow("500, then success") << QList{fail(500, "server_error"), ok} << QString() << 2;
    QTest::newRow("502, then success") << QList{fail(502, "bad_gateway"), ok} << QString() << 2;
    QTest::newRow("503, then success") << QList{fail(503, "overloaded"), ok} << QString() << 2;
    QTest::newRow("504, 503, then success")
        << QList{fail(504, "timeout"), fail(503, "overloaded"), ok} << QString() << 3;
    QTest::newRow("503 always")
        << QList{fail(503, "overloaded"), fail(503, "overloaded"), fail(503, "overloaded"), ok}
        << ModelError::Unavailable << 3;
}

void tst_OpenAiCompatibleModel::statusHandling()
{
    QFETCH(QList<FakeResponse>, script);
    QFETCH(QString, errorCode);
    QFETCH(int, attempts);
    for (const FakeResponse &response : std::as_const(script))
        m_server->enqueue(response);

    const Observed observed = call(config());
    QCOMPARE(observed.finishedCount, 1);
    QCOMPARE(observed.response.attempts, attempts);
    QCOMPARE(m_server->requestCount(), attempts);
    if (errorCode.isEmpty()) {
        QCOMPARE(observed.response.finishReason, FinishReason::Stop);
        QCOMPARE(observed.response.content, QStringLiteral("Fine."));
        QCOMPARE(observed.deltas, QStringList{QStringLiteral("Fine.")}); // no duplicate text
        return;
    }
    QCOMPARE(observed.response.finishReason, FinishReason::Error);
    QCOMPARE(observed.response.errorCode, errorCode);
    const QString message = observed.response.errorMessage;
    QVERIFY(!message.isEmpty());
    QVERIFY2(!message.contains(QLatin1String("SECRET")), qPrintable(message));
    QVERIFY2(!message.contains(QLatin1String("Incorrect")), qPrintable(message));
    QVERIFY2(!message.contains(QLatin1String("http")), qPrintable(message));
    QVERIFY2(!message.contains(QLatin1String("127.0.0.1")), qPrintable(message));
}

void tst_OpenAiCompatibleModel::retryAfterHonoured_data()
{
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<int>("capMs");
    QTest::addColumn<int>("minGapMs");
    QTest::addColumn<int>("maxGapMs");

    QTest::newRow("retry-after-ms") << QByteArray("retry-after-ms") << QByteArray("300") << 3000
                                    << 300 << 2500;
    QTest::newRow("Retry-After seconds")
        << QByteArray("Retry-After") << QByteArray("1") << 3000 << 1000 << 2900;
    QTest::newRow("retry-after-ms above the cap")
        << QByteArray("retry-after-ms") << QByteArray("60000") << 250 << 250 << 2500;
    QTest::newRow("Retry-After seconds above the cap")
        << QByteArray("Retry-After") << QByteArray("30") << 400 << 400 << 2500;
    // An HTTP date 2 s ahead, written with whole seconds (so at least 1 s away); made when
    // the row runs, as the rows before take seconds.
    QTest::newRow("Retry-After HTTP date")
        << QByteArray("Retry-After") << QByteArray("<now + 2 s>") << 5000 << 900 << 3500;
}

void tst_OpenAiCompatibleModel::retryAfterHonoured()
{
    QFETCH(QByteArray, header);
    QFETCH(QByteArray, value);
    QFETCH(int, capMs);
    QFETCH(int, minGapMs);
    QFETCH(int, maxGapMs);

    if (value == "<now + 2 s>") {
        const QDateTime when = QDateTime::currentDateTimeUtc().addSecs(2);
        value = QLocale::c()
                    .toString(when, QStringLiteral("ddd, dd MMM yyyy HH:mm:ss 'GMT'"))
                    .toLatin1();
    }
    FakeResponse limited =
        FakeResponse::error(429, QStringLiteral("rate_limit_exceeded"), ServerText);
    limited.headers = {{header, value}};
    m_server->enqueue(limited);
    m_server->enqueue(sseAnswer({QStringLiteral("Fine.")}));
    OpenAiConfig cfg = config();
    cfg.retryAfterCapMs = capMs;
    const Observed observed = call(cfg);
    QCOMPARE(observed.response.content, QStringLiteral("Fine."));
    QCOMPARE(observed.response.attempts, 2);
    const qint64 gap = m_server->gapBeforeRequest(1);
    QVERIFY2(gap >= minGapMs, qPrintable(QString::number(gap)));
    QVERIFY2(gap <= maxGapMs, qPrintable(QString::number(gap)));
}

void tst_OpenAiCompatibleModel::exponentialBackoffWithoutHeader()
{
    for (int i = 0; i < 2; ++i)
        m_server->enqueue(FakeResponse::error(503, QStringLiteral("overloaded"), ServerText));
    m_server->enqueue(sseAnswer({QStringLiteral("Fine.")}));
    OpenAiConfig cfg = config();
    cfg.initialBackoffMs = 100;
    QCOMPARE(call(cfg).response.attempts, 3);
    QVERIFY2(m_server->gapBeforeRequest(1) >= 100, qPrintable(QString::number(
                                                        m_server->gapBeforeRequest(1))));
    QVERIFY2(m_server->gapBeforeRequest(2) >= 200, qPrintable(QString::number(
                                                        m_server->gapBeforeRequest(2))));
}

// Issue #24 §3: with the console's seed the model layer's waits are jittered (each within the
// computed backoff, so the worst case holds), and differ between consoles and between two
// replies of one model; without one they are the computed waits.
void tst_OpenAiCompatibleModel::jitteredBackoffDiffersByConsoleAndReply()
{
    OpenAiConfig cfg = config();
    cfg.initialBackoffMs = 1000; // a wide range to draw from; the waits are not slept out
    QCOMPARE(cfg.retryPolicy().jitter, JitterMode::None);
    cfg.jitterSeed = 0x1001;
    QCOMPARE(cfg.retryPolicy().jitter, JitterMode::Full);
    QCOMPARE(cfg.retryPolicy().worstCaseDuration(), [&] {
        OpenAiConfig plain = cfg;
        plain.jitterSeed.reset();
        return plain.retryPolicy().worstCaseDuration();
    }());

    // The first wait of a reply, as the model announces it before it waits.
    const auto firstWait = [this](OpenAiCompatibleModel &model) {
        m_server->enqueue(FakeResponse::error(503, QStringLiteral("overloaded"), ServerText));
        std::unique_ptr<ChatReply> reply(model.complete(question()));
        QSignalSpy retrying(reply.get(), &ChatReply::retrying);
        const bool announced = retrying.wait(5000);
        reply->abort();
        return announced ? retrying.first().at(3).toInt() : -1;
    };
    OpenAiCompatibleModel first(cfg);
    OpenAiConfig other = cfg;
    other.jitterSeed = 0x2002;
    OpenAiCompatibleModel second(other);
    const int a1 = firstWait(first);
    const int a2 = firstWait(first);
    const int b1 = firstWait(second);
    for (const int wait : {a1, a2, b1})
        QVERIFY2(wait >= 0 && wait <= 1000, qPrintable(QString::number(wait)));
    QVERIFY2(a1 != b1 && a1 != a2,
             qPrintable(QStringLiteral("%1 %2 %3").arg(a1).arg(a2).arg(b1)));
    // The same seed replays the same waits (a reproduction).
    OpenAiCompatibleModel again(cfg);
    QCOMPARE(firstWait(again), a1);
}

void tst_OpenAiCompatibleModel::chineseErrorMessage()
{
    m_server->enqueue(FakeResponse::error(401, QStringLiteral("invalid_api_key"), ServerText));
    const Observed observed =
        call(config(), question(QStringLiteral("查询订单 A1001 的物流位置")));
    QCOMPARE(observed.response.errorCode, ModelError::AuthFailed);
    QVERIFY(observed.response.errorMessage.contains(QStringLiteral("模型")));
    QVERIFY(!observed.response.errorMessage.contains(QLatin1String("SECRET")));
}

void tst_OpenAiCompatibleModel::connectionRefusedIsRetried()
{
    // A port where nothing listens.
    const Testing::ClosedPort nothing;
    QVERIFY(nothing.port());
    OpenAiConfig cfg = config();
    cfg.baseUrl = QUrl(QStringLiteral("http://127.0.0.1:%1/v1").arg(nothing.port()));
    const Observed observed = call(cfg);
    QCOMPARE(observed.response.errorCode, ModelError::Unavailable);
    QCOMPARE(observed.response.attempts, 3);
    QVERIFY(!observed.response.errorMessage.contains(QLatin1String("127.0.0.1")));
}

// Qt's HTTP client sends a POST again by itself when the connection closes before the
// answer (one more time per attempt, measured on 6.4: 6 requests for 3 attempts). Every
// request the server sees must be one of this layer's own attempts.
void tst_OpenAiCompatibleModel::aRequestWhoseConnectionClosesUnansweredIsSentOnceAnAttempt()
{
    FakeResponse closed;
    closed.closeUnanswered = true;
    for (int i = 0; i < 3; ++i)
        m_server->enqueue(closed);
    // What a request sent again by the network stack would get: an answer that hides it.
    for (int i = 0; i < 3; ++i)
        m_server->enqueue(jsonAnswer(QStringLiteral("sent twice")));
    const Observed observed = call(config(false));
    QCOMPARE(observed.response.errorCode, ModelError::Unavailable);
    QCOMPARE(observed.response.attempts, 3);
    QCOMPARE(m_server->requestCount(), 3);
}

void tst_OpenAiCompatibleModel::unparseableBody()
{
    FakeResponse garbage;
    garbage.body = "<html>bad gateway page</html>";
    m_server->enqueue(garbage);
    const Observed observed = call(config(false));
    QCOMPARE(observed.response.errorCode, ModelError::InvalidResponse);
    QCOMPARE(observed.response.attempts, 1);
}

void tst_OpenAiCompatibleModel::keepAlivesInterleaved()
{
    m_server->enqueue(FakeResponse::events({{Sse::keepAlive(), 0},
                                            {Sse::role(), 5},
                                            {Sse::keepAlive(), 5},
                                            {Sse::content(QStringLiteral("Order ")), 5},
                                            {Sse::keepAlive() + Sse::keepAlive(), 5},
                                            {Sse::content(QStringLiteral("shipped.")), 5},
                                            {Sse::keepAlive(), 5},
                                            {Sse::finish(QStringLiteral("stop")), 5},
                                            {Sse::done(), 0}}));
    const Observed observed = call(config());
    QCOMPARE(observed.response.finishReason, FinishReason::Stop);
    QCOMPARE(observed.response.content, QStringLiteral("Order shipped."));
    QCOMPARE(observed.deltas,
             QStringList({QStringLiteral("Order "), QStringLiteral("shipped.")}));
}

// A server that only keeps the connection alive is not answering: the idle timeout runs on.
void tst_OpenAiCompatibleModel::keepAlivesDoNotResetIdleTimeout()
{
    QList<FakeChunk> chunks{{Sse::role(), 0}};
    for (int i = 0; i < 200; ++i)
        chunks.append({Sse::keepAlive(), 20}); // ~4 s of keep-alives, far past the timeout
    m_server->enqueue(FakeResponse::events(chunks));
    OpenAiConfig cfg = config();
    cfg.idleTimeoutMs = 300;
    cfg.maxAttempts = 1;
    const Observed observed = call(cfg);
    QCOMPARE(observed.response.errorCode, ModelError::Timeout);
    QCOMPARE(observed.response.attempts, 1);
    QVERIFY2(observed.elapsedMs >= 300, qPrintable(QString::number(observed.elapsedMs)));
    QVERIFY2(observed.elapsedMs < 3000, qPrintable(QString::number(observed.elapsedMs)));
}

void tst_OpenAiCompatibleModel::stalledStreamTimesOut()
{
    for (int i = 0; i < 2; ++i) {
        FakeResponse stalled = FakeResponse::events({{Sse::role(), 0}, {Sse::done(), 0}});
        stalled.stallAfterChunks = 1;
        m_server->enqueue(stalled);
    }
    OpenAiConfig cfg = config();
    cfg.idleTimeoutMs = 200;
    cfg.maxAttempts = 2;
    const Observed observed = call(cfg);
    QCOMPARE(observed.response.errorCode, ModelError::Timeout);
    QCOMPARE(observed.response.attempts, 2);
    QCOMPARE(m_server->requestCount(), 2);
}

void tst_OpenAiCompatibleModel::stalledStreamRetriedToSuccess()
{
    FakeResponse stalled = sseAnswer({QStringLiteral("never sent")});
    stalled.stallAfterChunks = 1; // the role delta only: nothing reached the staff member
    m_server->enqueue(stalled);
    m_server->enqueue(sseAnswer({QStringLiteral("Fine.")}));
    OpenAiConfig cfg = config();
    cfg.idleTimeoutMs = 200;
    const Observed observed = call(cfg);
    QCOMPARE(observed.response.finishReason, FinishReason::Stop);
    QCOMPARE(observed.deltas, QStringList{QStringLiteral("Fine.")});
    QCOMPARE(observed.response.attempts, 2);
}

void tst_OpenAiCompatibleModel::noHeadersTimesOut()
{
    FakeResponse silent = jsonAnswer(QStringLiteral("never"));
    silent.headerDelayMs = -1;
    m_server->enqueue(silent);
    OpenAiConfig cfg = config();
    cfg.connectTimeoutMs = 200;
    cfg.maxAttempts = 1;
    const Observed observed = call(cfg);
    QCOMPARE(observed.response.errorCode, ModelError::Timeout);
    QCOMPARE(observed.response.attempts, 1);
    QVERIFY2(observed.elapsedMs >= 200, qPrintable(QString::number(observed.elapsedMs)));
}

void tst_OpenAiCompatibleModel::disconnectBeforeTextIsRetried()
{
    FakeResponse dropped = sseAnswer({QStringLiteral("never sent")});
    dropped.dropAfterChunks = 1;
    m_server->enqueue(dropped);
    m_server->enqueue(sseAnswer({QStringLiteral("Fine.")}));
    const Observed observed = call(config());
    QCOMPARE(observed.response.finishReason, FinishReason::Stop);
    QCOMPARE(observed.response.attempts, 2);
    QCOMPARE(observed.deltas, QStringList{QStringLiteral("Fine.")});
}

// Text already shown cannot be retried without showing it twice.
void tst_OpenAiCompatibleModel::disconnectAfterTextIsTruncated()
{
    FakeResponse dropped = sseAnswer({QStringLiteral("Order A1001 "), QStringLiteral("is")});
    dropped.dropAfterChunks = 2; // role, first piece
    m_server->enqueue(dropped);
    m_server->enqueue(sseAnswer({QStringLiteral("Order A1001 is on its way.")}));
    const Observed observed = call(config());
    QCOMPARE(observed.response.errorCode, ModelError::Truncated);
    QCOMPARE(observed.response.attempts, 1);
    QCOMPARE(m_server->requestCount(), 1);
    QCOMPARE(observed.deltas, QStringList{QStringLiteral("Order A1001 ")});
}

void tst_OpenAiCompatibleModel::streamEndingWithoutFinishIsTruncated()
{
    // Cleanly closed, but neither finish_reason nor [DONE]: cut short by something in between.
    m_server->enqueue(FakeResponse::events(
        {{Sse::role(), 0}, {Sse::content(QStringLiteral("Order A1001 ")), 5}}));
    m_server->enqueue(sseAnswer({QStringLiteral("Fine.")}));
    const Observed observed = call(config());
    QCOMPARE(observed.response.errorCode, ModelError::Truncated);
    QCOMPARE(observed.response.attempts, 1);
    QCOMPARE(m_server->requestCount(), 1);
}

void tst_OpenAiCompatibleModel::malformedToolArgumentsPassedThrough()
{
    m_server->enqueue(FakeResponse::events(
        {{Sse::toolCall(0, QStringLiteral("call_x"), QStringLiteral("queryOrderStatus"),
                        QStringLiteral("{\"orderId\": \"A10")), 0},
         {Sse::toolArguments(0, QStringLiteral("01\",,")), 5},
         {Sse::finish(QStringLiteral("tool_calls")), 5},
         {Sse::done(), 0}}));
    const Observed observed = call(config());
    QCOMPARE(observed.response.finishReason, FinishReason::ToolCalls);
    QCOMPARE(observed.response.toolCalls.size(), 1);
    QCOMPARE(observed.response.toolCalls.at(0).arguments,
             QStringLiteral("{\"orderId\": \"A1001\",,"));
}

void tst_OpenAiCompatibleModel::unknownToolNamePassedThrough()
{
    m_server->enqueue(FakeResponse::events(
        {{Sse::toolCall(0, QStringLiteral("call_y"), QStringLiteral("refundEverything"),
                        QStringLiteral("{}")), 0},
         {Sse::finish(QStringLiteral("tool_calls")), 5},
         {Sse::done(), 0}}));
    const Observed observed = call(config());
    QCOMPARE(observed.response.finishReason, FinishReason::ToolCalls);
    const QList<ModelToolCall> expected{
        {QStringLiteral("call_y"), QStringLiteral("refundEverything"), QStringLiteral("{}")}};
    QCOMPARE(observed.response.toolCalls, expected);
}

void tst_OpenAiCompatibleModel::contentFilter()
{
    m_server->enqueue(FakeResponse::events({{Sse::role(), 0},
                                            {Sse::finish(QStringLiteral("content_filter")), 5},
                                            {Sse::done(), 0}}));
    const Observed observed = call(config());
    QCOMPARE(observed.response.finishReason, FinishReason::ContentFilter);
    QVERIFY(!observed.response.isError());
    QCOMPARE(observed.response.attempts, 1);
    QCOMPARE(m_server->requestCount(), 1);
}

void tst_OpenAiCompatibleModel::serverOverloadFinishIsRetried()
{
    m_server->enqueue(FakeResponse::events(
        {{Sse::role(), 0},
         {Sse::finish(QStringLiteral("insufficient_system_resource")), 5},
         {Sse::done(), 0}}));
    m_server->enqueue(sseAnswer({QStringLiteral("Fine.")}));
    const Observed observed = call(config());
    QCOMPARE(observed.response.finishReason, FinishReason::Stop);
    QCOMPARE(observed.response.content, QStringLiteral("Fine."));
    QCOMPARE(observed.response.attempts, 2);
}

void tst_OpenAiCompatibleModel::retryBudgetRefusesRetry_data()
{
    QTest::addColumn<int>("budgetRetries");
    QTest::addColumn<int>("attempts");
    QTest::newRow("no retry left") << 0 << 1;
    QTest::newRow("one retry left") << 1 << 2;
}

void tst_OpenAiCompatibleModel::retryBudgetRefusesRetry()
{
    QFETCH(int, budgetRetries);
    QFETCH(int, attempts);
    for (int i = 0; i < 3; ++i)
        m_server->enqueue(FakeResponse::error(503, QStringLiteral("overloaded"), ServerText));
    ChatRequest request = question();
    request.budget = std::make_shared<RetryBudget>(budgetRetries);
    const Observed observed = call(config(), request);
    QCOMPARE(observed.response.errorCode, ModelError::Unavailable);
    QCOMPARE(observed.response.attempts, attempts);
    QCOMPARE(m_server->requestCount(), attempts);
    QCOMPARE(request.budget->used(RetryBudget::Layer::Model), attempts - 1);
    QCOMPARE(request.budget->remaining(), 0);
}

// A backoff that would end after the turn's deadline is not started at all.
void tst_OpenAiCompatibleModel::retryStopsAtTheTurnDeadline()
{
    FakeResponse busy = FakeResponse::error(503, QStringLiteral("overloaded"), ServerText);
    busy.headers = {{"retry-after-ms", "2000"}};
    m_server->enqueue(busy);
    m_server->enqueue(sseAnswer({QStringLiteral("Fine.")}));
    ChatRequest request = question();
    request.budget = std::make_shared<RetryBudget>(5, QDeadlineTimer(1000));
    const Observed observed = call(config(), request);
    QCOMPARE(observed.response.errorCode, ModelError::Unavailable);
    QCOMPARE(observed.response.attempts, 1);
    QVERIFY2(observed.elapsedMs < 1000, qPrintable(QString::number(observed.elapsedMs)));
    QCOMPARE(request.budget->used(RetryBudget::Layer::Model), 0);
}

namespace {
QStringList capturedLog;
void captureLog(QtMsgType, const QMessageLogContext &, const QString &message)
{
    capturedLog.append(message);
}
} // namespace

// The local log gets the details (status, the server's error code, attempt, delay), but never
// the key and never the server's message, which may quote the key.
void tst_OpenAiCompatibleModel::keyAndServerTextNeverLogged()
{
    m_server->enqueue(FakeResponse::error(401, QStringLiteral("invalid_api_key"), ServerText));
    m_server->enqueue(FakeResponse::error(429, QStringLiteral("rate_limit_exceeded"), ServerText));
    FakeResponse dropped = sseAnswer({QStringLiteral("Order "), QStringLiteral("A1001")});
    dropped.dropAfterChunks = 2;
    m_server->enqueue(dropped);

    // Whatever QT_LOGGING_RULES says, these warnings must be written here to be checked.
    auto &category = const_cast<QLoggingCategory &>(lcLlm());
    const bool wasEnabled = category.isWarningEnabled();
    category.setEnabled(QtWarningMsg, true);
    capturedLog.clear();
    const QtMessageHandler previous = qInstallMessageHandler(captureLog);
    const Observed refused = call(config());
    const Observed truncated = call(config());
    qInstallMessageHandler(previous);
    category.setEnabled(QtWarningMsg, wasEnabled);

    QCOMPARE(refused.response.errorCode, ModelError::AuthFailed);
    QCOMPARE(truncated.response.errorCode, ModelError::Truncated);
    QCOMPARE(truncated.response.attempts, 2);
    QVERIFY(capturedLog.size() >= 3);
    QVERIFY(capturedLog.join(QLatin1Char('\n')).contains(QLatin1String("invalid_api_key")));
    for (const QString &line : std::as_const(capturedLog)) {
        QVERIFY2(!line.contains(QLatin1String("SECRET")), qPrintable(line));
        QVERIFY2(!line.contains(QLatin1String("Incorrect API key")), qPrintable(line));
    }
}

void tst_OpenAiCompatibleModel::abortDuringStream()
{
    QList<FakeChunk> chunks{{Sse::role(), 0}};
    for (int i = 0; i < 50; ++i)
        chunks.append({Sse::content(QStringLiteral("word ")), 20});
    chunks.append({Sse::finish(QStringLiteral("stop")), 20});
    m_server->enqueue(FakeResponse::events(chunks));

    OpenAiCompatibleModel model(config());
    const std::unique_ptr<ChatReply> reply(model.complete(question()));
    QStringList events;
    QObject::connect(reply.get(), &ChatReply::contentDelta, reply.get(),
                     [&events](const QString &text) { events.append(text); });
    QObject::connect(reply.get(), &ChatReply::finished, reply.get(),
                     [&events] { events.append(QStringLiteral("finished")); });
    // Aborted from inside the first delta's slot: the hardest place for a reply to survive.
    ChatReply *raw = reply.get();
    QObject::connect(raw, &ChatReply::contentDelta, raw, [raw] { raw->abort(); });
    QSignalSpy finished(raw, &ChatReply::finished);
    QVERIFY(finished.wait(5000));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(events, QStringList({QStringLiteral("word "), QStringLiteral("finished")}));
    QCOMPARE(reply->response().errorCode, ModelError::Cancelled);
    QCOMPARE(reply->response().attempts, 1);
    QVERIFY(!reply->response().errorMessage.isEmpty());
}

void tst_OpenAiCompatibleModel::abortDuringBackoff()
{
    FakeResponse busy = FakeResponse::error(503, QStringLiteral("overloaded"), ServerText);
    busy.headers = {{"retry-after-ms", "300"}};
    m_server->enqueue(busy);
    m_server->enqueue(sseAnswer({QStringLiteral("Fine.")}));

    OpenAiCompatibleModel model(config());
    const std::unique_ptr<ChatReply> reply(model.complete(question()));
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    QSignalSpy completed(m_server.get(), &FakeOpenAiServer::responseCompleted);
    QVERIFY(completed.wait(3000));
    reply->abort(); // the 503 is on its way or read: either way nothing may follow
    QCOMPARE(finished.size(), 1);
    QCOMPARE(reply->response().errorCode, ModelError::Cancelled);
    // Bounded wait for something that must not happen: a retry after the 300 ms backoff.
    QSignalSpy requested(m_server.get(), &FakeOpenAiServer::requestReceived);
    QVERIFY(!requested.wait(700));
    QCOMPARE(m_server->requestCount(), 1);
    QCOMPARE(finished.size(), 1);
}

void tst_OpenAiCompatibleModel::apiKeyFromEnvironment()
{
    const QByteArray variable = "AGENT_CONSOLE_TEST_KEY_VARIABLE";
    qputenv(variable.constData(), "  sk-from-env \n");
    ApiKeySource source;
    source.setVariable(QString::fromLatin1(variable));
    QSignalSpy finished(&source, &ApiKeySource::finished);
    source.lookup();
    QCOMPARE(finished.size(), 0); // always asynchronous
    QVERIFY(finished.wait(2000));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.at(0).at(0).toString(), QStringLiteral("sk-from-env"));
    QCOMPARE(finished.at(0).at(1).value<ApiKeySource::Origin>(),
             ApiKeySource::Origin::Environment);

    qunsetenv(variable.constData());
    QCOMPARE(ApiKeySource::fromEnvironment(QString::fromLatin1(variable)), QString());
    QCOMPARE(ApiKeySource::defaultVariable(), QStringLiteral("AGENT_CONSOLE_API_KEY"));
}

QTEST_GUILESS_MAIN(tst_OpenAiCompatibleModel)
#include "tst_openaicompatiblemodel.moc"
