#include "teampolicy.h"

#include "connectionsettings.h"
#include "runtimeoptions.h"
#include "settingkeys.h"

#include "../policy/policysource.h"
#include "../telemetry/logging.h"

#include <QCoreApplication>

namespace AgentConsole {

namespace {

// Put the provider chain's words into `model`: nothing when the chain names no provider.
bool applyChain(const PolicyProviderChain &chain, ModelOptions *model, QString *problem)
{
    const ModelOptions defaults;
    if (!chain.provider.isEmpty()) {
        const std::optional<ModelOptions::Provider> provider = OptionWords::providerFrom(
            chain.provider);
        if (!provider) {
            *problem = TeamPolicy::tr("providerChain.primary.provider: expected %1")
                           .arg(OptionWords::choices(OptionWords::providers()));
            return false;
        }
        model->provider = *provider;
        model->baseUrl = chain.baseUrl;
        model->model = chain.model;
        model->apiKeyEnv = chain.apiKeyVariable.isEmpty() ? defaults.apiKeyEnv
                                                          : chain.apiKeyVariable;
        // The team's chain is the whole chain: a secondary of the staff member's own goes.
        model->secondaryBaseUrl = chain.secondaryBaseUrl;
        model->secondaryModel = chain.secondaryModel;
        model->secondaryApiKeyEnv = chain.secondaryApiKeyVariable.isEmpty()
            ? defaults.secondaryApiKeyEnv
            : chain.secondaryApiKeyVariable;
    } else if (!chain.secondaryBaseUrl.isEmpty()) {
        *problem = TeamPolicy::tr("providerChain.secondary: goes with a primary provider");
        return false;
    }
    if (!chain.fallback.isEmpty()) {
        const std::optional<bool> fallback = OptionWords::fallbackFrom(chain.fallback);
        if (!fallback) {
            *problem = TeamPolicy::tr("providerChain.fallback: expected %1")
                           .arg(OptionWords::choices(OptionWords::fallbacks()));
            return false;
        }
        model->fallbackToOffline = *fallback;
    }
    return true;
}

} // namespace

TeamPolicy::TeamPolicy(QObject *parent)
    : QObject(parent)
{
}

TeamPolicy::~TeamPolicy() = default;

std::shared_ptr<const PolicySource> TeamPolicy::systemWideSource()
{
    return FilePolicySource::systemWide();
}

std::optional<ManagedPolicy> TeamPolicy::read(const PolicyText &text, QString *problem)
{
    switch (text.status) {
    case PolicyText::Status::None:
        return std::nullopt;
    case PolicyText::Status::Unreadable:
        *problem = text.problem;
        return std::nullopt;
    case PolicyText::Status::Found:
        break;
    }
    QString why;
    std::optional<ManagedPolicy> policy = ManagedPolicy::read(text.text, text.origin,
                                                              SettingKeys::lockable(), &why);
    // The console's own checks of what the policy names: the chain as the command line
    // checks a connection.
    if (policy) {
        RuntimeOptions options;
        if (policy->providerChain && !applyChain(*policy->providerChain, &options.model, &why))
            policy.reset();
        else if (const auto found = checkModelOptions(options.model)) {
            why = tr("providerChain: %1").arg(found->forStaff());
            policy.reset();
        }
    }
    if (!policy)
        *problem = tr("The team policy %1 cannot be used: %2").arg(text.origin, why);
    return policy;
}

bool TeamPolicy::applyTo(const ManagedPolicy &policy, RuntimeOptions *options, QString *problem)
{
    for (const QString &key : policy.locked) {
        const auto given = options->commandLineSettings.constFind(key);
        if (given != options->commandLineSettings.cend()) {
            *problem = tr("%1 is locked by your team's policy (version %2)")
                           .arg(*given, policy.version);
            return false;
        }
    }
    ModelOptions &model = options->model;
    const ModelOptions defaults;
    const std::optional<PolicyProviderChain> &chain = policy.providerChain;
    if (chain && !applyChain(*chain, &model, problem))
        return false;
    const bool chainNamesProvider = chain && !chain->provider.isEmpty();
    // A locked setting the policy gives no value for takes the console's default.
    for (const QString &key : policy.locked) {
        if (!chainNamesProvider
            && (key == SettingKeys::provider || key == SettingKeys::baseUrl
                || key == SettingKeys::model || key == SettingKeys::apiKeyVariable)) {
            model.provider = defaults.provider;
            model.baseUrl = defaults.baseUrl;
            model.model = defaults.model;
            model.apiKeyEnv = defaults.apiKeyEnv;
        } else if (key == SettingKeys::secondary && !chainNamesProvider) {
            model.secondaryBaseUrl.clear();
            model.secondaryModel.clear();
            model.secondaryApiKeyEnv = defaults.secondaryApiKeyEnv;
        } else if (key == SettingKeys::stream) {
            model.stream = defaults.stream;
        } else if (key == SettingKeys::fallback && !(chain && !chain->fallback.isEmpty())) {
            model.fallbackToOffline = defaults.fallbackToOffline;
        } else if (key == SettingKeys::contextChars) {
            model.contextChars = defaults.contextChars;
        } else if (key == SettingKeys::backendKind) {
            options->backend.kind = BackendOptions().kind;
        } else if (key == SettingKeys::backendUrl) {
            options->backend.url.clear();
        } else if (key == SettingKeys::ledger) {
            options->ledgerSpec.clear();
        } else if (key == SettingKeys::team) {
            options->teamSpec.clear(); // a policy gives no team database: none
        } else if (key == SettingKeys::mcpToolPolicies) {
            options->mcpToolPolicies.clear();
        }
    }
    if (policy.modelRetry)
        model.retry = *policy.modelRetry;
    if (model.provider == ModelOptions::Provider::Offline) {
        // What the offline model cannot take (a secondary, headers) goes with the team's chain.
        model.secondaryBaseUrl.clear();
        model.extraHeaders.clear();
    }
    if (const auto found = checkConnectionSettings(model, options->backend)) {
        *problem = tr("The team policy %1 cannot be used with these settings: %2")
                       .arg(policy.origin, found->forStaff());
        return false;
    }
    return true;
}

void TeamPolicy::setPolicy(std::optional<ManagedPolicy> policy)
{
    m_policy = std::move(policy);
    if (m_policy)
        qCInfo(lcAgent).noquote() << "team policy in force: version" << m_policy->version << "from"
                                  << m_policy->origin << "locks"
                                  << m_policy->locked.join(QStringLiteral(", "));
    Q_EMIT changed();
}

QString TeamPolicy::version() const
{
    return m_policy ? m_policy->version : QString();
}

QString TeamPolicy::origin() const
{
    return m_policy ? m_policy->origin : QString();
}

bool TeamPolicy::isLocked(const QString &key) const
{
    return m_policy && m_policy->isLocked(key);
}

QString TeamPolicy::lockReasonFor(const QString &version)
{
    return tr("Set by your team's policy (version %1)").arg(version);
}

QString TeamPolicy::refusalFor(const QString &key, const QString &version)
{
    // The settings that are several things are told as such.
    if (key == SettingKeys::mcpToolPolicies || key == SettingKeys::toolRetryPolicies
        || key == SettingKeys::mcpServers)
        return tr("%1 are locked by your team's policy (version %2)")
            .arg(settingName(key), version);
    return tr("%1 is locked by your team's policy (version %2)").arg(settingName(key), version);
}

QString TeamPolicy::lockReason() const
{
    return m_policy ? lockReasonFor(m_policy->version) : QString();
}

QString TeamPolicy::refusal(const QString &key) const
{
    return m_policy ? refusalFor(key, m_policy->version) : QString();
}

QString TeamPolicy::refusalOfChange(const ManagedPolicy &policy, const ModelOptions &model,
                                    const BackendOptions &backend, const ModelOptions &to,
                                    const BackendOptions &toBackend)
{
    const std::pair<QString, bool> changes[] = {
        {SettingKeys::provider, model.provider != to.provider},
        {SettingKeys::baseUrl, model.baseUrl != to.baseUrl},
        {SettingKeys::model, model.model != to.model},
        {SettingKeys::apiKeyVariable, model.apiKeyEnv != to.apiKeyEnv},
        {SettingKeys::stream, model.stream != to.stream},
        {SettingKeys::fallback, model.fallbackToOffline != to.fallbackToOffline},
        {SettingKeys::contextChars, model.contextChars != to.contextChars},
        {SettingKeys::secondary,
         model.secondaryBaseUrl != to.secondaryBaseUrl || model.secondaryModel != to.secondaryModel
             || model.secondaryApiKeyEnv != to.secondaryApiKeyEnv},
        {SettingKeys::backendKind, backend.kind != toBackend.kind},
        {SettingKeys::backendUrl, backend.url != toBackend.url},
    };
    for (const auto &[key, changed] : changes) {
        if (changed && policy.isLocked(key))
            return refusalFor(key, policy.version);
    }
    return {};
}

QString TeamPolicy::summary() const
{
    if (!m_policy)
        return tr("No team policy");
    return tr("Team policy %1 (%2)").arg(m_policy->version, m_policy->origin);
}

QJsonValue TeamPolicy::record() const
{
    if (!m_policy)
        return QStringLiteral("none");
    return m_policy->recorded();
}

QString TeamPolicy::settingName(const QString &key)
{
    if (key == SettingKeys::provider)
        return tr("The provider");
    if (key == SettingKeys::baseUrl)
        return tr("The provider's base URL");
    if (key == SettingKeys::model)
        return tr("The model");
    if (key == SettingKeys::apiKeyVariable)
        return tr("The API key's variable");
    if (key == SettingKeys::stream)
        return tr("Streaming");
    if (key == SettingKeys::fallback)
        return tr("The offline fallback");
    if (key == SettingKeys::contextChars)
        return tr("The conversation sent to the model");
    if (key == SettingKeys::secondary)
        return tr("The secondary provider");
    if (key == SettingKeys::backendKind)
        return tr("The backend");
    if (key == SettingKeys::backendUrl)
        return tr("The backend's URL");
    if (key == SettingKeys::ledger)
        return tr("The ledger");
    if (key == SettingKeys::team)
        return tr("The team database");
    if (key == SettingKeys::language)
        return tr("The language");
    if (key == SettingKeys::mcpToolPolicies)
        return tr("The MCP tool policies");
    if (key == SettingKeys::toolRetryPolicies)
        return tr("The tool retry policies");
    if (key == SettingKeys::mcpServers)
        return tr("The MCP servers");
    return key;
}

} // namespace AgentConsole
