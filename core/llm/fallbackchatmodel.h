#pragma once

#include "chatmodel.h"

#include <QList>
#include <QPointer>

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
//  - AuthFailed, BadRequest: the next model too — a misconfigured primary must not leave staff
//    without answers — but logged as a warning, since someone has to fix the configuration.
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
// over (fallbackHops) and sums the attempts of every model asked (attempts). When every model
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
    // fallback_model_count: answers given by a model other than the primary.
    int fallbackCount() const { return m_fallbackCount; }

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

    QList<Entry> m_chain;
    int m_fallbackCount = 0;
};

} // namespace AgentConsole
