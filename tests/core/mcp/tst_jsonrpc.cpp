#include "core/http/ssestream.h"
#include "core/mcp/jsonrpc.h"

#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Mcp;

class tst_JsonRpc : public QObject
{
    Q_OBJECT

private slots:
    void kinds_data();
    void kinds();
    void refused_data();
    void refused();
    void roundTrip();
    void sseIdAndRetry();
};

void tst_JsonRpc::kinds_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("count");
    using K = JsonRpcMessage::Kind;
    QTest::newRow("request") << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":"ping"})") << int(K::Request) << 1;
    QTest::newRow("string id") << QByteArray(R"({"jsonrpc":"2.0","id":"a","method":"ping","params":{}})") << int(K::Request) << 1;
    QTest::newRow("notification") << QByteArray(R"({"jsonrpc":"2.0","method":"notifications/x"})") << int(K::Notification) << 1;
    QTest::newRow("result") << QByteArray(R"({"jsonrpc":"2.0","id":7,"result":{}})") << int(K::Result) << 1;
    QTest::newRow("null result") << QByteArray(R"({"jsonrpc":"2.0","id":7,"result":null})") << int(K::Result) << 1;
    QTest::newRow("error") << QByteArray(R"({"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}})") << int(K::Error) << 1;
    QTest::newRow("error null id") << QByteArray(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}})") << int(K::Error) << 1;
    QTest::newRow("batch") << QByteArray(R"([{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n"}])") << int(K::Result) << 2;
}

void tst_JsonRpc::kinds()
{
    QFETCH(QByteArray, frame);
    QFETCH(int, kind);
    QFETCH(int, count);
    const ParsedFrame parsed = parseFrame(frame);
    QVERIFY2(!parsed.error.isError(), qPrintable(parsed.error.describe()));
    QCOMPARE(parsed.messages.size(), count);
    QCOMPARE(int(parsed.messages.first().kind), kind);
}

void tst_JsonRpc::refused_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<Failure>("failure");
    QTest::newRow("not json") << QByteArray("hello") << Failure::Malformed;
    QTest::newRow("truncated") << QByteArray(R"({"jsonrpc":"2.0","id":1,"res)") << Failure::Malformed;
    QTest::newRow("empty") << QByteArray() << Failure::Malformed;
    QTest::newRow("scalar") << QByteArray("42") << Failure::Malformed;
    QTest::newRow("no version") << QByteArray(R"({"id":1,"result":{}})") << Failure::Malformed;
    QTest::newRow("version 1") << QByteArray(R"({"jsonrpc":"1.0","id":1,"result":{}})") << Failure::Malformed;
    QTest::newRow("both") << QByteArray(R"({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}})") << Failure::Malformed;
    QTest::newRow("neither") << QByteArray(R"({"jsonrpc":"2.0","id":1})") << Failure::Malformed;
    QTest::newRow("fraction id") << QByteArray(R"({"jsonrpc":"2.0","id":1.5,"result":{}})") << Failure::Malformed;
    QTest::newRow("object id") << QByteArray(R"({"jsonrpc":"2.0","id":{},"result":{}})") << Failure::Malformed;
    QTest::newRow("no result id") << QByteArray(R"({"jsonrpc":"2.0","result":{}})") << Failure::Malformed;
    QTest::newRow("method number") << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":5})") << Failure::Malformed;
    QTest::newRow("params array") << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":"m","params":[1]})") << Failure::Malformed;
    QTest::newRow("error no code") << QByteArray(R"({"jsonrpc":"2.0","id":1,"error":{"message":"x"}})") << Failure::Malformed;
    QTest::newRow("empty batch") << QByteArray("[]") << Failure::Malformed;
    QTest::newRow("batch of numbers") << QByteArray("[1,2]") << Failure::Malformed;
    QTest::newRow("deep") << (QByteArray(200, '[') + QByteArray(200, ']')) << Failure::Oversized;
    QTest::newRow("huge") << QByteArray(5 * 1024 * 1024, ' ') << Failure::Oversized;
}

void tst_JsonRpc::refused()
{
    QFETCH(QByteArray, frame);
    QFETCH(Failure, failure);
    const ParsedFrame parsed = parseFrame(frame);
    QCOMPARE(parsed.error.failure, failure);
    QVERIFY(parsed.messages.isEmpty());
    QVERIFY(!parsed.error.detail.isEmpty());
}

void tst_JsonRpc::roundTrip()
{
    const JsonRpcMessage request = JsonRpcMessage::request(3, QStringLiteral("tools/call"),
                                                           {{QStringLiteral("name"), QStringLiteral("x")}});
    const ParsedFrame parsed = parseFrame(request.toBytes());
    QCOMPARE(parsed.messages.size(), 1);
    QCOMPARE(parsed.messages.first().id.toInteger(), 3);
    QCOMPARE(parsed.messages.first().method, QStringLiteral("tools/call"));
    const ParsedFrame error = parseFrame(JsonRpcMessage::errorFor(3, -32601, QStringLiteral("no")).toBytes());
    QCOMPARE(error.messages.first().errorCode, -32601);
}

void tst_JsonRpc::sseIdAndRetry()
{
    SseStream stream;
    QCOMPARE(stream.retryMs(), -1);
    const SseChunk chunk = stream.feed("id: event-1\nretry: 500\ndata: \n\n");
    QCOMPARE(chunk.events.size(), 1);
    QCOMPARE(stream.lastEventId(), QByteArray("event-1"));
    QCOMPARE(stream.retryMs(), 500);
    stream.feed("retry: 5x\nid: event-2\ndata: {}\n\n");
    QCOMPARE(stream.retryMs(), 500); // not digits: ignored
    QCOMPARE(stream.lastEventId(), QByteArray("event-2"));
}

QTEST_GUILESS_MAIN(tst_JsonRpc)
#include "tst_jsonrpc.moc"
