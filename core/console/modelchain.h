#pragma once

#include <QString>

#include <cstdint>
#include <memory>

namespace AgentConsole {

class ChatModel;
class CircuitBreakerRegistry;
class FallbackChatModel;
class FaultyChatModel;
class LiveFaults;
class OpenAiCompatibleModel;
struct ModelOptions;

// The breaker name of a remote dependency: "<kind>:<host>:<port>" ("model:api.example:443");
// with an empty kind, ":<host>:<port>".
QString remoteDependencyName(const QString &kind, const QString &url);

// The models a turn talks to, as the settings name them: the provider (or the offline demo
// model standing in for one) under the live model faults, the secondary provider when there is
// one, the offline model as the answer of last resort, in one fallback chain with a breaker per
// provider (docs/FAULTS.md, "Model faults"). Built whole for every settings switch: the loop is
// pointed at the new chain before the old one goes.
class ModelChain final
{
public:
    // `offline` outlives the chain (it is kept across switches); `apiKey` is never logged.
    // The providers' retries are jittered from `jitterSeed` (RuntimeOptions::jitterSeed).
    static std::unique_ptr<ModelChain> build(const ModelOptions &settings, const QString &apiKey,
                                             ChatModel *offline,
                                             const std::shared_ptr<LiveFaults> &faults,
                                             CircuitBreakerRegistry &breakers,
                                             std::uint64_t jitterSeed);
    ~ModelChain();

    ChatModel *model() const; // the chain's head, the one the loop talks to
    FallbackChatModel *fallback() const { return m_fallback.get(); }

private:
    ModelChain();

    std::unique_ptr<OpenAiCompatibleModel> m_primary;
    std::unique_ptr<OpenAiCompatibleModel> m_secondary;
    std::unique_ptr<FaultyChatModel> m_faultyPrimary; // under the live model faults
    std::unique_ptr<FaultyChatModel> m_faultySecondary; // when a secondary is configured
    std::unique_ptr<FallbackChatModel> m_fallback;
};

} // namespace AgentConsole
