#include "core/llm/chatcompletionparser.h"
#include "core/http/ssestream.h"

#include <QTest>

using namespace AgentConsole;
using Outcome = Internal::ChatCompletionRead::Outcome;

// The reading of a server's chat completion text, apart from the transport (the provider's
// suites test the same through the wire): what each kind of text comes to.
class tst_ChatCompletionParser : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void bodyOutcome_data();
    void bodyOutcome();
    void streamAssemblesInterleavedToolCalls();
    void streamEventOutcome_data();
    void streamEventOutcome();
    void unreadable_data();
    void unreadable();
};

void tst_ChatCompletionParser::bodyOutcome_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("outcome");
    QTest::addColumn<QString>("content");
    QTest::newRow("text") << QByteArray(R"({"choices":[{"message":{"content":"hi"},)"
                                        R"("finish_reason":"stop"}]})")
                          << int(Outcome::Read) << "hi";
    QTest::newRow("NUL dropped")
        << QByteArray(R"({"choices":[{"message":{"content":"a\u0000b"}}]})") << int(Outcome::Read)
        << "ab";
    QTest::newRow("not JSON") << QByteArray("<html>") << int(Outcome::Unparseable) << "";
    QTest::newRow("error object") << QByteArray(R"({"error":{"code":"x"}})")
                                  << int(Outcome::ErrorObject) << "";
    QTest::newRow("no message") << QByteArray(R"({"choices":[{}]})") << int(Outcome::Malformed)
                                << "";
    QTest::newRow("content of another type")
        << QByteArray(R"({"choices":[{"message":{"content":1}}]})") << int(Outcome::Malformed)
        << "";
    QTest::newRow("tool_calls not an array")
        << QByteArray(R"({"choices":[{"message":{"tool_calls":{}}}]})")
        << int(Outcome::Malformed) << "";
}

void tst_ChatCompletionParser::bodyOutcome()
{
    QFETCH(QByteArray, body);
    QFETCH(int, outcome);
    QFETCH(QString, content);
    Internal::ChatCompletionMessage message;
    const Internal::ChatCompletionRead read = Internal::readCompletionBody(body, &message);
    QCOMPARE(int(read.outcome), outcome);
    QCOMPARE(read.outcome == Outcome::Malformed, !read.detail.isEmpty());
    QCOMPARE(message.content, content);
}

void tst_ChatCompletionParser::streamAssemblesInterleavedToolCalls()
{
    const QList<QByteArray> chunks{
        R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a",)"
        R"("function":{"name":"q1"}}]}}]})",
        R"({"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"name":"q2"}}]}}]})",
        R"({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]})",
        R"({"choices":[{"delta":{},"finish_reason":"tool_calls"}]})",
    };
    Internal::ChatCompletionMessage message;
    for (const QByteArray &chunk : chunks)
        QCOMPARE(Internal::readStreamEvent({{}, chunk}, &message).outcome, Outcome::Read);
    QCOMPARE(Internal::readStreamEvent({{}, " [DONE] "}, &message).outcome, Outcome::Done);
    const QList<ModelToolCall> calls = message.toolCalls.calls();
    QCOMPARE(calls.size(), 2);
    QCOMPARE(calls.at(0), (ModelToolCall{"a", "q1", "{}"}));
    QCOMPARE(calls.at(1), (ModelToolCall{"call_1", "q2", ""})); // no id given: one is made
    QCOMPARE(message.finishReason, QStringLiteral("tool_calls"));
    QVERIFY(Internal::unreadableReason(message).isEmpty());
}

void tst_ChatCompletionParser::streamEventOutcome_data()
{
    QTest::addColumn<QByteArray>("event");
    QTest::addColumn<QByteArray>("data");
    QTest::addColumn<int>("outcome");
    QTest::newRow("ping") << QByteArray("ping") << QByteArray("{}") << int(Outcome::Ignored);
    QTest::newRow("error event") << QByteArray("error") << QByteArray("{}")
                                 << int(Outcome::ErrorEvent);
    QTest::newRow("error object") << QByteArray() << QByteArray(R"({"error":{}})")
                                  << int(Outcome::ErrorObject);
    QTest::newRow("not JSON") << QByteArray("message") << QByteArray("{")
                              << int(Outcome::Unparseable);
    QTest::newRow("usage only") << QByteArray() << QByteArray(R"({"usage":{}})")
                                << int(Outcome::Read);
    QTest::newRow("index out of range")
        << QByteArray() << QByteArray(R"({"choices":[{"delta":{"tool_calls":[{"index":4096}]}}]})")
        << int(Outcome::Malformed);
}

void tst_ChatCompletionParser::streamEventOutcome()
{
    QFETCH(QByteArray, event);
    QFETCH(QByteArray, data);
    QFETCH(int, outcome);
    Internal::ChatCompletionMessage message;
    QCOMPARE(int(Internal::readStreamEvent({event, data}, &message).outcome), outcome);
}

void tst_ChatCompletionParser::unreadable_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("readable");
    QTest::newRow("text") << QByteArray(R"({"choices":[{"message":{"content":"x"}}]})") << true;
    QTest::newRow("blanks only") << QByteArray(R"({"choices":[{"message":{"content":" \n"}}]})")
                                 << false;
    QTest::newRow("a refusal without text")
        << QByteArray(R"({"choices":[{"message":{},"finish_reason":"content_filter"}]})") << true;
    QTest::newRow("tool_calls without calls")
        << QByteArray(R"({"choices":[{"message":{"content":"x"},"finish_reason":"tool_calls"}]})")
        << false;
    QTest::newRow("a call without a name")
        << QByteArray(R"({"choices":[{"message":{"tool_calls":[{"function":{"name":" "}}]}}]})")
        << false;
}

void tst_ChatCompletionParser::unreadable()
{
    QFETCH(QByteArray, body);
    QFETCH(bool, readable);
    Internal::ChatCompletionMessage message;
    QCOMPARE(Internal::readCompletionBody(body, &message).outcome, Outcome::Read);
    QCOMPARE(Internal::unreadableReason(message).isEmpty(), readable);
}

QTEST_GUILESS_MAIN(tst_ChatCompletionParser)
#include "tst_chatcompletionparser.moc"
