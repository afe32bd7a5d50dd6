// The settings dialog's "Test connection" (issue #41 §9), against servers on 127.0.0.1 only:
// what it finds (nothing listening, TLS, a refused or missing key, a wrong path, a model the
// server does not list, no answer in time, connected) said in staff words, English and
// Chinese, never with a system's own error text; the requests it makes (GET /models, then
// one token).
#include "closedport.h"
#include "fakeopenaiserver.h"

#include "core/console/connectionsettings.h"
#include "core/console/connectiontest.h"
#include "core/llm/modelerror.h"
#include "core/llm/secretstore.h"

#include <QJsonArray>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;
using Finding = ConnectionTestResult::Finding;

namespace {

constexpr int kTimeoutMs = 500;
const QString kKey = QStringLiteral("sk-connection-test-91c2");

FakeResponse oneToken(const QString &model = QStringLiteral("fake-model"))
{
    return FakeResponse::json(200, QJsonObject{
        {QStringLiteral("id"), QStringLiteral("c-1")},
        {QStringLiteral("model"), model},
        {QStringLiteral("choices"), QJsonArray{QJsonObject{
            {QStringLiteral("index"), 0},
            {QStringLiteral("message"), QJsonObject{{QStringLiteral("role"),
                                                     QStringLiteral("assistant")},
                                                    {QStringLiteral("content"),
                                                     QStringLiteral("p")}}},
            {QStringLiteral("finish_reason"), QStringLiteral("length")}}}}});
}

// A server that answers every connection at once with plain HTTP, before reading a byte:
// an https client meets it in its TLS handshake (a local server given an https:// URL).
class PlainHttpServer final : public QObject
{
public:
    bool listen()
    {
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection()) {
                connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
                socket->write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                              "Connection: close\r\n\r\n");
                socket->disconnectFromHost();
            }
        });
        return m_server.listen(QHostAddress::LocalHost);
    }
    quint16 port() const { return m_server.serverPort(); }

private:
    QTcpServer m_server;
};

// Text only a system writes: none of it may reach staff.
const QStringList kSystemWords{
    QStringLiteral("Connection refused"), QStringLiteral("SSL"), QStringLiteral("handshake"),
    QStringLiteral("Error transferring"), QStringLiteral("server replied"),
    QStringLiteral("Operation canceled"), QStringLiteral("QNetworkReply"),
    QStringLiteral("temporarily unavailable"), QStringLiteral("dbus")};

} // namespace

class tst_ConnectionTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void findings_data();
    void findings();
    void nothingListeningAtOllamasPortNamesOllama();
    void aTlsFailureIsSaidAsOne();
    void itAsksTheListThenOneToken();
    void saidInChinese();
    void everyLocalPresetHasItsAddress();

private:
    ConnectionTestResult runTest(const QString &baseUrl, const QString &model,
                                 const QString &typedKey, bool chinese = false);

    std::unique_ptr<FakeOpenAiServer> m_server;
    std::shared_ptr<MemorySecretStore> m_secrets;
};

void tst_ConnectionTest::initTestCase()
{
    qRegisterMetaType<AgentConsole::ConnectionTestResult>();
}

void tst_ConnectionTest::init()
{
    m_server = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_server->listen());
    m_secrets = std::make_shared<MemorySecretStore>();
}

void tst_ConnectionTest::cleanup()
{
    m_server.reset();
    m_secrets.reset();
}

ConnectionTestResult tst_ConnectionTest::runTest(const QString &baseUrl, const QString &model,
                                                 const QString &typedKey, bool chinese)
{
    ModelOptions options;
    options.provider = ModelOptions::Provider::OpenAiCompatible;
    options.baseUrl = baseUrl;
    options.model = model;
    options.apiKeyEnv = QStringLiteral("TST_CONNECTIONTEST_UNSET_KEY");
    ConnectionTest test(m_secrets);
    test.setTimeoutMs(kTimeoutMs);
    test.setSentencesInChinese(chinese);
    QSignalSpy finished(&test, &ConnectionTest::finished);
    if (!test.start(options, typedKey))
        return {};
    if (!finished.wait(10'000) || finished.size() != 1)
        return {};
    return finished.first().first().value<ConnectionTestResult>();
}

void tst_ConnectionTest::findings_data()
{
    QTest::addColumn<QList<FakeResponse>>("script");
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("typedKey");
    QTest::addColumn<Finding>("finding");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("said");

    const FakeResponse unauthorized = FakeResponse::error(
        401, QStringLiteral("invalid_api_key"), QStringLiteral("Incorrect API key provided"));
    const FakeResponse notFound = FakeResponse::error(404, QStringLiteral("not_found"),
                                                      QStringLiteral("404 page not found"));
    FakeResponse silent;
    silent.headerDelayMs = -1;

    QTest::newRow("connected, the model listed")
        << QList<FakeResponse>{FakeResponse::models({QStringLiteral("fake-model")}), oneToken()}
        << QStringLiteral("fake-model") << kKey << Finding::Connected << QString()
        << QStringLiteral("fake-model answered.");
    // llama-server answers whatever the name: the completion decides, not the list.
    QTest::newRow("connected, the model not listed but answering")
        << QList<FakeResponse>{FakeResponse::models({QStringLiteral("/models/qwen.gguf")}),
                               oneToken(QStringLiteral("qwen.gguf"))}
        << QStringLiteral("default") << QString() << Finding::Connected << QString()
        << QStringLiteral("default answered.");
    QTest::newRow("connected, no list served")
        << QList<FakeResponse>{notFound, oneToken()} << QStringLiteral("fake-model") << kKey
        << Finding::Connected << QString() << QStringLiteral("fake-model answered.");
    QTest::newRow("a refused key")
        << QList<FakeResponse>{unauthorized} << QStringLiteral("fake-model") << kKey
        << Finding::KeyRefused << ModelError::AuthFailed
        << QStringLiteral("The server refused the API key (HTTP 401). Check the key, or "
                          "type a new one.");
    QTest::newRow("no key")
        << QList<FakeResponse>{unauthorized} << QStringLiteral("fake-model") << QString()
        << Finding::NoKey << ModelError::AuthFailed
        << QStringLiteral("The server wants an API key, and none is set.");
    QTest::newRow("a wrong path")
        << QList<FakeResponse>{notFound, notFound} << QStringLiteral("fake-model") << kKey
        << Finding::WrongPath << ModelError::BadRequest
        << QStringLiteral("Nothing answers at the path /v1 on 127.0.0.1:");
    QTest::newRow("a model the server does not list")
        << QList<FakeResponse>{FakeResponse::models({QStringLiteral("llama3.2"),
                                                     QStringLiteral("qwen2.5:7b")}),
                               FakeResponse::error(404, QStringLiteral("not_found_error"),
                                                   QStringLiteral("model \"llama3.1\" not "
                                                                  "found, try pulling it "
                                                                  "first"))}
        << QStringLiteral("llama3.1") << QString() << Finding::ModelNotListed
        << ModelError::BadRequest
        << QStringLiteral("The server does not offer the model \"llama3.1\". It offers: "
                          "llama3.2, qwen2.5:7b.");
    QTest::newRow("a model refused, none listed")
        << QList<FakeResponse>{FakeResponse::models({}),
                               FakeResponse::error(400, QStringLiteral("invalid_request_error"),
                                                   QStringLiteral("no such model"))}
        << QStringLiteral("gpt-9") << kKey << Finding::ModelNotListed << ModelError::BadRequest
        << QStringLiteral("The server does not offer the model \"gpt-9\" and lists none.");
    QTest::newRow("no answer in time")
        << QList<FakeResponse>{silent} << QStringLiteral("fake-model") << kKey
        << Finding::TimedOut << ModelError::Timeout
        << QStringLiteral("did not answer within 0.5 s.");
}

// Each finding, its code (the wire name a turn would carry) and its sentence; nothing of the
// system's own words.
void tst_ConnectionTest::findings()
{
    QFETCH(QList<FakeResponse>, script);
    QFETCH(QString, model);
    QFETCH(QString, typedKey);
    QFETCH(Finding, finding);
    QFETCH(QString, code);
    QFETCH(QString, said);
    for (const FakeResponse &response : script)
        m_server->enqueue(response);
    const ConnectionTestResult result = runTest(m_server->baseUrl().toString(), model, typedKey);
    QCOMPARE(result.finding, finding);
    QCOMPARE(result.connected, finding == Finding::Connected);
    QCOMPARE(result.code, code);
    QVERIFY2(result.sentence.contains(said), qPrintable(result.sentence));
    for (const QString &word : kSystemWords)
        QVERIFY2(!result.sentence.contains(word, Qt::CaseInsensitive),
                 qPrintable(result.sentence));
    QVERIFY(!result.sentence.contains(kKey));
    QCOMPARE(result.keyFrom, typedKey.isEmpty() ? QStringLiteral("none")
                                                : QStringLiteral("typed"));
    // Every script was used up: no request was left unmade, none made twice.
    QCOMPARE(m_server->requestCount(), int(script.size()));
}

// Nothing at a closed loopback port, and at Ollama's own: said with the address, and with
// Ollama's name where Ollama usually listens.
void tst_ConnectionTest::nothingListeningAtOllamasPortNamesOllama()
{
    const ClosedPort closed;
    QVERIFY(closed.port() != 0);
    const ConnectionTestResult anywhere = runTest(
        QStringLiteral("http://127.0.0.1:%1/v1").arg(closed.port()), QStringLiteral("m"), {});
    QCOMPARE(anywhere.finding, Finding::NothingListening);
    QCOMPARE(anywhere.code, ModelError::Unavailable);
    QCOMPARE(anywhere.sentence, QStringLiteral("Nothing is listening at 127.0.0.1:%1. Is the "
                                               "model server running?")
                                    .arg(closed.port()));

    const ClosedPort ollamas(11434);
    if (ollamas.port() == 0)
        QSKIP("something listens at 127.0.0.1:11434 on this machine (an Ollama?)");
    const QString preset = providerPresets().at(3).baseUrl;
    QCOMPARE(preset, QStringLiteral("http://127.0.0.1:11434/v1"));
    const ConnectionTestResult ollama = runTest(preset, QStringLiteral("llama3.1"), {});
    QCOMPARE(ollama.finding, Finding::NothingListening);
    QCOMPARE(ollama.sentence,
             QStringLiteral("Nothing is listening at 127.0.0.1:11434. Is Ollama running?"));
    for (const QString &word : kSystemWords)
        QVERIFY2(!ollama.sentence.contains(word, Qt::CaseInsensitive),
                 qPrintable(ollama.sentence));
}

// https:// to a server that speaks plain HTTP: the handshake fails, and staff read that the
// secure connection failed, not OpenSSL's words.
void tst_ConnectionTest::aTlsFailureIsSaidAsOne()
{
    PlainHttpServer plain;
    QVERIFY(plain.listen());
    const ConnectionTestResult result = runTest(
        QStringLiteral("https://127.0.0.1:%1/v1").arg(plain.port()), QStringLiteral("m"), kKey);
    QCOMPARE(result.finding, Finding::TlsFailed);
    QCOMPARE(result.code, ModelError::Unavailable);
    QVERIFY2(result.sentence.startsWith(
                 QStringLiteral("The secure connection to 127.0.0.1:%1 failed").arg(plain.port())),
             qPrintable(result.sentence));
    for (const QString &word : kSystemWords)
        QVERIFY2(!result.sentence.contains(word, Qt::CaseInsensitive),
                 qPrintable(result.sentence));
}

// Two cheap requests, both with the key: the list, then one unstreamed token.
void tst_ConnectionTest::itAsksTheListThenOneToken()
{
    m_server->enqueue(FakeResponse::models({QStringLiteral("fake-model")}));
    m_server->enqueue(oneToken());
    const ConnectionTestResult result
        = runTest(m_server->baseUrl().toString(), QStringLiteral("fake-model"), kKey);
    QVERIFY(result.connected);
    QCOMPARE(m_server->requestCount(), 2);
    const RecordedRequest &list = m_server->requests().at(0);
    QCOMPARE(list.method, QByteArray("GET"));
    QCOMPARE(list.path, QByteArray("/v1/models"));
    QCOMPARE(list.headers.value("authorization"), "Bearer " + kKey.toUtf8());
    const RecordedRequest &token = m_server->requests().at(1);
    QCOMPARE(token.method, QByteArray("POST"));
    QCOMPARE(token.path, QByteArray("/v1/chat/completions"));
    QCOMPARE(token.json.value(QLatin1String("max_tokens")).toInt(), 1);
    QCOMPARE(token.json.value(QLatin1String("stream")).toBool(true), false);
    QCOMPARE(token.headers.value("authorization"), "Bearer " + kKey.toUtf8());
}

void tst_ConnectionTest::saidInChinese()
{
    const ClosedPort closed;
    QVERIFY(closed.port() != 0);
    const ConnectionTestResult nothing = runTest(
        QStringLiteral("http://127.0.0.1:%1/v1").arg(closed.port()), QStringLiteral("m"), {},
        true);
    QCOMPARE(nothing.sentence, QStringLiteral("127.0.0.1:%1 上没有服务在监听。模型服务器是否已"
                                              "启动？")
                                   .arg(closed.port()));
    m_server->enqueue(FakeResponse::models({QStringLiteral("qwen2.5:7b")}));
    m_server->enqueue(FakeResponse::error(404, QStringLiteral("not_found_error"),
                                          QStringLiteral("model not found")));
    const ConnectionTestResult unlisted = runTest(m_server->baseUrl().toString(),
                                                  QStringLiteral("llama3.1"), {}, true);
    QCOMPARE(unlisted.finding, Finding::ModelNotListed);
    QCOMPARE(unlisted.sentence,
             QStringLiteral("服务器不提供模型“llama3.1”。它提供的模型：qwen2.5:7b。"));
}

// The presets of the local servers: their usual address, no key, and their name for the
// sentence; Custom leaves the address to staff.
void tst_ConnectionTest::everyLocalPresetHasItsAddress()
{
    QHash<QString, std::pair<QString, bool>> expected{
        {QStringLiteral("Ollama (local)"), {QStringLiteral("http://127.0.0.1:11434/v1"), false}},
        {QStringLiteral("LM Studio (local)"), {QStringLiteral("http://127.0.0.1:1234/v1"), false}},
        {QStringLiteral("vLLM"), {QStringLiteral("http://127.0.0.1:8000/v1"), false}},
        {QStringLiteral("llama.cpp server"), {QStringLiteral("http://127.0.0.1:8080/v1"), false}},
        {QStringLiteral("Custom"), {QString(), true}}, // unknown: it may want one
        {QStringLiteral("OpenAI"), {QStringLiteral("https://api.openai.com/v1"), true}},
        {QStringLiteral("DeepSeek"), {QStringLiteral("https://api.deepseek.com"), true}},
    };
    int seen = 0;
    for (const ProviderPreset &preset : providerPresets()) {
        const auto it = expected.constFind(preset.name);
        if (it == expected.cend())
            continue;
        ++seen;
        QCOMPARE(preset.baseUrl, it->first);
        QCOMPARE(preset.needsKey, it->second);
        if (!preset.baseUrl.isEmpty() && !preset.needsKey) {
            QVERIFY(!preset.localServer.isEmpty());
            QCOMPARE(localServerName(preset.baseUrl), preset.localServer);
        }
    }
    QCOMPARE(seen, int(expected.size()));
    QCOMPARE(providerPresets().constLast().name, QStringLiteral("Custom"));
    QCOMPARE(localServerName(QStringLiteral("http://127.0.0.1:1234/v1")),
             QStringLiteral("LM Studio"));
    QCOMPARE(localServerName(QStringLiteral("https://api.openai.com/v1")), QString());
    QCOMPARE(localServerName(QStringLiteral("http://10.1.2.3:11434/v1")), QString());
}

QTEST_GUILESS_MAIN(tst_ConnectionTest)
#include "tst_connectiontest.moc"
