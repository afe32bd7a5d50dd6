#include "fallbackchatmodel.h"

#include "../resilience/circuitbreaker.h"
#include "../telemetry/logging.h"

#include <QElapsedTimer>

#include <optional>

namespace AgentConsole {
namespace {

using Millis = std::chrono::milliseconds;

bool isChineseQuestion(const ChatRequest &request)
{
    return questionLanguage(request) == Language::Chinese;
}

ChatResponse errorResponse(const QString &model, const QString &code, const QString &message)
{
    ChatResponse response;
    response.model = model;
    response.finishReason = FinishReason::Error;
    response.errorCode = code;
    response.errorMessage = message;
    response.attempts = 0; // nothing reached the model
    return response;
}

// Failures that no retry and no wait of seconds can cure: the provider is taken out.
bool takesProviderOut(const QString &code)
{
    const ModelError::Row *row = ModelError::find(code);
    return row && row->takesProviderOut;
}

// Without a breaker, a provider taken out stays out this long.
constexpr qint64 DefaultTakenOutMs = 60000;

// Failures that say the provider cannot serve right now: they count against its breaker.
bool isProviderFailure(const QString &code)
{
    const ModelError::Row *row = ModelError::find(code);
    return row && row->providerFailure;
}

// Failures that point at the model's configuration rather than at its health.
bool isConfigurationFailure(const QString &code)
{
    const ModelError::Row *row = ModelError::find(code);
    return row && row->configuration;
}

} // namespace

namespace Internal {

// Relays one model of the chain at a time; see FallbackChatModel.
class FallbackReply final : public ChatReply
{
public:
    FallbackReply(FallbackChatModel *owner, const ChatRequest &request)
        : m_owner(owner)
        , m_chain(owner->m_chain)
        , m_request(request)
        , m_chinese(isChineseQuestion(request))
    {
        // Like every reply, nothing is reported before the caller is back in the event loop,
        // even when every breaker is open and no model is called at all.
        QMetaObject::invokeMethod(
            this, [this] { askNext(); }, Qt::QueuedConnection);
    }

    void abort() override
    {
        if (isFinished())
            return;
        m_aborted = true;
        if (ChatReply *inner = m_inner) {
            inner->abort(); // finishes it, which finishes this reply through onInnerFinished
            if (isFinished())
                return;
            // An inner reply that did not finish when aborted is dropped rather than waited
            // for: abort() must end the call.
            drop(inner);
            if (CircuitBreaker *breaker = m_chain.at(m_current).breaker)
                breaker->release();
        }
        finishFinal(errorResponse(nameAt(std::max(0, m_current)), ModelError::Cancelled,
                                  m_chinese ? QStringLiteral("模型调用已取消。")
                                            : QStringLiteral("The model call was cancelled.")),
                    std::max(0, m_current));
    }

private:
    QString nameAt(int index) const
    {
        const ChatModel *model = index < m_chain.size() ? m_chain.at(index).model : nullptr;
        return model ? model->modelName() : QString();
    }

    QString circuitOpenMessage() const
    {
        return m_chinese ? QStringLiteral("模型服务当前不可用（已熔断），请稍后重试。")
                         : QStringLiteral("The model service is known to be unavailable right "
                                          "now. Please try again later.");
    }

    // A provider a shift lead took offline for the team (docs/TEAM.md).
    QString isolatedMessage() const
    {
        return m_chinese ? QStringLiteral("该模型服务已被值班主管暂时下线（隔离），请稍后重试。")
                         : QStringLiteral("The model service was taken offline by the shift "
                                          "lead (isolated). Please try again later.");
    }

    bool turnDeadlinePassed() const
    {
        return m_request.budget && m_request.budget->deadline().hasExpired();
    }

    void askNext()
    {
        if (isFinished())
            return;
        while (m_next < m_chain.size()) {
            const int index = m_next++;
            if (index > 0 && turnDeadlinePassed()) {
                qCInfo(lcLlm) << "model fallback stopped: the turn's deadline has passed";
                break;
            }
            const FallbackChatModel::Entry &entry = m_chain.at(index);
            ChatModel *model = entry.model;
            if (!model)
                continue; // destroyed since the chain was built
            if (m_owner && m_owner->isTakenOut(index, m_request.budget)) {
                qCInfo(lcLlm).noquote()
                    << "model" << model->modelName() << "skipped: out of the chain after"
                    << m_owner->m_takenOut.at(index).failure.errorCode;
                ChatResponse failure = m_owner->m_takenOut.at(index).failure;
                failure.attempts = 0; // nothing reached it this time
                failure.retries = 0;
                passOver(index, failure);
                continue;
            }
            if (m_owner && m_owner->isSpentInTurn(index, m_request.budget)) {
                ChatResponse failure = m_owner->m_spent.at(index).failure;
                qCInfo(lcLlm).noquote() << "model" << model->modelName()
                                        << "skipped: its retries ran out earlier in this turn ("
                                        << failure.errorCode << ")";
                failure.attempts = 0; // nothing reached it this time
                failure.retries = 0;
                passOver(index, failure);
                continue;
            }
            if (entry.breaker && !entry.breaker->tryAcquire()) {
                const bool isolated = entry.breaker->isIsolated();
                qCInfo(lcLlm).noquote()
                    << "model" << model->modelName()
                    << "skipped:" << (isolated ? "isolated by a lead" : "its circuit is open");
                passOver(index,
                         errorResponse(model->modelName(), ModelError::CircuitOpen,
                                       isolated ? isolatedMessage() : circuitOpenMessage()));
                continue;
            }
            start(index, model);
            return;
        }
        if (m_lastError) {
            finishFinal(*m_lastError, m_lastErrorIndex);
            return;
        }
        finishFinal(errorResponse(QString(), ModelError::Unavailable,
                                  m_chinese ? QStringLiteral("没有可用的模型。")
                                            : QStringLiteral("No model is available.")),
                    0);
    }

    void start(int index, ChatModel *model)
    {
        m_current = index;
        m_streamed = false;
        m_clock.start();
        ChatReply *reply = model->complete(m_request);
        Q_ASSERT(reply);
        reply->setParent(this);
        m_inner = reply;
        // Only the relayed reply's text reaches the caller; a dropped one is disconnected.
        connect(reply, &ChatReply::contentDelta, this, [this](const QString &text) {
            m_streamed = true;
            Q_EMIT contentDelta(text);
        });
        connect(reply, &ChatReply::retrying, this, &ChatReply::retrying);
        connect(reply, &ChatReply::finished, this, [this, reply] { onInnerFinished(reply); });
        if (reply->isFinished()) { // it finished inside complete(), before anyone listened
            onInnerFinished(reply);
            return;
        }
        // Last: a receiver may abort this reply.
        if (index > 0)
            Q_EMIT fallingBack(model->modelName());
    }

    void drop(ChatReply *reply)
    {
        reply->disconnect(this);
        reply->deleteLater();
        if (m_inner == reply)
            m_inner = nullptr;
    }

    void onInnerFinished(ChatReply *reply)
    {
        if (reply != m_inner)
            return;
        const ChatResponse response = reply->response();
        drop(reply);
        m_attempts += response.attempts;
        m_retries += response.retries;
        const QString modelName = nameAt(m_current);
        CircuitBreaker *breaker = m_chain.at(m_current).breaker;
        const Millis took{m_clock.elapsed()};

        if (!response.isError()) {
            if (breaker)
                breaker->recordSuccess(took);
            finishFinal(response, m_current);
            return;
        }
        const QString &code = response.errorCode;
        if (breaker) {
            if (!m_aborted && isProviderFailure(code))
                breaker->recordFailure(took);
            else
                breaker->release();
        }
        if (m_aborted || code == ModelError::Cancelled) {
            finishFinal(response, m_current);
            return;
        }
        if (m_streamed) {
            qCWarning(lcLlm).noquote()
                << "model" << modelName << "failed with" << code
                << "after streaming part of its answer; not falling back, so that no"
                << "second answer follows the first one's beginning";
            finishFinal(response, m_current);
            return;
        }
        if (takesProviderOut(code) && m_owner)
            m_owner->takeOut(m_current, response, m_request.budget);
        else if (isProviderFailure(code) && m_owner)
            m_owner->spendForTurn(m_current, response, m_request.budget);
        if (isConfigurationFailure(code)) {
            qCWarning(lcLlm).noquote()
                << "model" << modelName << "failed with" << code
                << "- check its configuration (key, model name, endpoint); falling back";
        } else {
            qCInfo(lcLlm).noquote()
                << "model" << modelName << "failed with" << code << "; falling back";
        }
        passOver(m_current, response);
        askNext();
    }

    void passOver(int index, const ChatResponse &error)
    {
        m_lastError = error;
        m_lastErrorIndex = index;
        if (m_owner)
            Q_EMIT m_owner->fellBack(nameAt(index), error.errorCode);
    }

    void finishFinal(ChatResponse response, int index)
    {
        if (response.model.isEmpty())
            response.model = nameAt(index);
        // Every model before the one whose response this is was passed over.
        response.fallbackHops = index;
        response.attempts = m_attempts;
        response.retries = m_retries;
        if (!response.isError() && index > 0 && m_owner) {
            ++m_owner->m_fallbackCount;
            Q_EMIT m_owner->answeredByFallback(response.model, index);
        }
        finishWith(std::move(response));
    }

    QPointer<FallbackChatModel> m_owner;
    const QList<FallbackChatModel::Entry> m_chain; // as it was when the call started
    const ChatRequest m_request;
    const bool m_chinese;
    int m_next = 0;
    int m_current = -1;
    QPointer<ChatReply> m_inner;
    QElapsedTimer m_clock;
    bool m_streamed = false;
    bool m_aborted = false;
    int m_attempts = 0;
    int m_retries = 0;
    std::optional<ChatResponse> m_lastError;
    int m_lastErrorIndex = 0;
};

} // namespace Internal

FallbackChatModel::FallbackChatModel(const QList<Link> &chain, QObject *parent)
    : ChatModel(parent)
{
    for (const Link &link : chain) {
        Q_ASSERT(link.model);
        m_chain.append({link.model, link.breaker});
        m_takenOut.append(TakenOut());
        m_spent.append(SpentInTurn());
    }
    m_clock.start();
    m_now = [this] { return m_clock.elapsed(); };
}

void FallbackChatModel::setClock(std::function<qint64()> nowMs)
{
    m_now = std::move(nowMs);
}

bool FallbackChatModel::isTakenOut(int index, const RetryBudgetPtr &turn) const
{
    if (index < 0 || index >= m_takenOut.size())
        return false;
    const TakenOut &out = m_takenOut.at(index);
    if (out.untilMs < 0)
        return false;
    if (turn && out.turn.lock() == turn)
        return true; // the rest of the turn, however long the cool-down
    return m_now() < out.untilMs;
}

FallbackChatModel::OutOfChain FallbackChatModel::outOfChain() const
{
    OutOfChain state;
    for (const TakenOut &out : m_takenOut) {
        state.untilMs.append(out.untilMs);
        state.failures.append(out.failure);
    }
    return state;
}

void FallbackChatModel::restoreOutOfChain(const OutOfChain &state)
{
    // The turns they failed in are over: only the cool-downs are put back.
    for (qsizetype i = 0; i < m_takenOut.size(); ++i) {
        const bool known = i < state.untilMs.size() && i < state.failures.size();
        m_takenOut[i] = {known ? state.failures.at(i) : ChatResponse(),
                         known ? state.untilMs.at(i) : -1,
                         {}};
    }
}

bool FallbackChatModel::isSpentInTurn(int index, const RetryBudgetPtr &turn) const
{
    if (!turn || index < 0 || index >= m_spent.size())
        return false;
    return m_spent.at(index).turn.lock() == turn;
}

void FallbackChatModel::spendForTurn(int index, const ChatResponse &failure,
                                     const RetryBudgetPtr &turn)
{
    if (!turn || index < 0 || index >= m_spent.size())
        return;
    m_spent[index] = {failure, turn};
    qCInfo(lcLlm).noquote() << "model"
                            << (m_chain.at(index).model ? m_chain.at(index).model->modelName()
                                                        : QString())
                            << "not asked again in this turn: its retries ran out with"
                            << failure.errorCode;
}

void FallbackChatModel::takeOut(int index, const ChatResponse &failure, const RetryBudgetPtr &turn)
{
    if (index < 0 || index >= m_takenOut.size())
        return;
    const CircuitBreaker *breaker = m_chain.at(index).breaker;
    const qint64 cooldown = breaker ? qint64(breaker->options().openCooldown.count())
                                    : DefaultTakenOutMs;
    TakenOut &out = m_takenOut[index];
    out.failure = failure;
    out.untilMs = m_now() + cooldown;
    out.turn = turn;
    qCWarning(lcLlm).noquote() << "model"
                               << (m_chain.at(index).model ? m_chain.at(index).model->modelName()
                                                           : QString())
                               << "taken out of the chain for" << cooldown << "ms and the rest"
                               << "of the turn after" << failure.errorCode;
}

QString FallbackChatModel::modelName() const
{
    const ChatModel *primary = m_chain.isEmpty() ? nullptr : m_chain.constFirst().model.data();
    return primary ? primary->modelName() : QString();
}

ChatReply *FallbackChatModel::complete(const ChatRequest &request)
{
    return new Internal::FallbackReply(this, request);
}

} // namespace AgentConsole
