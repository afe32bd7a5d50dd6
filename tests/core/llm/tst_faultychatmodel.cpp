// FaultyChatModel over a scripted model double: every model fault of a fault plan (latency,
// unavailable, rate limits retried as the provider retries them, quota, unreadable answers,
// stalled streams, rewritten tool calls), read from LiveFaults at every call, for the primary
// or the secondary provider, with abort() ending the call at every stage.

#include "core/llm/fallbackchatmodel.h"
#include "core/llm/faultychatmodel.h"
#include "core/llm/openaicompatiblemodel.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QPointer>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace AgentConsole;

namespace {

struct Script
{
    QStringList deltas;
    ChatResponse response;
    bool hang = false; // streams its deltas, then waits until aborted
};

class ScriptedReply final : public ChatReply
{
public:
    ScriptedReply(Script script, int *aborts)
        : m_script(std::move(script))
        , m_aborts(aborts)
    {
        // Like a network reply: nothing happens before the caller is back in the event loop.
        QMetaObject::invokeMethod(this, [this] { play(); }, Qt::QueuedConnection);
    }

    void abort() override
    {
        if (isFinished())
            return;
        ++*m_aborts;
        ChatResponse response;
        response.model = m_script.response.model;
        response.finishReason = FinishReason::Error;
        response.errorCode = ModelError::Cancelled;
        finishWith(response);
    }

private:
    void play()
    {
        const QPointer<ScriptedReply> self(this);
        for (const QString &delta : std::as_const(m_script.deltas)) {
            Q_EMIT contentDelta(delta);
            if (!self || isFinished())
                return;
        }
        if (!isFinished() && !m_script.hang)
            finishWith(m_script.response);
    }

    Script m_script;
    int *m_aborts;
};

class ScriptedModel final : public ChatModel
{
public:
    explicit ScriptedModel(Script script)
        : m_script(std::move(script))
    {
        m_script.response.model = modelName();
    }

    QString modelName() const override { return QStringLiteral("scripted"); }
    ChatReply *complete(const ChatRequest &) override
    {
        ++calls;
        return new ScriptedReply(m_script, &aborts);
    }

    int calls = 0;
    int aborts = 0;

private:
    Script m_script;
};

Script textAnswer()
{
    Script script;
    script.deltas = {QStringLiteral("Hello"), QStringLiteral(", world")};
    script.response.content = QStringLiteral("Hello, world");
    return script;
}

Script toolCallAnswer()
{
    Script script;
    script.response.finishReason = FinishReason::ToolCalls;
    script.response.toolCalls = {{QStringLiteral("call-1"), QStringLiteral("queryLogistics"),
                                  QStringLiteral(R"({"orderId":"A1001"})")},
                                 {QStringLiteral("call-2"), QStringLiteral("queryInventory"),
                                  QStringLiteral(R"({"sku":"SKU-100"})")}};
    return script;
}

ChatRequest request(const QString &question = QStringLiteral("Where is order A1001?"),
                    RetryBudgetPtr budget = {})
{
    ChatRequest made;
    made.messages = {ChatMessage::user(question)};
    ToolDescriptor logistics;
    logistics.name = QStringLiteral("queryLogistics");
    ToolDescriptor inventory;
    inventory.name = QStringLiteral("queryInventory");
    made.tools = {logistics, inventory};
    made.budget = std::move(budget);
    return made;
}

std::shared_ptr<LiveFaults> faultsWith(const QByteArray &json)
{
    QString error;
    const auto plan = FaultPlan::fromJson(json, &error);
    if (!plan)
        qFatal("bad plan in the test: %s", qPrintable(error));
    return std::make_shared<LiveFaults>(*plan);
}

// Fast figures for the test: waits of tens of milliseconds instead of seconds.
FaultyChatModel::ProviderTiming fastTiming(int retryAfterCapMs = 20'000, int stallMs = 100)
{
    OpenAiConfig config;
    config.retryAfterCapMs = retryAfterCapMs;
    config.idleTimeoutMs = stallMs;
    return FaultyChatModel::ProviderTiming::of(config);
}

struct Finished
{
    ChatResponse response;
    QStringList deltas;
    qint64 elapsedMs = 0;
};

Finished runToEnd(ChatModel &model, const ChatRequest &call = request())
{
    QElapsedTimer clock;
    clock.start();
    std::unique_ptr<ChatReply> reply(model.complete(call));
    QStringList deltas;
    QObject::connect(reply.get(), &ChatReply::contentDelta,
                     [&deltas](const QString &text) { deltas << text; });
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    if (!reply->isFinished() && !finished.wait(10'000))
        qFatal("the model call did not finish");
    return {reply->response(), deltas, clock.elapsed()};
}

} // namespace

class tst_FaultyChatModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void withoutAFaultTheCallPassesThrough();
    void latencyComesFirstAndAbortEndsIt();
    void failuresGivenUpAtOnce_data();
    void failuresGivenUpAtOnce();
    void rateLimitsAreRetriedLikeTheProvider_data();
    void rateLimitsAreRetriedLikeTheProvider();
    void retryAfterIsCappedByTheProvider();
    void theTurnsBudgetHasTheLastWord();
    void theTurnsDeadlineHasTheLastWord();
    void abortDuringTheRetryWait();
    void malformedResponse();
    void stalledStreamRelaysItsFirstChunkThenTimesOut();
    void stalledStreamWithoutText();
    void abortDuringAStall();
    void abortWhileRelaying();
    void toolCallsAreRewritten_data();
    void toolCallsAreRewritten();
    void textAnswersAreNotRewritten();
    void thePlanIsReadAtEveryCall();
    void eachProviderHasItsOwnFault();
    void quotaOfThePrimaryFallsBack();
    void providerTimingFollowsTheConfig();
    void destroyedInnerModelIsUnavailable();
};

void tst_FaultyChatModel::withoutAFaultTheCallPassesThrough()
{
    ScriptedModel inner(textAnswer());
    // An entry without effects is no fault either.
    FaultyChatModel model(&inner, faultsWith(R"({"model": {}})"));
    QCOMPARE(model.modelName(), QStringLiteral("scripted"));
    const Finished done = runToEnd(model);
    QVERIFY(!done.response.isError());
    QCOMPARE(done.response.content, QStringLiteral("Hello, world"));
    QCOMPARE(done.deltas, textAnswer().deltas);
    QCOMPARE(done.response.attempts, 1);
    QCOMPARE(inner.calls, 1);
}

void tst_FaultyChatModel::latencyComesFirstAndAbortEndsIt()
{
    ScriptedModel inner(textAnswer());
    FaultyChatModel model(&inner, faultsWith(R"({"model": {"latencyMs": 60}})"));
    const Finished done = runToEnd(model);
    QVERIFY(!done.response.isError());
    QVERIFY2(done.elapsedMs >= 60, qPrintable(QString::number(done.elapsedMs)));
    QCOMPARE(inner.calls, 1);

    FaultyChatModel slow(&inner, faultsWith(R"({"model": {"latencyMs": 600000}})"));
    std::unique_ptr<ChatReply> reply(slow.complete(request()));
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    reply->abort();
    QCOMPARE(finished.size(), 1);
    QCOMPARE(reply->response().errorCode, ModelError::Cancelled);
    QCOMPARE(inner.calls, 1); // never asked
}

void tst_FaultyChatModel::failuresGivenUpAtOnce_data()
{
    QTest::addColumn<QByteArray>("fault");
    QTest::addColumn<QString>("question");
    QTest::addColumn<QString>("code");
    QTest::newRow("unavailable") << QByteArray(R"({"unavailable": true})")
                                 << "Where is order A1001?" << ModelError::Unavailable;
    QTest::newRow("unavailable, in Chinese")
        << QByteArray(R"({"unavailable": true})") << "订单 A1001 到哪了？"
        << ModelError::Unavailable;
    QTest::newRow("quota exhausted") << QByteArray(R"({"quotaExhausted": true})")
                                     << "Where is order A1001?" << ModelError::QuotaExhausted;
    QTest::newRow("quota exhausted, in Chinese")
        << QByteArray(R"({"quotaExhausted": true})") << "订单 A1001 到哪了？"
        << ModelError::QuotaExhausted;
    // Down wins over everything else; quota over the rate limit, never retried.
    QTest::newRow("unavailable before quota")
        << QByteArray(R"({"unavailable": true, "quotaExhausted": true})")
        << "Where is order A1001?" << ModelError::Unavailable;
    QTest::newRow("quota before the rate limit")
        << QByteArray(R"({"quotaExhausted": true, "rateLimited": 2})")
        << "Where is order A1001?" << ModelError::QuotaExhausted;
}

void tst_FaultyChatModel::failuresGivenUpAtOnce()
{
    QFETCH(QByteArray, fault);
    QFETCH(QString, question);
    QFETCH(QString, code);
    ScriptedModel inner(textAnswer());
    FaultyChatModel model(&inner, faultsWith(R"({"model": )" + fault + "}"));
    model.setTiming(fastTiming());
    const auto budget = std::make_shared<RetryBudget>(5);
    const Finished done = runToEnd(model, request(question, budget));
    QVERIFY(done.response.isError());
    QCOMPARE(done.response.errorCode, code);
    QCOMPARE(done.response.errorMessage,
             ModelError::message(code, languageOf(question)));
    QCOMPARE(done.response.model, QStringLiteral("scripted"));
    QCOMPARE(done.response.attempts, 1);
    QCOMPARE(done.response.retries, 0);
    QCOMPARE(budget->used(RetryBudget::Layer::Model), 0);
    QCOMPARE(inner.calls, 0);
    QVERIFY(done.deltas.isEmpty());
}

void tst_FaultyChatModel::rateLimitsAreRetriedLikeTheProvider_data()
{
    QTest::addColumn<int>("rateLimited");
    QTest::addColumn<QString>("code"); // empty: answered
    QTest::addColumn<int>("attempts");
    QTest::addColumn<int>("innerCalls");
    QTest::newRow("one 429, then the answer") << 1 << QString() << 2 << 1;
    QTest::newRow("two 429s, then the answer") << 2 << QString() << 3 << 1;
    // The provider makes three attempts in all: a third 429 is its last.
    QTest::newRow("as many 429s as attempts") << 3 << ModelError::RateLimited << 3 << 0;
    QTest::newRow("more 429s than attempts") << 50 << ModelError::RateLimited << 3 << 0;
}

void tst_FaultyChatModel::rateLimitsAreRetriedLikeTheProvider()
{
    QFETCH(int, rateLimited);
    QFETCH(QString, code);
    QFETCH(int, attempts);
    QFETCH(int, innerCalls);
    ScriptedModel inner(textAnswer());
    FaultyChatModel model(
        &inner, faultsWith(QStringLiteral(R"({"model": {"rateLimited": %1, "retryAfterMs": 40}})")
                               .arg(rateLimited)
                               .toUtf8()));
    model.setTiming(fastTiming());
    const auto budget = std::make_shared<RetryBudget>(10);
    const Finished done = runToEnd(model, request(QStringLiteral("Where is A1001?"), budget));
    QCOMPARE(done.response.errorCode, code);
    QCOMPARE(done.response.attempts, attempts);
    QCOMPARE(done.response.retries, attempts - 1); // model_retry_count
    QCOMPARE(budget->used(RetryBudget::Layer::Model), attempts - 1);
    QCOMPARE(budget->used(RetryBudget::Layer::Tool), 0);
    QCOMPARE(inner.calls, innerCalls);
    // Every retry waited out the Retry-After.
    QVERIFY2(done.elapsedMs >= 40 * (attempts - 1), qPrintable(QString::number(done.elapsedMs)));
    if (code.isEmpty()) {
        QCOMPARE(done.response.content, QStringLiteral("Hello, world"));
    } else {
        QCOMPARE(done.response.errorMessage,
                 ModelError::message(ModelError::RateLimited, Language::English));
    }
}

void tst_FaultyChatModel::retryAfterIsCappedByTheProvider()
{
    ScriptedModel inner(textAnswer());
    // A Retry-After of an hour, a provider that waits at most 30 ms.
    FaultyChatModel model(&inner,
                          faultsWith(R"({"model": {"rateLimited": 1, "retryAfterMs": 3600000}})"));
    model.setTiming(fastTiming(30));
    const Finished done = runToEnd(model);
    QVERIFY(!done.response.isError());
    QCOMPARE(done.response.attempts, 2);
    QVERIFY2(done.elapsedMs >= 30 && done.elapsedMs < 5'000,
             qPrintable(QString::number(done.elapsedMs)));
}

void tst_FaultyChatModel::theTurnsBudgetHasTheLastWord()
{
    ScriptedModel inner(textAnswer());
    FaultyChatModel model(&inner,
                          faultsWith(R"({"model": {"rateLimited": 2, "retryAfterMs": 10}})"));
    model.setTiming(fastTiming());
    // One retry left in the turn: the second 429 is the last.
    const auto budget = std::make_shared<RetryBudget>(1);
    const Finished done = runToEnd(model, request(QStringLiteral("Where is A1001?"), budget));
    QCOMPARE(done.response.errorCode, ModelError::RateLimited);
    QCOMPARE(done.response.attempts, 2);
    QCOMPARE(budget->used(RetryBudget::Layer::Model), 1);
    QCOMPARE(budget->remaining(), 0);
    QCOMPARE(inner.calls, 0);
}

void tst_FaultyChatModel::theTurnsDeadlineHasTheLastWord()
{
    ScriptedModel inner(textAnswer());
    FaultyChatModel model(&inner,
                          faultsWith(R"({"model": {"rateLimited": 1, "retryAfterMs": 10000}})"));
    model.setTiming(fastTiming());
    // The turn ends in 3 s: a wait of 10 s would pass it, so no retry starts (and nothing
    // waits for the deadline either).
    const auto budget = std::make_shared<RetryBudget>(5, QDeadlineTimer(3000));
    const Finished done = runToEnd(model, request(QStringLiteral("Where is A1001?"), budget));
    QCOMPARE(done.response.errorCode, ModelError::RateLimited);
    QCOMPARE(done.response.attempts, 1);
    QCOMPARE(budget->used(RetryBudget::Layer::Model), 0);
    QVERIFY2(done.elapsedMs < 3000, qPrintable(QString::number(done.elapsedMs)));
    QCOMPARE(inner.calls, 0);
}

void tst_FaultyChatModel::abortDuringTheRetryWait()
{
    ScriptedModel inner(textAnswer());
    FaultyChatModel model(&inner,
                          faultsWith(R"({"model": {"rateLimited": 1, "retryAfterMs": 600000}})"));
    const auto budget = std::make_shared<RetryBudget>(5);
    std::unique_ptr<ChatReply> reply(
        model.complete(request(QStringLiteral("Where is A1001?"), budget)));
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    // The retry is taken from the budget when the wait begins.
    QTRY_COMPARE(budget->used(RetryBudget::Layer::Model), 1);
    QVERIFY(finished.isEmpty());
    reply->abort();
    QCOMPARE(finished.size(), 1);
    QCOMPARE(reply->response().errorCode, ModelError::Cancelled);
    QCOMPARE(reply->response().attempts, 1);
    QCOMPARE(inner.calls, 0);
}

void tst_FaultyChatModel::malformedResponse()
{
    ScriptedModel inner(textAnswer());
    FaultyChatModel model(&inner, faultsWith(R"({"model": {"malformedResponse": true,
                                                           "rateLimited": 1,
                                                           "retryAfterMs": 5}})"));
    model.setTiming(fastTiming());
    const Finished done = runToEnd(model, request(QStringLiteral("订单 A1001 的物流？")));
    QCOMPARE(done.response.errorCode, ModelError::InvalidResponse);
    QCOMPARE(done.response.errorMessage,
             ModelError::message(ModelError::InvalidResponse, Language::Chinese));
    QCOMPARE(done.response.attempts, 2); // the 429, then the unreadable answer
    QCOMPARE(inner.calls, 0);
}

void tst_FaultyChatModel::stalledStreamRelaysItsFirstChunkThenTimesOut()
{
    ScriptedModel inner(textAnswer());
    FaultyChatModel model(&inner, faultsWith(R"({"model": {"streamStall": true}})"));
    model.setTiming(fastTiming(20'000, 80));
    const Finished done = runToEnd(model);
    QCOMPARE(done.deltas, QStringList{QStringLiteral("Hello")});
    QCOMPARE(done.response.errorCode, ModelError::Timeout);
    QCOMPARE(done.response.errorMessage,
             ModelError::message(ModelError::Timeout, Language::English));
    QVERIFY2(done.elapsedMs >= 80, qPrintable(QString::number(done.elapsedMs)));
    QCOMPARE(inner.calls, 1);
}

void tst_FaultyChatModel::stalledStreamWithoutText()
{
    ScriptedModel inner(toolCallAnswer());
    FaultyChatModel model(&inner, faultsWith(R"({"model": {"streamStall": true}})"));
    model.setTiming(fastTiming(20'000, 50));
    const Finished done = runToEnd(model);
    QVERIFY(done.deltas.isEmpty());
    QCOMPARE(done.response.errorCode, ModelError::Timeout);
    QVERIFY(done.response.toolCalls.isEmpty()); // the calls never arrived
}

void tst_FaultyChatModel::abortDuringAStall()
{
    ScriptedModel inner(textAnswer());
    FaultyChatModel model(&inner, faultsWith(R"({"model": {"streamStall": true}})"));
    model.setTiming(fastTiming(20'000, 600'000));
    std::unique_ptr<ChatReply> reply(model.complete(request()));
    QSignalSpy deltas(reply.get(), &ChatReply::contentDelta);
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    QVERIFY(deltas.wait(10'000));
    QVERIFY(finished.isEmpty());
    reply->abort();
    QCOMPARE(finished.size(), 1);
    QCOMPARE(reply->response().errorCode, ModelError::Cancelled);
    QCOMPARE(deltas.size(), 1);
}

void tst_FaultyChatModel::abortWhileRelaying()
{
    // The inner model streams, then waits: aborting the call aborts it.
    Script script = textAnswer();
    script.hang = true;
    ScriptedModel inner(script);
    FaultyChatModel model(&inner, faultsWith(R"({"model": {"unknownTool": true}})"));
    std::unique_ptr<ChatReply> reply(model.complete(request()));
    QSignalSpy deltas(reply.get(), &ChatReply::contentDelta);
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    QTRY_COMPARE(deltas.size(), 2);
    QCOMPARE(inner.calls, 1);
    QVERIFY(finished.isEmpty());
    reply->abort();
    QCOMPARE(inner.aborts, 1);
    QCOMPARE(finished.size(), 1);
    QCOMPARE(reply->response().errorCode, ModelError::Cancelled);
}

void tst_FaultyChatModel::toolCallsAreRewritten_data()
{
    QTest::addColumn<QByteArray>("fault");
    QTest::addColumn<int>("calls");
    QTest::addColumn<bool>("knownNames");
    QTest::addColumn<bool>("jsonArguments");
    QTest::newRow("malformed arguments") << QByteArray(R"({"malformedToolArguments": true})")
                                         << 2 << true << false;
    QTest::newRow("unknown tool") << QByteArray(R"({"unknownTool": true})") << 2 << false << true;
    QTest::newRow("burst of 12") << QByteArray(R"({"toolCallBurst": 12})") << 12 << true << true;
    QTest::newRow("burst of 1") << QByteArray(R"({"toolCallBurst": 1})") << 1 << true << true;
    QTest::newRow("all three") << QByteArray(R"({"toolCallBurst": 3, "unknownTool": true,
                                                 "malformedToolArguments": true})")
                               << 3 << false << false;
}

void tst_FaultyChatModel::toolCallsAreRewritten()
{
    QFETCH(QByteArray, fault);
    QFETCH(int, calls);
    QFETCH(bool, knownNames);
    QFETCH(bool, jsonArguments);
    ScriptedModel inner(toolCallAnswer());
    FaultyChatModel model(&inner, faultsWith(R"({"model": )" + fault + "}"));
    const Finished done = runToEnd(model);
    QVERIFY(!done.response.isError());
    QCOMPARE(done.response.finishReason, FinishReason::ToolCalls);
    QCOMPARE(done.response.toolCalls.size(), calls);
    QSet<QString> ids;
    for (const ModelToolCall &call : done.response.toolCalls) {
        ids.insert(call.id);
        const bool known = call.name == QLatin1String("queryLogistics")
            || call.name == QLatin1String("queryInventory");
        QCOMPARE(known, knownNames);
        QJsonParseError error;
        QJsonDocument::fromJson(call.arguments.toUtf8(), &error);
        QCOMPARE(error.error == QJsonParseError::NoError, jsonArguments);
        QVERIFY(!call.arguments.isEmpty());
    }
    QCOMPARE(ids.size(), calls); // every call keeps an id of its own
    if (fault.contains("toolCallBurst")) {
        // The first call, repeated.
        QCOMPARE(done.response.toolCalls.first().id, QStringLiteral("call-1"));
        for (const ModelToolCall &call : done.response.toolCalls)
            QCOMPARE(call.name, done.response.toolCalls.first().name);
    }
}

void tst_FaultyChatModel::textAnswersAreNotRewritten()
{
    ScriptedModel inner(textAnswer());
    FaultyChatModel model(&inner, faultsWith(R"({"model": {"toolCallBurst": 9,
        "unknownTool": true, "malformedToolArguments": true}})"));
    const Finished done = runToEnd(model);
    QVERIFY(!done.response.isError());
    QVERIFY(done.response.toolCalls.isEmpty());
    QCOMPARE(done.response.content, QStringLiteral("Hello, world"));
    QCOMPARE(done.deltas, textAnswer().deltas);
}

void tst_FaultyChatModel::thePlanIsReadAtEveryCall()
{
    ScriptedModel inner(textAnswer());
    const auto faults = faultsWith(R"({"model": {"unavailable": true}})");
    FaultyChatModel model(&inner, faults);
    QCOMPARE(runToEnd(model).response.errorCode, ModelError::Unavailable);
    faults->clear();
    QVERIFY(!runToEnd(model).response.isError());
    faults->set(*FaultPlan::fromJson(R"({"model": {"quotaExhausted": true}})", nullptr));
    QCOMPARE(runToEnd(model).response.errorCode, ModelError::QuotaExhausted);
    // A call keeps the fault it started with.
    std::unique_ptr<ChatReply> running(model.complete(request()));
    faults->clear();
    QSignalSpy finished(running.get(), &ChatReply::finished);
    QVERIFY(finished.wait(10'000));
    QCOMPARE(running->response().errorCode, ModelError::QuotaExhausted);
}

void tst_FaultyChatModel::eachProviderHasItsOwnFault()
{
    ScriptedModel first(textAnswer());
    ScriptedModel second(textAnswer());
    const auto faults = faultsWith(R"({"models": {"secondary": {"unavailable": true}}})");
    FaultyChatModel primary(&first, faults, FaultPlan::Provider::Primary);
    FaultyChatModel secondary(&second, faults, FaultPlan::Provider::Secondary);
    QCOMPARE(secondary.provider(), FaultPlan::Provider::Secondary);
    QVERIFY(!runToEnd(primary).response.isError());
    QCOMPARE(runToEnd(secondary).response.errorCode, ModelError::Unavailable);
    // "model" is the primary's.
    faults->set(*FaultPlan::fromJson(R"({"model": {"unavailable": true}})", nullptr));
    QCOMPARE(runToEnd(primary).response.errorCode, ModelError::Unavailable);
    QVERIFY(!runToEnd(secondary).response.isError());
}

void tst_FaultyChatModel::quotaOfThePrimaryFallsBack()
{
    ScriptedModel first(textAnswer());
    ScriptedModel second(textAnswer());
    const auto faults = faultsWith(R"({"model": {"quotaExhausted": true}})");
    FaultyChatModel primary(&first, faults, FaultPlan::Provider::Primary);
    FallbackChatModel chain({{&primary, nullptr}, {&second, nullptr}});
    const Finished done = runToEnd(chain);
    QVERIFY(!done.response.isError());
    QCOMPARE(done.response.fallbackHops, 1);
    QCOMPARE(first.calls, 0);
    QCOMPARE(second.calls, 1);
}

void tst_FaultyChatModel::providerTimingFollowsTheConfig()
{
    OpenAiConfig config;
    config.maxAttempts = 5;
    config.retryAfterCapMs = 1234;
    config.idleTimeoutMs = 4321;
    const auto timing = FaultyChatModel::ProviderTiming::of(config);
    QCOMPARE(timing.retry.maxAttempts(), 5);
    QCOMPARE(timing.retry.serverDelayCap(), RetryPolicy::Millis(1234));
    QCOMPARE(timing.stallTimeoutMs, 4321);
    const auto standIn = FaultyChatModel::ProviderTiming::standIn();
    QCOMPARE(standIn.retry.maxAttempts(), OpenAiConfig().maxAttempts);
    QCOMPARE(standIn.retry.serverDelayCap(), RetryPolicy::Millis(OpenAiConfig().retryAfterCapMs));
    QCOMPARE(standIn.stallTimeoutMs, 3000);
}

void tst_FaultyChatModel::destroyedInnerModelIsUnavailable()
{
    auto inner = std::make_unique<ScriptedModel>(textAnswer());
    FaultyChatModel model(inner.get(), faultsWith("{}"));
    inner.reset();
    const Finished done = runToEnd(model);
    QCOMPARE(done.response.errorCode, ModelError::Unavailable);
}

QTEST_GUILESS_MAIN(tst_FaultyChatModel)
#include "tst_faultychatmodel.moc"
