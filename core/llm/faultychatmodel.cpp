#include "faultychatmodel.h"

#include "../telemetry/logging.h"
#include "openaicompatiblemodel.h"

#include <QTimer>

#include <algorithm>

namespace AgentConsole {
namespace {

// A name no tool of the request has: the model "calls a tool that does not exist".
QString unknownToolName(const QList<ToolDescriptor> &tools)
{
    QString name = QStringLiteral("queryWarrantyClaim");
    const auto taken = [&tools](const QString &candidate) {
        return std::any_of(tools.cbegin(), tools.cend(),
                           [&candidate](const ToolDescriptor &t) { return t.name == candidate; });
    };
    while (taken(name))
        name += QLatin1Char('X');
    return name;
}

// Arguments cut short by one character: never JSON (an object or array loses its closing
// bracket), never empty (which a loop might read as "no arguments").
QString brokenArguments(const QString &arguments)
{
    QString text = arguments.trimmed();
    text.chop(1);
    return text.isEmpty() ? QStringLiteral("{") : text;
}

// One call under a model fault; see FaultyChatModel for the stages.
class FaultyReply final : public ChatReply
{
public:
    FaultyReply(ChatModel *inner, const ModelFault &fault, const ChatRequest &request,
                const FaultyChatModel::ProviderTiming &timing)
        : m_request(request)
        , m_inner(inner)
        , m_modelName(inner ? inner->modelName() : QString())
        , m_fault(fault)
        , m_policy(timing.retry)
        , m_backoff(m_policy, m_policy.jitterSeed)
        , m_stallTimeoutMs(std::max(1, timing.stallTimeoutMs))
        , m_language(questionLanguage(request))
    {
        // Precise: a Retry-After is a floor and a stall timeout a promise (CONVENTIONS.md).
        m_timer.setSingleShot(true);
        m_timer.setTimerType(Qt::PreciseTimer);
        connect(&m_timer, &QTimer::timeout, this, &FaultyReply::onTimer);
        // Even without latency nothing happens before the caller is back in the event loop.
        m_timer.start(std::max(0, m_fault.latencyMs));
    }

    void abort() override
    {
        m_timer.stop();
        drop();
        if (!isFinished())
            finishWith(failure(ModelError::Cancelled));
    }

private:
    enum class Stage { Latency, Backoff, Relaying, Stalled };

    void onTimer()
    {
        switch (m_stage) {
        case Stage::Latency:
            firstAttempt();
            return;
        case Stage::Backoff:
            nextAttempt();
            return;
        case Stage::Stalled:
            qCWarning(lcLlm).noquote() << "fault plan: model" << m_modelName << "stream stalled"
                                       << m_stallTimeoutMs << "ms -> MODEL_TIMEOUT";
            drop();
            finishWith(failure(ModelError::Timeout));
            return;
        case Stage::Relaying:
            return;
        }
    }

    void firstAttempt()
    {
        // Failures the provider gives up at once: no retry cures them.
        const QString code = m_fault.unavailable ? ModelError::Unavailable
            : m_fault.quotaExhausted             ? ModelError::QuotaExhausted
                                                 : QString();
        if (!code.isEmpty()) {
            m_attempts = 1;
            qCWarning(lcLlm).noquote() << "fault plan: model" << m_modelName << "->" << code;
            finishWith(failure(code));
            return;
        }
        nextAttempt();
    }

    void nextAttempt()
    {
        ++m_attempts;
        if (m_attempts <= m_fault.rateLimited) {
            rateLimited();
            return;
        }
        if (m_fault.malformedResponse) {
            qCWarning(lcLlm).noquote() << "fault plan: model" << m_modelName
                                       << "unreadable answer -> MODEL_INVALID_RESPONSE";
            finishWith(failure(ModelError::InvalidResponse));
            return;
        }
        relay();
    }

    // A 429 with Retry-After, retried as OpenAiCompatibleModel retries one.
    void rateLimited()
    {
        const int delay = int(
            m_backoff.next(m_attempts, RetryPolicy::Millis(m_fault.retryAfterMs)).count());
        const bool retry = m_attempts < m_policy.maxAttempts() && budgetAllows(delay);
        qCWarning(lcLlm).noquote() << "fault plan: model" << m_modelName << "attempt" << m_attempts
                                   << "of" << m_policy.maxAttempts() << "answered 429, Retry-After"
                                   << m_fault.retryAfterMs << "ms ->"
                                   << (retry ? QStringLiteral("retry in %1 ms").arg(delay)
                                             : QStringLiteral("giving up: MODEL_RATE_LIMITED"));
        if (!retry) {
            finishWith(failure(ModelError::RateLimited));
            return;
        }
        m_stage = Stage::Backoff;
        m_timer.start(delay);
        // Last: a receiver may abort this reply.
        Q_EMIT retrying(m_modelName, m_attempts + 1, m_policy.maxAttempts(), delay);
    }

    // The turn's budget has the last word on every retry: its count and its deadline.
    bool budgetAllows(int delayMs) const
    {
        const RetryBudgetPtr &budget = m_request.budget;
        if (!budget)
            return true;
        const QDeadlineTimer deadline = budget->deadline();
        if (!deadline.isForever() && deadline.remainingTime() < delayMs) {
            qCWarning(lcLlm) << "model retry skipped: the turn's deadline ends before the wait";
            return false;
        }
        if (!budget->tryConsume(RetryBudget::Layer::Model)) {
            qCWarning(lcLlm) << "model retry refused by the turn's retry budget";
            return false;
        }
        return true;
    }

    void relay()
    {
        ChatModel *inner = m_inner;
        if (!inner) { // destroyed since the chain was built
            finishWith(failure(ModelError::Unavailable));
            return;
        }
        m_stage = Stage::Relaying;
        ChatReply *reply = inner->complete(m_request);
        Q_ASSERT(reply);
        reply->setParent(this);
        m_relayed = reply;
        connect(reply, &ChatReply::contentDelta, this, &FaultyReply::onDelta);
        connect(reply, &ChatReply::retrying, this, &ChatReply::retrying);
        connect(reply, &ChatReply::finished, this, &FaultyReply::onInnerFinished);
        if (m_fault.streamStall) {
            // No data yet: the idle clock runs from the request, as the provider's does.
            m_stage = Stage::Stalled;
            m_timer.start(m_stallTimeoutMs);
        }
        if (reply->isFinished()) // it finished inside complete(), before anyone listened
            onInnerFinished();
    }

    void onDelta(const QString &text)
    {
        if (m_fault.streamStall) {
            if (m_deltas++ > 0)
                return; // the stream stopped after its first chunk
            m_timer.start(m_stallTimeoutMs); // data came: the idle clock starts again
        }
        // Nothing is touched after the emit: a receiver may abort, or even delete, this reply.
        Q_EMIT contentDelta(text);
    }

    void onInnerFinished()
    {
        ChatReply *reply = m_relayed;
        if (!reply)
            return;
        ChatResponse response = reply->response();
        drop();
        if (m_stage == Stage::Stalled)
            return; // its end never arrives: the stall timer finishes this call
        // The injected 429s were real attempts and retries of this model.
        response.attempts += m_attempts - 1;
        response.retries += m_attempts - 1;
        if (!response.isError() && !response.toolCalls.isEmpty())
            rewriteToolCalls(response);
        finishWith(std::move(response));
    }

    void rewriteToolCalls(ChatResponse &response) const
    {
        QList<ModelToolCall> &calls = response.toolCalls;
        if (m_fault.toolCallBurst > 0) {
            const ModelToolCall first = calls.first();
            calls.clear();
            for (int i = 0; i < m_fault.toolCallBurst; ++i) {
                ModelToolCall copy = first;
                if (i > 0)
                    copy.id = QStringLiteral("%1-burst-%2").arg(first.id).arg(i + 1);
                calls.append(copy);
            }
        }
        const QString unknown = unknownToolName(m_request.tools);
        for (ModelToolCall &call : calls) {
            if (m_fault.unknownTool)
                call.name = unknown;
            if (m_fault.malformedToolArguments)
                call.arguments = brokenArguments(call.arguments);
        }
        qCWarning(lcLlm).noquote()
            << "fault plan: model" << m_modelName << "tool calls rewritten:" << calls.size()
            << "call(s)" << (m_fault.unknownTool ? "to an unknown tool" : "")
            << (m_fault.malformedToolArguments ? "with broken arguments" : "");
    }

    // Forgets the inner reply: it reports nothing more, and goes when the event loop is back.
    void drop()
    {
        ChatReply *reply = m_relayed;
        if (!reply)
            return;
        m_relayed = nullptr;
        reply->disconnect(this);
        if (!reply->isFinished())
            reply->abort();
        reply->deleteLater();
    }

    ChatResponse failure(const QString &code) const
    {
        ChatResponse response;
        response.model = m_modelName;
        response.finishReason = FinishReason::Error;
        response.errorCode = code;
        response.errorMessage = ModelError::message(code, m_language);
        response.attempts = std::max(1, m_attempts);
        response.retries = std::max(0, m_attempts - 1);
        return response;
    }

    const ChatRequest m_request;
    const QPointer<ChatModel> m_inner;
    const QString m_modelName;
    const ModelFault m_fault;
    const RetryPolicy m_policy;
    BackoffSchedule m_backoff; // reads m_policy
    const int m_stallTimeoutMs;
    const Language m_language;
    Stage m_stage = Stage::Latency;
    QTimer m_timer;
    QPointer<ChatReply> m_relayed;
    int m_attempts = 0; // of this model: the injected 429s and the one relayed
    int m_deltas = 0;
};

} // namespace

FaultyChatModel::ProviderTiming FaultyChatModel::ProviderTiming::of(const OpenAiConfig &config)
{
    ProviderTiming timing;
    timing.retry = config.retryPolicy();
    timing.stallTimeoutMs = config.idleTimeoutMs;
    return timing;
}

FaultyChatModel::ProviderTiming FaultyChatModel::ProviderTiming::standIn()
{
    ProviderTiming timing;
    timing.retry = OpenAiConfig().retryPolicy();
    timing.stallTimeoutMs = 3000;
    return timing;
}

FaultyChatModel::FaultyChatModel(ChatModel *inner, std::shared_ptr<const LiveFaults> faults,
                                 FaultPlan::Provider provider, QObject *parent)
    : ChatModel(parent)
    , m_inner(inner)
    , m_faults(std::move(faults))
    , m_provider(provider)
{
}

QString FaultyChatModel::modelName() const
{
    return m_inner ? m_inner->modelName() : QString();
}

ChatReply *FaultyChatModel::complete(const ChatRequest &request)
{
    // Read as the call starts: the fault panel's change applies from this call on.
    ModelFault fault;
    if (m_faults) {
        if (const std::optional<ModelFault> set = m_faults->current()->modelFault(m_provider))
            fault = *set;
    }
    // An entry without effects is no fault.
    if (m_inner && fault == ModelFault())
        return m_inner->complete(request);
    return new FaultyReply(m_inner, fault, request, m_timing);
}

} // namespace AgentConsole
