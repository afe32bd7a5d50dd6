// FallbackChatModel over scripted model doubles: which model answers, how hops and attempts are
// counted, which failures fall back and which are final, how breakers steer and learn, and
// that streamed text is never duplicated by a second model.

#include "core/llm/fallbackchatmodel.h"
#include "core/resilience/circuitbreaker.h"

#include <QLoggingCategory>
#include <QPointer>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using namespace std::chrono_literals;

namespace {

// What one scripted model does on every call: stream `deltas`, then finish with `response`
// (or, when `hang` is set, stream and then wait until aborted).
struct Script
{
    QStringList deltas;
    ChatResponse response;
    bool hang = false;
};

class ScriptedReply final : public ChatReply
{
public:
    explicit ScriptedReply(Script script)
        : m_script(std::move(script))
    {
        // Like a network reply: nothing happens before the caller is back in the event loop.
        QMetaObject::invokeMethod(this, [this] { play(); }, Qt::QueuedConnection);
    }

    void abort() override
    {
        if (isFinished())
            return;
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
                return; // aborted or deleted by a receiver
        }
        if (!m_script.hang)
            finishWith(m_script.response);
    }

    Script m_script;
};

class ScriptedModel final : public ChatModel
{
public:
    ScriptedModel(QString name, Script script)
        : m_name(std::move(name))
        , m_script(std::move(script))
    {
        if (m_script.response.model.isEmpty())
            m_script.response.model = m_name;
    }

    QString modelName() const override { return m_name; }
    ChatReply *complete(const ChatRequest &) override
    {
        ++m_calls;
        return new ScriptedReply(m_script);
    }
    int calls() const { return m_calls; }

private:
    QString m_name;
    Script m_script;
    int m_calls = 0;
};

Script answer(const QString &text, int attempts = 1, QStringList deltas = {})
{
    Script script;
    script.deltas = std::move(deltas);
    script.response.content = text;
    script.response.attempts = attempts;
    return script;
}

Script failure(const QString &code, int attempts = 1, QStringList deltas = {})
{
    Script script;
    script.deltas = std::move(deltas);
    script.response.finishReason = FinishReason::Error;
    script.response.errorCode = code;
    script.response.errorMessage = QStringLiteral("safe sentence for ") + code;
    script.response.attempts = attempts;
    return script;
}

Script hanging()
{
    Script script;
    script.hang = true;
    return script;
}

ChatRequest question()
{
    return {{ChatMessage::user(QStringLiteral("where is order A1001?"))}, {}, {}};
}

CircuitBreaker::Options breakerOptions(int minimumCalls)
{
    CircuitBreaker::Options options;
    options.windowSize = 20;
    options.minimumCalls = minimumCalls;
    options.failureRateThreshold = 0.5;
    options.openCooldown = 10s;
    return options;
}

// One call through the chain, with everything it reported.
struct Call
{
    std::unique_ptr<ChatReply> reply;
    QStringList deltas;
    int finishedCount = 0;
    bool finishedBeforeEventLoop = false;
};

std::unique_ptr<Call> start(ChatModel &model, const ChatRequest &request = question())
{
    auto call = std::make_unique<Call>();
    call->reply.reset(model.complete(request));
    Call *raw = call.get();
    QObject::connect(raw->reply.get(), &ChatReply::contentDelta, raw->reply.get(),
                     [raw](const QString &text) { raw->deltas.append(text); });
    QObject::connect(raw->reply.get(), &ChatReply::finished, raw->reply.get(),
                     [raw] { ++raw->finishedCount; });
    raw->finishedBeforeEventLoop = raw->reply->isFinished();
    return call;
}

bool finish(Call &call)
{
    if (!call.reply->isFinished()) {
        QSignalSpy spy(call.reply.get(), &ChatReply::finished);
        if (!spy.wait(5000))
            return false;
    }
    // Let anything that would (wrongly) arrive late arrive, then check it did not.
    QCoreApplication::processEvents();
    return call.finishedCount == 1;
}

} // namespace

class tst_FallbackChatModel final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void primaryAnswers();
    void providerFailureFallsBack_data();
    void providerFailureFallsBack();
    void openBreakerSkipsWithoutCalling();
    void repeatedFailuresOpenThePrimarysBreaker();
    void cancelledIsFinal();
    void abortAbortsTheCurrentModel();
    void deltasComeOnlyFromTheRelayedModel();
    void failureAfterStreamingIsFinal();
    void allFailReturnsTheLastError();
    void allBreakersOpenFinishesLater();
    void anIsolatedProviderIsSkippedWithTheLeadsWord();
    void passedTurnDeadlineStopsFallingBack();

    void exhaustedProviderIsOutForTheTurn_data();
    void exhaustedProviderIsOutForTheTurn();
    void exhaustedProviderReturnsAfterTheCooldown();
    void retriesCountOnlyRealRetries();
};

void tst_FallbackChatModel::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.*.info=false"));
}

void tst_FallbackChatModel::primaryAnswers()
{
    ScriptedModel primary(QStringLiteral("deepseek-chat"),
                          answer(QStringLiteral("On its way"), 2));
    ScriptedModel secondary(QStringLiteral("gpt-4o-mini"), answer(QStringLiteral("unused")));
    CircuitBreaker breaker(QStringLiteral("deepseek"), breakerOptions(10));
    FallbackChatModel chain({{&primary, &breaker}, {&secondary, nullptr}});
    QSignalSpy fellBack(&chain, &FallbackChatModel::fellBack);
    QCOMPARE(chain.modelName(), QStringLiteral("deepseek-chat"));

    auto call = start(chain);
    QVERIFY(!call->finishedBeforeEventLoop);
    QVERIFY(finish(*call));
    const ChatResponse &response = call->reply->response();
    QVERIFY(!response.isError());
    QCOMPARE(response.content, QStringLiteral("On its way"));
    QCOMPARE(response.model, QStringLiteral("deepseek-chat"));
    QCOMPARE(response.fallbackHops, 0);
    QCOMPARE(response.attempts, 2);
    QCOMPARE(secondary.calls(), 0);
    QCOMPARE(breaker.windowCalls(), 1);
    QCOMPARE(breaker.windowFailures(), 0);
    QCOMPARE(fellBack.count(), 0);
    QCOMPARE(chain.fallbackCount(), 0);
}

void tst_FallbackChatModel::providerFailureFallsBack_data()
{
    QTest::addColumn<QString>("code");
    QTest::addColumn<int>("primaryAttempts");
    QTest::addColumn<bool>("countsAgainstBreaker");
    QTest::addColumn<bool>("loudly");

    // The provider retried what it retries (attempts > 1); the chain never asks it again.
    QTest::newRow("unavailable") << ModelError::Unavailable << 3 << true << false;
    QTest::newRow("timeout") << ModelError::Timeout << 3 << true << false;
    QTest::newRow("rate limited") << ModelError::RateLimited << 3 << true << false;
    QTest::newRow("truncated") << ModelError::Truncated << 2 << true << false;
    QTest::newRow("invalid response") << ModelError::InvalidResponse << 1 << true << false;
    QTest::newRow("quota exhausted") << ModelError::QuotaExhausted << 1 << true << false;
    QTest::newRow("inner circuit open") << ModelError::CircuitOpen << 0 << false << false;
    QTest::newRow("auth failed") << ModelError::AuthFailed << 1 << false << true;
    QTest::newRow("bad request") << ModelError::BadRequest << 1 << false << true;
}

void tst_FallbackChatModel::providerFailureFallsBack()
{
    QFETCH(QString, code);
    QFETCH(int, primaryAttempts);
    QFETCH(bool, countsAgainstBreaker);
    QFETCH(bool, loudly);

    ScriptedModel primary(QStringLiteral("deepseek-chat"), failure(code, primaryAttempts));
    ScriptedModel secondary(QStringLiteral("gpt-4o-mini"),
                            answer(QStringLiteral("Shipped"), 1, {QStringLiteral("Shipped")}));
    ScriptedModel offline(QStringLiteral("offline-demo"), answer(QStringLiteral("unused")));
    CircuitBreaker primaryBreaker(QStringLiteral("deepseek"), breakerOptions(10));
    CircuitBreaker secondaryBreaker(QStringLiteral("openai"), breakerOptions(10));
    FallbackChatModel chain({{&primary, &primaryBreaker},
                             {&secondary, &secondaryBreaker},
                             {&offline, nullptr}});
    QSignalSpy fellBack(&chain, &FallbackChatModel::fellBack);
    QSignalSpy answered(&chain, &FallbackChatModel::answeredByFallback);
    if (loudly)
        QTest::ignoreMessage(QtWarningMsg,
                             QRegularExpression(QStringLiteral("deepseek-chat failed with ")
                                                + code + QStringLiteral(" - check its config")));

    auto call = start(chain);
    QVERIFY(finish(*call));
    const ChatResponse &response = call->reply->response();
    QVERIFY(!response.isError());
    QCOMPARE(response.content, QStringLiteral("Shipped"));
    QCOMPARE(response.model, QStringLiteral("gpt-4o-mini"));
    QCOMPARE(response.fallbackHops, 1);
    QCOMPARE(response.attempts, primaryAttempts + 1);
    QCOMPARE(call->deltas, QStringList{QStringLiteral("Shipped")});
    QCOMPARE(chain.modelName(), QStringLiteral("deepseek-chat"));
    QCOMPARE(primary.calls(), 1);
    QCOMPARE(secondary.calls(), 1);
    QCOMPARE(offline.calls(), 0);

    QCOMPARE(primaryBreaker.windowFailures(), countsAgainstBreaker ? 1 : 0);
    QCOMPARE(primaryBreaker.windowCalls(), countsAgainstBreaker ? 1 : 0);
    QCOMPARE(secondaryBreaker.windowCalls(), 1);
    QCOMPARE(secondaryBreaker.windowFailures(), 0);

    QCOMPARE(fellBack.count(), 1);
    QCOMPARE(fellBack.at(0).at(0).toString(), QStringLiteral("deepseek-chat"));
    QCOMPARE(fellBack.at(0).at(1).toString(), code);
    QCOMPARE(answered.count(), 1);
    QCOMPARE(chain.fallbackCount(), 1);
}

void tst_FallbackChatModel::openBreakerSkipsWithoutCalling()
{
    ScriptedModel primary(QStringLiteral("deepseek-chat"), answer(QStringLiteral("unused")));
    ScriptedModel offline(QStringLiteral("offline-demo"), answer(QStringLiteral("Rule-based")));
    CircuitBreaker breaker(QStringLiteral("deepseek"), breakerOptions(1));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("Closed -> Open")));
    QVERIFY(breaker.tryAcquire());
    breaker.recordFailure(5ms);
    QCOMPARE(breaker.state(), CircuitBreaker::State::Open);

    FallbackChatModel chain({{&primary, &breaker}, {&offline, nullptr}});
    QSignalSpy fellBack(&chain, &FallbackChatModel::fellBack);
    auto call = start(chain);
    QVERIFY(finish(*call));
    const ChatResponse &response = call->reply->response();
    QCOMPARE(response.content, QStringLiteral("Rule-based"));
    QCOMPARE(response.model, QStringLiteral("offline-demo"));
    QCOMPARE(response.fallbackHops, 1);
    QCOMPARE(response.attempts, 1); // nothing reached the skipped model
    QCOMPARE(primary.calls(), 0);
    QCOMPARE(breaker.rejectedCount(), 1);
    QCOMPARE(fellBack.count(), 1);
    QCOMPARE(fellBack.at(0).at(1).toString(), ModelError::CircuitOpen);
}

void tst_FallbackChatModel::repeatedFailuresOpenThePrimarysBreaker()
{
    // Once the primary's breaker has seen enough failures, later calls stop paying for it.
    ScriptedModel primary(QStringLiteral("deepseek-chat"), failure(ModelError::Unavailable, 3));
    ScriptedModel offline(QStringLiteral("offline-demo"), answer(QStringLiteral("Rule-based")));
    CircuitBreaker breaker(QStringLiteral("deepseek"), breakerOptions(2));
    FallbackChatModel chain({{&primary, &breaker}, {&offline, nullptr}});

    QList<int> attempts;
    for (int i = 0; i < 4; ++i) {
        if (i == 1)
            QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("-> Open")));
        auto call = start(chain);
        QVERIFY(finish(*call));
        QCOMPARE(call->reply->response().model, QStringLiteral("offline-demo"));
        QCOMPARE(call->reply->response().fallbackHops, 1);
        attempts.append(call->reply->response().attempts);
    }
    QCOMPARE(primary.calls(), 2);
    QCOMPARE(attempts, (QList<int>{4, 4, 1, 1}));
    QCOMPARE(breaker.state(), CircuitBreaker::State::Open);
    QCOMPARE(chain.fallbackCount(), 4);
}

void tst_FallbackChatModel::cancelledIsFinal()
{
    ScriptedModel primary(QStringLiteral("deepseek-chat"), failure(ModelError::Cancelled));
    ScriptedModel offline(QStringLiteral("offline-demo"), answer(QStringLiteral("unused")));
    CircuitBreaker breaker(QStringLiteral("deepseek"), breakerOptions(1));
    FallbackChatModel chain({{&primary, &breaker}, {&offline, nullptr}});
    auto call = start(chain);
    QVERIFY(finish(*call));
    QCOMPARE(call->reply->response().errorCode, ModelError::Cancelled);
    QCOMPARE(call->reply->response().model, QStringLiteral("deepseek-chat"));
    QCOMPARE(call->reply->response().fallbackHops, 0);
    QCOMPARE(offline.calls(), 0);
    // A cancellation says nothing about the provider: its breaker saw nothing.
    QCOMPARE(breaker.windowCalls(), 0);
    QCOMPARE(breaker.state(), CircuitBreaker::State::Closed);
}

void tst_FallbackChatModel::abortAbortsTheCurrentModel()
{
    ScriptedModel primary(QStringLiteral("deepseek-chat"), failure(ModelError::Unavailable));
    ScriptedModel secondary(QStringLiteral("gpt-4o-mini"), hanging());
    ScriptedModel offline(QStringLiteral("offline-demo"), answer(QStringLiteral("unused")));
    CircuitBreaker breaker(QStringLiteral("openai"), breakerOptions(1));
    FallbackChatModel chain({{&primary, nullptr}, {&secondary, &breaker}, {&offline, nullptr}});
    auto call = start(chain);
    QVERIFY(QTest::qWaitFor([&] { return secondary.calls() == 1; }, 5000));
    QVERIFY(!call->reply->isFinished());

    call->reply->abort();
    QVERIFY(call->reply->isFinished()); // at once, through the inner reply
    QVERIFY(finish(*call));
    QCOMPARE(call->reply->response().errorCode, ModelError::Cancelled);
    QCOMPARE(call->reply->response().model, QStringLiteral("gpt-4o-mini"));
    QCOMPARE(call->reply->response().fallbackHops, 1);
    QCOMPARE(offline.calls(), 0);
    QCOMPARE(breaker.windowCalls(), 0);
    QCOMPARE(breaker.state(), CircuitBreaker::State::Closed);
    call->reply->abort(); // idempotent
    QCOMPARE(call->finishedCount, 1);

    // Aborted before any model was asked: finished at once, nobody is called.
    ScriptedModel untouched(QStringLiteral("deepseek-chat"), answer(QStringLiteral("unused")));
    FallbackChatModel other({{&untouched, nullptr}});
    auto early = start(other);
    early->reply->abort();
    QVERIFY(finish(*early));
    QCOMPARE(early->reply->response().errorCode, ModelError::Cancelled);
    QCOMPARE(untouched.calls(), 0);
}

void tst_FallbackChatModel::deltasComeOnlyFromTheRelayedModel()
{
    ScriptedModel primary(QStringLiteral("deepseek-chat"), failure(ModelError::RateLimited, 3));
    ScriptedModel secondary(QStringLiteral("gpt-4o-mini"),
                            answer(QStringLiteral("Order A1001 shipped."), 1,
                                   {QStringLiteral("Order A1001 "), QStringLiteral("shipped.")}));
    FallbackChatModel chain({{&primary, nullptr}, {&secondary, nullptr}});
    auto call = start(chain);
    QVERIFY(finish(*call));
    QCOMPARE(call->deltas, (QStringList{"Order A1001 ", "shipped."}));
    QCOMPARE(call->reply->response().content, QStringLiteral("Order A1001 shipped."));
}

void tst_FallbackChatModel::failureAfterStreamingIsFinal()
{
    // Half an answer is on screen: another model's full answer after it would duplicate it.
    ScriptedModel primary(QStringLiteral("deepseek-chat"),
                          failure(ModelError::Truncated, 1, {QStringLiteral("Order A1001 is ")}));
    ScriptedModel offline(QStringLiteral("offline-demo"),
                          answer(QStringLiteral("Order A1001 is on its way."), 1,
                                 {QStringLiteral("Order A1001 is on its way.")}));
    CircuitBreaker breaker(QStringLiteral("deepseek"), breakerOptions(10));
    FallbackChatModel chain({{&primary, &breaker}, {&offline, nullptr}});
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("after streaming part of its answer")));
    auto call = start(chain);
    QVERIFY(finish(*call));
    QCOMPARE(call->deltas, QStringList{QStringLiteral("Order A1001 is ")});
    QCOMPARE(call->reply->response().errorCode, ModelError::Truncated);
    QCOMPARE(call->reply->response().model, QStringLiteral("deepseek-chat"));
    QCOMPARE(offline.calls(), 0);
    QCOMPARE(breaker.windowFailures(), 1); // still a provider failure
}

void tst_FallbackChatModel::allFailReturnsTheLastError()
{
    ScriptedModel primary(QStringLiteral("deepseek-chat"), failure(ModelError::Unavailable, 3));
    ScriptedModel secondary(QStringLiteral("gpt-4o-mini"), failure(ModelError::QuotaExhausted));
    ScriptedModel third(QStringLiteral("local-llama"), failure(ModelError::Timeout, 2));
    FallbackChatModel chain({{&primary, nullptr}, {&secondary, nullptr}, {&third, nullptr}});
    QSignalSpy fellBack(&chain, &FallbackChatModel::fellBack);
    auto call = start(chain);
    QVERIFY(finish(*call));
    const ChatResponse &response = call->reply->response();
    QVERIFY(response.isError());
    QCOMPARE(response.errorCode, ModelError::Timeout);
    QCOMPARE(response.errorMessage, QStringLiteral("safe sentence for ") + ModelError::Timeout);
    QCOMPARE(response.model, QStringLiteral("local-llama"));
    QCOMPARE(response.fallbackHops, 2);
    QCOMPARE(response.attempts, 3 + 1 + 2);
    QCOMPARE(fellBack.count(), 3);
    QCOMPARE(chain.fallbackCount(), 0);
}

void tst_FallbackChatModel::allBreakersOpenFinishesLater()
{
    ScriptedModel primary(QStringLiteral("deepseek-chat"), answer(QStringLiteral("unused")));
    CircuitBreaker breaker(QStringLiteral("deepseek"), breakerOptions(1));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("-> Open")));
    QVERIFY(breaker.tryAcquire());
    breaker.recordFailure(5ms);
    FallbackChatModel chain({{&primary, &breaker}});

    ChatRequest chinese = question();
    chinese.messages = {ChatMessage::user(QStringLiteral("订单 A1001 到哪了？"))};
    auto call = start(chain, chinese);
    // Even with nothing to call, finished comes from the event loop, after the caller connected.
    QVERIFY(!call->finishedBeforeEventLoop);
    QVERIFY(finish(*call));
    const ChatResponse &response = call->reply->response();
    QCOMPARE(response.errorCode, ModelError::CircuitOpen);
    QCOMPARE(response.model, QStringLiteral("deepseek-chat"));
    QCOMPARE(response.attempts, 0);
    QCOMPARE(response.fallbackHops, 0);
    QVERIFY2(response.errorMessage.contains(QStringLiteral("熔断")),
             qPrintable(response.errorMessage));
    QCOMPARE(primary.calls(), 0);
}

// A provider a lead isolated for the team (docs/TEAM.md) is skipped like an open breaker, and
// the chain's last error says it was taken offline, not that it failed.
void tst_FallbackChatModel::anIsolatedProviderIsSkippedWithTheLeadsWord()
{
    ScriptedModel primary(QStringLiteral("deepseek-chat"), answer(QStringLiteral("unused")));
    CircuitBreaker breaker(QStringLiteral("model:api.deepseek.com:443"), breakerOptions(1));
    BreakerIsolation isolation;
    isolation.dependency = QStringLiteral("model:api.deepseek.com:443");
    isolation.reason = QStringLiteral("provider outage");
    isolation.leadStaffId = QStringLiteral("L-07");
    isolation.since = QDateTime::currentDateTimeUtc();
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("isolated: by L-07")));
    breaker.setIsolation(isolation);
    FallbackChatModel chain({{&primary, &breaker}});

    auto call = start(chain, question());
    QVERIFY(finish(*call));
    const ChatResponse &response = call->reply->response();
    QCOMPARE(response.errorCode, ModelError::CircuitOpen);
    QCOMPARE(response.attempts, 0);
    QVERIFY2(response.errorMessage.contains(QStringLiteral("taken offline by the shift lead")),
             qPrintable(response.errorMessage));
    QCOMPARE(primary.calls(), 0);
    QCOMPARE(breaker.state(), CircuitBreaker::State::Closed);
}

void tst_FallbackChatModel::passedTurnDeadlineStopsFallingBack()
{
    ScriptedModel primary(QStringLiteral("deepseek-chat"), failure(ModelError::Unavailable, 3));
    ScriptedModel offline(QStringLiteral("offline-demo"), answer(QStringLiteral("unused")));
    FallbackChatModel chain({{&primary, nullptr}, {&offline, nullptr}});
    ChatRequest request = question();
    request.budget = std::make_shared<RetryBudget>(5, QDeadlineTimer(0));
    auto call = start(chain, request);
    QVERIFY(finish(*call));
    QCOMPARE(call->reply->response().errorCode, ModelError::Unavailable);
    QCOMPARE(call->reply->response().model, QStringLiteral("deepseek-chat"));
    QCOMPARE(offline.calls(), 0);
}

void tst_FallbackChatModel::exhaustedProviderIsOutForTheTurn_data()
{
    QTest::addColumn<QString>("code");
    QTest::addColumn<bool>("takenOut");     // out of the chain, also for later turns
    QTest::addColumn<bool>("spentInTurn");  // its retries ran out: not asked again this turn
    QTest::newRow("quota") << ModelError::QuotaExhausted << true << false;
    QTest::newRow("credentials") << ModelError::AuthFailed << true << false;
    QTest::newRow("endpoint moved") << ModelError::EndpointMoved << true << false;
    QTest::newRow("unavailable") << ModelError::Unavailable << false << true;
    QTest::newRow("timeout") << ModelError::Timeout << false << true;
    QTest::newRow("stream truncated") << ModelError::Truncated << false << true;
    QTest::newRow("bad request") << ModelError::BadRequest << false << false;
}

// The tool round and the answer round of one turn share its budget: after a quota or a
// credential failure in the first, or a provider failure that ended its retries, the second
// does not ask that provider again. A bad request says nothing about the provider: asked again.
void tst_FallbackChatModel::exhaustedProviderIsOutForTheTurn()
{
    QFETCH(QString, code);
    QFETCH(bool, takenOut);
    QFETCH(bool, spentInTurn);
    ScriptedModel primary(QStringLiteral("deepseek-v4-flash"), failure(code));
    ScriptedModel secondary(QStringLiteral("offline"), answer(QStringLiteral("From the rules")));
    CircuitBreaker breaker(QStringLiteral("deepseek"), breakerOptions(10));
    FallbackChatModel chain({{&primary, &breaker}, {&secondary, nullptr}});
    QSignalSpy fellBack(&chain, &FallbackChatModel::fellBack);
    if (!spentInTurn && code != ModelError::QuotaExhausted) {
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("failed with ")));
    }
    if (takenOut)
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("taken out")));

    ChatRequest turn = question();
    turn.budget = std::make_shared<RetryBudget>(4, QDeadlineTimer(60000));
    for (int round = 0; round < 2; ++round) {
        auto call = start(chain, turn);
        QVERIFY(finish(*call));
        QVERIFY(!call->reply->response().isError());
        QCOMPARE(call->reply->response().model, QStringLiteral("offline"));
        QCOMPARE(call->reply->response().fallbackHops, 1);
    }
    QCOMPARE(primary.calls(), takenOut || spentInTurn ? 1 : 2);
    QCOMPARE(secondary.calls(), 2);
    QCOMPARE(fellBack.size(), 2); // passed over both times, with its own failure
    QCOMPARE(fellBack.at(1).at(1).toString(), code);
    QCOMPARE(chain.isTakenOut(0, turn.budget), takenOut);
    QCOMPARE(chain.isSpentInTurn(0, turn.budget), spentInTurn);
    // Another turn (another budget) asks a provider that is only spent for its turn.
    ChatRequest nextTurn = question();
    nextTurn.budget = std::make_shared<RetryBudget>(4, QDeadlineTimer(60000));
    auto next = start(chain, nextTurn);
    QVERIFY(finish(*next));
    QCOMPARE(primary.calls(), takenOut ? 1 : (spentInTurn ? 2 : 3));
}

void tst_FallbackChatModel::exhaustedProviderReturnsAfterTheCooldown()
{
    qint64 now = 1000;
    ScriptedModel primary(QStringLiteral("deepseek-v4-flash"), failure(ModelError::QuotaExhausted));
    ScriptedModel secondary(QStringLiteral("offline"), answer(QStringLiteral("From the rules")));
    CircuitBreaker breaker(QStringLiteral("deepseek"), breakerOptions(10)); // 10 s cool-down
    FallbackChatModel chain({{&primary, &breaker}, {&secondary, nullptr}});
    chain.setClock([&now] { return now; });
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("taken out")));

    const auto turn = [] {
        ChatRequest request = question();
        request.budget = std::make_shared<RetryBudget>(4, QDeadlineTimer(60000));
        return request;
    };
    ChatRequest first = turn();
    QVERIFY(finish(*start(chain, first)));
    QCOMPARE(primary.calls(), 1);

    now += 9999; // another turn inside the cool-down: still out
    ChatRequest second = turn();
    QVERIFY(finish(*start(chain, second)));
    QCOMPARE(primary.calls(), 1);
    QVERIFY(chain.isTakenOut(0, second.budget));

    now += 1; // past it: a new turn asks it again; the first turn still never does
    ChatRequest third = turn();
    QVERIFY(!chain.isTakenOut(0, third.budget));
    QVERIFY(chain.isTakenOut(0, first.budget));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("taken out")));
    QVERIFY(finish(*start(chain, third)));
    QCOMPARE(primary.calls(), 2);
}

// model_retry_count: a model that needed 3 attempts retried twice; moving on to the next
// model is a fallback (fallback_model_count), not a retry.
void tst_FallbackChatModel::retriesCountOnlyRealRetries()
{
    Script primaryScript = failure(ModelError::Unavailable, 3);
    primaryScript.response.retries = 2;
    ScriptedModel primary(QStringLiteral("deepseek-v4-flash"), primaryScript);
    ScriptedModel secondary(QStringLiteral("gpt-4o-mini"), failure(ModelError::Timeout, 1));
    Script lastScript = answer(QStringLiteral("From the rules"), 1);
    ScriptedModel last(QStringLiteral("offline"), lastScript);
    FallbackChatModel chain({{&primary, nullptr}, {&secondary, nullptr}, {&last, nullptr}});
    auto call = start(chain);
    QVERIFY(finish(*call));
    const ChatResponse &response = call->reply->response();
    QCOMPARE(response.attempts, 5);
    QCOMPARE(response.retries, 2);
    QCOMPARE(response.fallbackHops, 2);
}

QTEST_GUILESS_MAIN(tst_FallbackChatModel)
#include "tst_fallbackchatmodel.moc"
