#pragma once

#include "chatmodel.h"

#include <QElapsedTimer>
#include <QList>
#include <QPointer>

#include <functional>
#include <memory>

namespace AgentConsole {

class CircuitBreaker;
namespace Internal {
class FallbackReply;
}

// The model fallback chain (DESIGN.md, "Circuit breakers, fallbacks, metrics"): primary
// provider -> secondary -> ... -> the offline demo model last. A call goes to the first model
// whose breaker admits it; when that model fails for a reason another model may not share, the
// next one is asked. Each model keeps its own retries (the model layer); the chain never asks
// the same model twice in one call.
//
//  - Unavailable, Timeout, RateLimited, Truncated, InvalidResponse, QuotaExhausted, CircuitOpen
//    (and codes this class does not know): the next model is asked at once. The provider has
//    already retried what was worth retrying, and QuotaExhausted is not worth it at all.
//  - QuotaExhausted, AuthFailed, EndpointMoved: the next model, and the provider is taken out
//    of the chain: it is not asked again in the same turn (the same ChatRequest::budget), nor
//    by any turn until its breaker's cool-down has passed (Options::openCooldown; one minute
//    without a breaker). A settings change builds a new chain, which starts with none taken
//    out. While out, the provider is passed over with its failure, as if it had answered so.
//  - A provider failure (unavailable, timeout, rate limited, a broken stream or answer) comes
//    after the provider's own retries ran out: the next model, and the provider is not asked
//    again in the same turn (the same ChatRequest::budget; the answer round goes straight to
//    the next model), though the next turn asks it again. One retry series per provider per
//    turn: a dead provider costs staff one wait, not one per model request.
//  - AuthFailed, BadRequest, EndpointMoved: the next model too — a misconfigured primary must
//    not leave staff without answers — but logged as a warning, since someone has to fix the
//    configuration.
//  - Cancelled: final.
//  - A model that already streamed text and then failed is final as well: its half answer is
//    on screen, and another model's full answer after it would duplicate and contradict it.
//    Only the model whose reply is being relayed streams; nothing is buffered.
//
// Breakers: a model's breaker is asked before the call (open: skipped without calling it) and
// told how it went: provider failures (unavailable, timeouts, rate limits, quota, broken
// streams) count against it; AuthFailed, BadRequest and cancellations give the permission back,
// since they say nothing about the provider's health.
//
// A fallback only chooses which model answers. It never skips confirmation or permission
// checks: tool calls of any model go through the agent loop and the ToolExecutor like those of
// the primary, with the same trusted context, validation and confirmation of writes.
//
// The response names the model that answered (ChatResponse::model), counts the models passed
// over (fallbackHops), sums the attempts of every model asked (attempts) and the real retries
// of each (retries: moving to the next model is not a retry). When every model
// fails, the last failure is returned. The turn's deadline (ChatRequest::budget) is respected:
// once it has passed no further model is asked. Models and breakers are not owned; one that
// is destroyed is skipped.
class FallbackChatModel final : public ChatModel
{
    Q_OBJECT

public:
    struct Link
    {
        ChatModel *model = nullptr;
        CircuitBreaker *breaker = nullptr; // the provider's; may be null
    };

    explicit FallbackChatModel(const QList<Link> &chain, QObject *parent = nullptr);

    QString modelName() const override; // the primary's
    ChatReply *complete(const ChatRequest &request) override;

    int chainLength() const { return int(m_chain.size()); }
    // A monotonic clock in milliseconds for the time a provider stays out; injectable so that
    // tests need not wait out a cool-down.
    void setClock(std::function<qint64()> nowMs);
    // Whether the provider at `index` is out of the chain for a call of this turn.
    bool isTakenOut(int index, const RetryBudgetPtr &turn) const;
    // Whether the provider at `index` ran out of retries earlier in this turn.
    bool isSpentInTurn(int index, const RetryBudgetPtr &turn) const;
    // fallback_model_count: answers given by a model other than the primary.
    int fallbackCount() const { return m_fallbackCount; }

    // Which providers are out of the chain and until when, to be put back later (a scenario
    // run starts from a chain with none out and leaves the staff member's as it found it).
    // Opaque; restore() takes one from this chain only (a default one: none out).
    struct OutOfChain
    {
        QList<qint64> untilMs;
        QList<ChatResponse> failures;
    };
    OutOfChain outOfChain() const;
    void restoreOutOfChain(const OutOfChain &state);

Q_SIGNALS:
    // A model failed (or was skipped) and the next one is asked.
    void fellBack(const QString &fromModel, const QString &errorCode);
    // A call was answered by a model other than the primary.
    void answeredByFallback(const QString &model, int hops);

private:
    struct Entry
    {
        QPointer<ChatModel> model;
        QPointer<CircuitBreaker> breaker;
    };
    friend class Internal::FallbackReply;

    // A provider out of the chain after a quota, credential or endpoint failure.
    struct TakenOut
    {
        ChatResponse failure; // what it answered, repeated while it is out
        qint64 untilMs = -1; // -1: not out
        std::weak_ptr<RetryBudget> turn; // the turn in which it failed
    };
    void takeOut(int index, const ChatResponse &failure, const RetryBudgetPtr &turn);
    // A provider whose retries ran out in a turn: passed over for the rest of that turn.
    struct SpentInTurn
    {
        ChatResponse failure; // what it answered, repeated for the rest of the turn
        std::weak_ptr<RetryBudget> turn; // the turn in which its retries ran out
    };
    void spendForTurn(int index, const ChatResponse &failure, const RetryBudgetPtr &turn);

    QList<Entry> m_chain;
    QList<TakenOut> m_takenOut; // one per link of m_chain
    QList<SpentInTurn> m_spent; // one per link of m_chain
    QElapsedTimer m_clock;
    std::function<qint64()> m_now;
    int m_fallbackCount = 0;
};

} // namespace AgentConsole
