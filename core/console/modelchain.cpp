#include "modelchain.h"

#include "runtimeoptions.h"

#include "../faults/livefaults.h"
#include "../llm/apikeysource.h"
#include "../llm/fallbackchatmodel.h"
#include "../llm/faultychatmodel.h"
#include "../llm/openaicompatiblemodel.h"
#include "../resilience/circuitbreaker.h"

#include <QUrl>

namespace AgentConsole {

QString remoteDependencyName(const QString &kind, const QString &url)
{
    const QUrl parsed(url);
    const int defaultPort = parsed.scheme() == QLatin1String("https") ? 443 : 80;
    return QStringLiteral("%1:%2:%3").arg(kind, parsed.host()).arg(parsed.port(defaultPort));
}

namespace {

OpenAiConfig providerConfig(const ModelOptions &settings, const QString &baseUrl,
                            const QString &model, const QString &apiKey, std::uint64_t jitterSeed)
{
    OpenAiConfig config;
    config.jitterSeed = jitterSeed;
    config.baseUrl = QUrl(baseUrl);
    config.model = model;
    config.apiKey = apiKey;
    config.stream = settings.stream;
    config.extraHeaders = settings.extraHeaders;
    if (const auto &timing = settings.timing) {
        config.connectTimeoutMs = timing->connectTimeoutMs;
        config.idleTimeoutMs = timing->idleTimeoutMs;
        config.initialBackoffMs = timing->initialBackoffMs;
        config.retryAfterCapMs = timing->retryAfterCapMs;
    }
    // A team's model retries (docs/POLICY.md): its attempts, first delay and cap, in the
    // form OpenAiConfig::retryPolicy() reads back.
    if (const auto &retry = settings.retry) {
        config.maxAttempts = retry->maxAttempts();
        config.initialBackoffMs = int(retry->initialDelay.count());
        config.retryAfterCapMs = int(std::min(retry->maxDelay, retry->retryAfterCap).count());
    }
    return config;
}

} // namespace

ModelChain::ModelChain() = default;
ModelChain::~ModelChain() = default;

std::unique_ptr<ModelChain> ModelChain::build(const ModelOptions &settings, const QString &apiKey,
                                              ChatModel *offline,
                                              const std::shared_ptr<LiveFaults> &faults,
                                              CircuitBreakerRegistry &breakers,
                                              std::uint64_t jitterSeed)
{
    std::unique_ptr<ModelChain> chain(new ModelChain);

    // Without a provider the offline demo model is the primary, and it stands in for one
    // under the fault plan's model faults: with its own breaker, and the un-faulted offline
    // model after it, "quota exhausted, falls back" is shown with no network (docs/FAULTS.md).
    ChatModel *primary = offline;
    QString primaryBreaker = QStringLiteral("model:offline");
    FaultyChatModel::ProviderTiming primaryTiming = FaultyChatModel::ProviderTiming::standIn();
    if (settings.provider == ModelOptions::Provider::OpenAiCompatible) {
        const OpenAiConfig config = providerConfig(settings, settings.baseUrl, settings.model,
                                                   apiKey, jitterSeed);
        chain->m_primary = std::make_unique<OpenAiCompatibleModel>(config);
        primary = chain->m_primary.get();
        primaryBreaker = remoteDependencyName(QStringLiteral("model"), settings.baseUrl);
        primaryTiming = FaultyChatModel::ProviderTiming::of(config);
    }
    // The fault sits where the provider would fail, so a fallback can still answer. Always
    // in the chain: the fault panel may set a model fault at any time.
    chain->m_faultyPrimary = std::make_unique<FaultyChatModel>(primary, faults,
                                                               FaultPlan::Provider::Primary);
    chain->m_faultyPrimary->setTiming(primaryTiming);
    QList<FallbackChatModel::Link> links{
        {chain->m_faultyPrimary.get(), breakers.breaker(primaryBreaker)}};
    const bool remote = settings.provider != ModelOptions::Provider::Offline;
    if (remote && settings.hasSecondary()) {
        const OpenAiConfig config = providerConfig(
            settings, settings.secondaryBaseUrl, settings.secondaryModel,
            ApiKeySource::fromEnvironment(settings.secondaryApiKeyEnv),
            // its own sequence, not the primary's
            jitterSeed ^ 0x5ec0'0da4'5ec0'0da4ULL);
        chain->m_secondary = std::make_unique<OpenAiCompatibleModel>(config);
        chain->m_faultySecondary = std::make_unique<FaultyChatModel>(
            chain->m_secondary.get(), faults, FaultPlan::Provider::Secondary);
        chain->m_faultySecondary->setTiming(FaultyChatModel::ProviderTiming::of(config));
        links.append({chain->m_faultySecondary.get(),
                      breakers.breaker(remoteDependencyName(QStringLiteral("model"),
                                                            settings.secondaryBaseUrl))});
    }
    // Last and never faulted: the answer of last resort.
    if (settings.fallbackToOffline)
        links.append({offline, nullptr});
    chain->m_fallback = std::make_unique<FallbackChatModel>(links);
    return chain;
}

ChatModel *ModelChain::model() const
{
    return m_fallback.get();
}

} // namespace AgentConsole
