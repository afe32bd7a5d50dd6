#pragma once

#include "chatmodel.h"

#include "../faults/livefaults.h"
#include "../resilience/retrypolicy.h"

#include <QPointer>

#include <memory>

namespace AgentConsole {

struct OpenAiConfig;

// Wraps a provider with the model faults of the fault plan in force (LiveFaults) for its role,
// the primary's or the secondary's (docs/FAULTS.md). The plan is read when each call starts,
// so the fault panel's changes apply to the next call; a call keeps the fault it started with.
// Without a fault for its provider it passes the call straight through. For demos and QA of
// how the console treats a failing model.
//
// A call under a fault goes through these stages, each of which abort() ends:
//  1. latencyMs, once per call;
//  2. unavailable (MODEL_UNAVAILABLE), then quotaExhausted (MODEL_QUOTA_EXHAUSTED): at once,
//     never retried, as the provider gives them up;
//  3. rateLimited N: attempts 1..N of the call answer 429 with Retry-After retryAfterMs, and
//     are retried as the provider retries them: the wait is the Retry-After capped by the
//     provider's policy, every retry is taken from the turn's RetryBudget (Layer::Model) and
//     none starts when the turn's deadline would pass during the wait. N >= the provider's
//     attempts, a refused retry or a deadline gives MODEL_RATE_LIMITED;
//  4. malformedResponse: MODEL_INVALID_RESPONSE (not retried, as the provider would not);
//  5. the inner model is asked. streamStall relays its first chunk of text, if any, then
//     waits for data that never comes: MODEL_TIMEOUT after the stall timeout. A response that
//     calls tools is rewritten: toolCallBurst, then unknownTool, then malformedToolArguments.
// The response's attempts and retries count the injected 429s with the inner model's own.
// Failures carry ModelError's sentence in the question's language.
class FaultyChatModel final : public ChatModel
{
    Q_OBJECT

public:
    // What the wrapped provider would do: its retry policy for 429s and how long it waits for
    // data before a stream counts as stalled.
    struct ProviderTiming
    {
        RetryPolicy retry; // maxAttempts() and serverDelayCap() are used
        int stallTimeoutMs = 3000; // the offline model has no idle timeout of its own

        // The OpenAI-compatible provider's own figures (its idle timeout for a stall).
        static ProviderTiming of(const OpenAiConfig &config);
        // A provider with OpenAiConfig's default retries and a 3 s stall timeout: for the
        // offline demo model standing in for a provider.
        static ProviderTiming standIn();
    };

    FaultyChatModel(ChatModel *inner, std::shared_ptr<const LiveFaults> faults,
                    FaultPlan::Provider provider = FaultPlan::Provider::Primary,
                    QObject *parent = nullptr);

    QString modelName() const override;
    ChatReply *complete(const ChatRequest &request) override;

    FaultPlan::Provider provider() const { return m_provider; }
    ChatModel *inner() const { return m_inner; }
    ProviderTiming timing() const { return m_timing; }
    void setTiming(const ProviderTiming &timing) { m_timing = timing; }

private:
    QPointer<ChatModel> m_inner;
    std::shared_ptr<const LiveFaults> m_faults;
    FaultPlan::Provider m_provider;
    ProviderTiming m_timing = ProviderTiming::standIn();
};

} // namespace AgentConsole
