// What the model layer's facts do to a whole turn (issue #8): DeepSeek's thinking-mode rule
// met across the tool round and the answer round, reasoning kept in checkpoints (old ones
// still load), an answer cut off at the output limit marked as such, a provider out of quota
// not asked again in the same turn, and model_retry_count counting real retries only.
#include "agentdoubles.h"
#include "fakeopenaiserver.h"

#include "core/turn/agentloop.h"
#include "core/turn/turncheckpoint.h"
#include "core/ledger/turnjournal.h"
#include "core/llm/fallbackchatmodel.h"
#include "core/support/offlinedemomodel.h"
#include "core/llm/openaicompatiblemodel.h"
#include "core/resilience/toolexecutor.h"
#include "core/tools/toolregistry.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

const QString OrderArgs = QStringLiteral("{\"orderId\":\"A1001\"}");

FakeResponse answerStream(const QString &text, const QString &finish = QStringLiteral("stop"))
{
    return FakeResponse::events({{Sse::content(text), 0},
                                 {Sse::finish(finish), 1},
                                 {Sse::done(), 0}});
}

} // namespace

class tst_ModelTurn final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void thinkingModeRuleIsMetAcrossRounds();
    void longThinkingIsShownBounded();
    void reasoningSurvivesACheckpoint();
    void oldCheckpointWithoutReasoningLoads();
    void cutOffAnswerIsMarked();
    void exhaustedProviderIsNotAskedAgainInTheTurn();
    void retriesCountedApartFromFallbacks();
    void deadProviderIsAskedOneSeriesPerTurn();

private:
    OpenAiConfig config() const;
    TurnResult runTurn(ChatModel *model, const QString &question = QStringLiteral(
                                             "Where is order A1001?"));

    std::unique_ptr<FakeOpenAiServer> m_server;
    std::unique_ptr<ToolRegistry> m_registry;
    std::unique_ptr<ToolExecutor> m_executor;
    std::shared_ptr<FunctionTool> m_orderTool;
};

void tst_ModelTurn::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.*=false"));
}

void tst_ModelTurn::init()
{
    m_server = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_server->listen());
    m_registry = std::make_unique<ToolRegistry>();
    for (const char *name : {"queryOrderStatus", "queryLogistics", "queryInventory"}) {
        auto tool = std::make_shared<FunctionTool>(
            QString::fromLatin1(name), false, [](const AttemptContext &) {
                return AttemptResult::completed(ToolResult::ok(
                    QStringLiteral("found"),
                    QJsonObject{{QStringLiteral("status"), QStringLiteral("SHIPPED")}}));
            });
        if (qstrcmp(name, "queryOrderStatus") == 0)
            m_orderTool = tool;
        m_registry->add(tool);
    }
    m_executor = std::make_unique<ToolExecutor>();
}

void tst_ModelTurn::cleanup()
{
    m_executor.reset();
    m_registry.reset();
    m_server.reset();
}

OpenAiConfig tst_ModelTurn::config() const
{
    OpenAiConfig config;
    config.baseUrl = m_server->rootUrl(); // DeepSeek serves at its root
    config.model = QStringLiteral("deepseek-v4-flash");
    config.apiKey = QStringLiteral("sk-test");
    config.connectTimeoutMs = 3000;
    config.idleTimeoutMs = 3000;
    config.initialBackoffMs = 10;
    config.retryAfterCapMs = 50;
    return config;
}

TurnResult tst_ModelTurn::runTurn(ChatModel *model, const QString &question)
{
    AgentLoop loop({.model = model, .tools = m_registry.get(), .executor = m_executor.get()});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    if (loop.ask(question).isEmpty() || !finished.wait(20000))
        return {};
    return finished.first().first().value<TurnResult>();
}

// The fake server answers 400 the way DeepSeek does when a request after a tool-call answer
// lacks that answer's reasoning_content. Before the fix every such turn failed in its answer
// round.
void tst_ModelTurn::thinkingModeRuleIsMetAcrossRounds()
{
    m_server->requireReasoningBack(true);
    FakeResponse toolRound = FakeResponse::events(
        {{Sse::reasoning(QStringLiteral("The staff member wants A1001. ")), 0},
         {Sse::reasoning(QStringLiteral("Look it up.")), 1},
         {Sse::toolCall(0, QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"),
                        OrderArgs), 1},
         {Sse::finish(QStringLiteral("tool_calls")), 1},
         {Sse::done(), 0}});
    toolRound.issuedReasoning = QStringLiteral("The staff member wants A1001. Look it up.");
    m_server->enqueue(toolRound);
    FakeResponse answerRound = FakeResponse::events(
        {{Sse::reasoning(QStringLiteral("It shipped.")), 0},
         {Sse::content(QStringLiteral("Order A1001 has shipped.")), 1},
         {Sse::finish(QStringLiteral("stop")), 1},
         {Sse::done(), 0}});
    m_server->enqueue(answerRound);

    OpenAiCompatibleModel remote(config());
    const TurnResult turn = runTurn(&remote);
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(turn.answer, QStringLiteral("Order A1001 has shipped."));
    QCOMPARE(m_server->reasoningRefusals(), 0);
    QCOMPARE(m_server->requestCount(), 2);
    QCOMPARE(m_orderTool->runs.load(), 1);
    // Thinking is exposed apart from the answer, never in it.
    QCOMPARE(turn.reasoning, QStringLiteral("The staff member wants A1001. Look it up.\n\n"
                                            "It shipped."));
    QVERIFY(!turn.answer.contains(QLatin1String("Look it up")));
    // The answer round carried it back on the assistant message with the tool call.
    const QJsonArray sent =
        m_server->requests().at(1).json.value(QLatin1String("messages")).toArray();
    int carried = 0;
    for (const QJsonValue &message : sent) {
        if (message.toObject().contains(QLatin1String("tool_calls"))) {
            QCOMPARE(message.toObject().value(QLatin1String("reasoning_content")).toString(),
                     toolRound.issuedReasoning);
            ++carried;
        }
    }
    QCOMPARE(carried, 1);
}

void tst_ModelTurn::reasoningSurvivesACheckpoint()
{
    TurnCheckpoint checkpoint;
    checkpoint.stage = TurnStage::ToolsExecuted;
    checkpoint.userId = QStringLiteral("u-1");
    checkpoint.tenantId = QStringLiteral("t-1");
    checkpoint.conversationId = QStringLiteral("c-1");
    ChatMessage assistant = ChatMessage::assistant(
        QString(), {{QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"), OrderArgs}});
    assistant.reasoningContent = QStringLiteral("Need the order.");
    assistant.reasoningOrigin = QStringLiteral("0123456789abcdef");
    checkpoint.conversation = {ChatMessage::user(QStringLiteral("Where is A1001?")), assistant};
    checkpoint.result.requestId = QStringLiteral("r-1");
    checkpoint.result.question = QStringLiteral("Where is A1001?");
    checkpoint.result.modelCalls = 2;
    checkpoint.result.modelAttempts = 5;
    checkpoint.result.modelRetryCount = 1;
    checkpoint.result.answerCutOff = true;
    checkpoint.result.reasoning = QStringLiteral("Need the order.");

    QString error;
    const std::optional<TurnCheckpoint> loaded =
        TurnCheckpoint::fromEntry(checkpoint.toEntry(), &error);
    QVERIFY2(loaded, qPrintable(error));
    QCOMPARE(loaded->conversation.at(1).reasoningContent, assistant.reasoningContent);
    QCOMPARE(loaded->conversation.at(1).reasoningOrigin, assistant.reasoningOrigin);
    QCOMPARE(loaded->conversation.at(0).reasoningContent, QString());
    QCOMPARE(loaded->result.modelRetries(), 1);
    QVERIFY(loaded->result.answerCutOff);
    QCOMPARE(loaded->result.reasoning, checkpoint.result.reasoning);
}

// A checkpoint written before reasoning and real retry counts were kept.
void tst_ModelTurn::oldCheckpointWithoutReasoningLoads()
{
    TurnCheckpoint checkpoint;
    checkpoint.stage = TurnStage::AnswerGenerating;
    checkpoint.userId = QStringLiteral("u-1");
    checkpoint.tenantId = QStringLiteral("t-1");
    checkpoint.conversation = {ChatMessage::user(QStringLiteral("Where is A1001?")),
                               ChatMessage::assistant(
                                   QString(), {{QStringLiteral("c1"),
                                                QStringLiteral("queryOrderStatus"), OrderArgs}})};
    checkpoint.result.requestId = QStringLiteral("r-old");
    checkpoint.result.question = QStringLiteral("Where is A1001?");
    checkpoint.result.modelCalls = 1;
    checkpoint.result.modelAttempts = 3;
    JournalEntry entry = checkpoint.toEntry();
    for (const char *key : {"modelRetries", "answerCutOff", "reasoning"})
        entry.state.remove(QLatin1String(key));
    // Messages without reasoning are stored as they always were.
    for (const QJsonValue &message : entry.state.value(QLatin1String("conversation")).toArray())
        QVERIFY(!message.toObject().contains(QLatin1String("reasoningContent")));
    QString error;
    const std::optional<TurnCheckpoint> loaded = TurnCheckpoint::fromEntry(entry, &error);
    QVERIFY2(loaded, qPrintable(error));
    QCOMPARE(loaded->conversation.size(), 2);
    QVERIFY(loaded->conversation.at(1).reasoningContent.isEmpty());
    QVERIFY(!loaded->result.answerCutOff);
    QCOMPARE(loaded->result.modelRetries(), 2); // as it was counted then
}

// A model that thinks for megabytes: all of it goes back to the provider with the
// conversation, but what the turn keeps for the window is bounded.
void tst_ModelTurn::longThinkingIsShownBounded()
{
    QList<FakeChunk> chunks{{Sse::role()}};
    for (int i = 0; i < 8; ++i)
        chunks.append({Sse::reasoning(QString(32 * 1024, QLatin1Char('a' + i)))});
    chunks.append({Sse::content(QStringLiteral("Hello."))});
    chunks.append({Sse::finish(QStringLiteral("stop"))});
    chunks.append({Sse::done()});
    m_server->enqueue(FakeResponse::events(chunks));
    OpenAiCompatibleModel remote(config());
    const TurnResult turn = runTurn(&remote, QStringLiteral("hello"));
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(turn.answer, QStringLiteral("Hello."));
    QVERIFY2(turn.reasoning.size() < AgentLoop::maxShownReasoning + 64,
             qPrintable(QString::number(turn.reasoning.size())));
    QVERIFY(turn.reasoning.startsWith(QString(32 * 1024, QLatin1Char('a'))));
    QVERIFY(turn.reasoning.endsWith(QStringLiteral("(the rest is not shown)")));
}

void tst_ModelTurn::cutOffAnswerIsMarked()
{
    m_server->enqueue(answerStream(QStringLiteral("Hello, I can help with orders, but"),
                                   QStringLiteral("length")));
    OpenAiCompatibleModel remote(config());
    const TurnResult turn = runTurn(&remote, QStringLiteral("hello"));
    QCOMPARE(turn.status, TurnStatus::Completed);
    QVERIFY(turn.answerCutOff);
    QCOMPARE(turn.answer, QStringLiteral("Hello, I can help with orders, but"));
    QCOMPARE(turn.toJson().value(QLatin1String("answerCutOff")).toBool(), true);

    m_server->enqueue(answerStream(QStringLiteral("Hello.")));
    const TurnResult whole = runTurn(&remote, QStringLiteral("hello"));
    QVERIFY(!whole.answerCutOff);
    QCOMPARE(whole.toJson().value(QLatin1String("answerCutOff")).toBool(true), false);
}

// Before the fix the answer round asked the exhausted provider again.
void tst_ModelTurn::exhaustedProviderIsNotAskedAgainInTheTurn()
{
    m_server->enqueue(FakeResponse::error(402, QStringLiteral("insufficient_balance"),
                                          QStringLiteral("Insufficient Balance")));
    m_server->enqueue(answerStream(QStringLiteral("must not be asked for")));
    OpenAiCompatibleModel remote(config());
    OfflineDemoModel offline;
    FallbackChatModel chain({{&remote, nullptr}, {&offline, nullptr}});
    const TurnResult turn = runTurn(&chain);
    QCOMPARE(turn.status, TurnStatus::Completed);
    QVERIFY(!turn.answer.isEmpty());
    QCOMPARE(m_server->requestCount(), 1);
    QCOMPARE(turn.modelCalls, 2);    // the tool round and the answer round
    QCOMPARE(turn.fallbackHops, 2);  // both answered by the offline model
    QCOMPARE(turn.modelRetries(), 0); // nothing was retried
    QCOMPARE(turn.counters().value(QLatin1String("model_retry_count")).toInt(), 0);
    QCOMPARE(turn.counters().value(QLatin1String("fallback_model_count")).toInt(), 2);
}

void tst_ModelTurn::retriesCountedApartFromFallbacks()
{
    // The tool round: one 503, then the plan. The answer round: 503 twice (all attempts of a
    // two-attempt provider), then the offline model answers.
    m_server->enqueue(FakeResponse::error(503, QStringLiteral("overloaded"), QString()));
    m_server->enqueue(FakeResponse::events(
        {{Sse::toolCall(0, QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"),
                        OrderArgs), 0},
         {Sse::finish(QStringLiteral("tool_calls")), 1},
         {Sse::done(), 0}}));
    m_server->enqueue(FakeResponse::error(503, QStringLiteral("overloaded"), QString()));
    m_server->enqueue(FakeResponse::error(503, QStringLiteral("overloaded"), QString()));
    OpenAiConfig twoAttempts = config();
    twoAttempts.maxAttempts = 2;
    OpenAiCompatibleModel remote(twoAttempts);
    OfflineDemoModel offline;
    FallbackChatModel chain({{&remote, nullptr}, {&offline, nullptr}});
    const TurnResult turn = runTurn(&chain);
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(m_server->requestCount(), 4);
    QCOMPARE(turn.modelCalls, 2);
    QCOMPARE(turn.modelAttempts, 5); // 2 + 2 remote, 1 offline
    QCOMPARE(turn.modelRetries(), 2); // one in each round; the fallback is not one
    QCOMPARE(turn.fallbackHops, 1);
}

// A provider answering 503 to everything (issue #23 §1): its three attempts in the tool round
// run out, the offline model plans the lookup and, in the answer round, answers without the
// provider being asked again (before: three more requests and the staff member's second
// wait). The next turn asks it again.
void tst_ModelTurn::deadProviderIsAskedOneSeriesPerTurn()
{
    for (int i = 0; i < 12; ++i)
        m_server->enqueue(FakeResponse::error(503, QStringLiteral("overloaded"), QString()));
    OpenAiCompatibleModel remote(config()); // three attempts in all
    OfflineDemoModel offline;
    FallbackChatModel chain({{&remote, nullptr}, {&offline, nullptr}});
    QSignalSpy fellBack(&chain, &FallbackChatModel::fellBack);

    const TurnResult turn = runTurn(&chain);
    QCOMPARE(turn.status, TurnStatus::Completed);
    QVERIFY(!turn.toolCalls.isEmpty()); // a turn that used tools
    QVERIFY(!turn.answer.isEmpty());
    QCOMPARE(m_server->requestCount(), 3);
    QCOMPARE(turn.modelCalls, 2);
    QCOMPARE(turn.modelAttempts, 5);  // 3 remote, then 1 offline in each round
    QCOMPARE(turn.modelRetries(), 2); // the one series
    QCOMPARE(turn.fallbackHops, 2);   // both rounds answered by the offline model
    QCOMPARE(turn.counters().value(QLatin1String("fallback_model_count")).toInt(), 2);
    // Each round says why it fell back: the provider's own failure, not a new one.
    QCOMPARE(fellBack.size(), 2);
    QCOMPARE(fellBack.at(1).at(1).toString(), QStringLiteral("MODEL_UNAVAILABLE"));

    const TurnResult next = runTurn(&chain);
    QCOMPARE(next.status, TurnStatus::Completed);
    QCOMPARE(m_server->requestCount(), 6); // a new turn gives it its one series again
}

QTEST_GUILESS_MAIN(tst_ModelTurn)
#include "tst_modelturn.moc"
