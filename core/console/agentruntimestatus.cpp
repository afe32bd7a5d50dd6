#include "agentruntime_p.h"

#include "../faults/faultplan.h"
#include "../llm/chatmodel.h"
#include "../resilience/circuitbreaker.h"
#include "../resilience/toolexecutor.h"
#include "../support/supporttools.h"
#include "../telemetry/logging.h"

namespace AgentConsole {

// What staff put in force while the console runs (the fault plan, retry policies) and what the
// window reads back (status(), the breakers, latency, the export's redactor).

QString AgentRuntime::faultPlanSummary(bool translated) const
{
    return d->faults->current()->summary(translated ? FaultPlan::SummaryWords::Staff
                                                    : FaultPlan::SummaryWords::Log);
}

FaultPlan AgentRuntime::faultPlan() const
{
    return *d->faults->current();
}

KnownTools AgentRuntime::knownTools() const
{
    return knownToolsOf(d->registry);
}

void AgentRuntime::setFaultPlan(const FaultPlan &plan)
{
    d->faults->set(plan);
    qCInfo(lcAgent).noquote() << "fault plan set:"
                              << (plan.isEmpty() ? QStringLiteral("none") : plan.summary());
    Q_EMIT faultsChanged();
    if (plan.simFaults() != d->sim.section()) {
        d->sim.setSection(plan.simFaults());
        if (d->ready)
            d->sendSimFaults();
    }
}

void AgentRuntime::clearFaults()
{
    setFaultPlan(FaultPlan());
}

bool AgentRuntime::isSendingSimFaults() const
{
    return d->sim.isBusy();
}

bool AgentRuntime::hasActiveFaults() const
{
    return !d->faults->current()->isEmpty();
}

RetryPolicy AgentRuntime::defaultToolPolicy() const
{
    return d->defaultToolPolicy();
}

std::uint64_t AgentRuntime::jitterSeed() const
{
    return *d->options.jitterSeed;
}

void AgentRuntime::setJitterSeed(std::uint64_t seed)
{
    if (*d->options.jitterSeed == seed)
        return;
    d->options.jitterSeed = seed;
    Q_EMIT policiesChanged();
}

RetryPolicy AgentRuntime::toolPolicy(const QString &toolName) const
{
    return d->effectivePolicy(toolName);
}

bool AgentRuntime::setToolPolicy(const QString &toolName, const RetryPolicy &policy,
                                 QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    if (!d->registry.find(toolName))
        return fail(AgentRuntimeWords::tr("no such tool: %1").arg(toolName));
    if (const std::optional<QString> problem = policy.problem())
        return fail(*problem);
    d->toolPolicies.insert(toolName, policy);
    qCInfo(lcAgent).noquote() << "policy of" << toolName << "set:" << policy.describe();
    Q_EMIT policiesChanged();
    return true;
}

void AgentRuntime::resetToolPolicy(const QString &toolName)
{
    if (d->toolPolicies.remove(toolName) > 0)
        Q_EMIT policiesChanged();
}

void AgentRuntime::resetToolPolicies()
{
    if (d->toolPolicies.isEmpty())
        return;
    d->toolPolicies.clear();
    Q_EMIT policiesChanged();
}

QJsonObject AgentRuntime::conditionsNow() const
{
    const std::shared_ptr<const FaultPlan> plan = d->faults->current();
    QJsonObject faults{{QStringLiteral("active"), !plan->isEmpty()}};
    if (!plan->isEmpty()) {
        faults.insert(QStringLiteral("summary"), plan->summary(FaultPlan::SummaryWords::Log));
        faults.insert(QStringLiteral("plan"), plan->toJson());
    }
    QJsonObject custom;
    for (const QString &tool : toolsWithCustomPolicy())
        custom.insert(tool, toolPolicy(tool).describe());
    QJsonObject policies{{QStringLiteral("default"), defaultToolPolicy().describe()}};
    if (!custom.isEmpty())
        policies.insert(QStringLiteral("custom"), custom);
    return {{QStringLiteral("faults"), faults}, {QStringLiteral("policies"), policies}};
}

QStringList AgentRuntime::toolsWithCustomPolicy() const
{
    QStringList names;
    for (const ToolDescriptor &tool : d->registry.descriptors()) {
        const auto it = d->toolPolicies.constFind(tool.name);
        if (it != d->toolPolicies.cend() && *it != defaultToolPolicy())
            names.append(tool.name);
    }
    return names;
}

Redactor AgentRuntime::exportRedactor() const
{
    // The variables' values as they are now, and the primary key the runtime holds, which may
    // have come from the keychain (the secondary one is only ever read from its variable).
    // And the secrets the MCP servers run with (mcp.json's header and env values).
    return Redactor::forModel(d->options.model, QStringList{d->apiKey} + d->mcp.knownSecrets());
}

namespace {

DependencyStatus::Breaker breakerState(CircuitBreaker::State state)
{
    switch (state) {
    case CircuitBreaker::State::Closed: return DependencyStatus::Breaker::Closed;
    case CircuitBreaker::State::HalfOpen: return DependencyStatus::Breaker::HalfOpen;
    case CircuitBreaker::State::Open: return DependencyStatus::Breaker::Open;
    }
    return DependencyStatus::Breaker::Open;
}

BreakerStatus breakerStatus(const CircuitBreaker &breaker)
{
    const CircuitBreaker::Options &options = breaker.options();
    BreakerStatus entry;
    entry.dependency = breaker.dependency();
    entry.state = breakerState(breaker.state());
    entry.windowCalls = breaker.windowCalls();
    entry.windowFailures = breaker.windowFailures();
    entry.windowSize = options.windowSize;
    entry.minimumCalls = options.minimumCalls;
    entry.failureRateThreshold = options.failureRateThreshold;
    entry.openCooldownMs = options.openCooldown.count();
    entry.cooldownLeftMs = breaker.cooldownLeft().count();
    entry.probeDue = breaker.state() == CircuitBreaker::State::Open && entry.cooldownLeftMs == 0;
    const CircuitBreaker::Transition &last = breaker.lastTransition();
    if (last.atMs >= 0) {
        entry.lastFrom = breakerState(last.from);
        entry.lastTo = breakerState(last.to);
        entry.lastChangeAgoMs = std::max<qint64>(0, breaker.nowMs() - last.atMs);
        entry.lastChangeReason = last.reason;
    }
    entry.openCount = breaker.openCount();
    entry.rejectedCount = breaker.rejectedCount();
    return entry;
}

} // namespace

bool AgentRuntime::resetBreaker(const QString &dependency)
{
    CircuitBreaker *breaker = d->breakers ? d->breakers->find(dependency) : nullptr;
    if (!breaker)
        return false;
    qCInfo(lcAgent).noquote() << "circuit breaker" << dependency << "reset by staff";
    breaker->reset();
    Q_EMIT statusChanged(); // also when it was closed: its window is empty now
    return true;
}

const ToolLatencyStats &AgentRuntime::toolLatency() const
{
    return d->latency;
}

RuntimeStatus AgentRuntime::status() const
{
    RuntimeStatus status;
    const RetryPolicy policy = d->defaultToolPolicy();
    status.toolPolicy = policy.describe();
    status.toolWorstCase = policy.worstCaseDuration();
    if (d->models) {
        const ModelOptions &model = d->options.model;
        status.modelName = d->models->model()->modelName();
        status.staffUserId = d->staff.userId;
        status.staffName = d->staff.displayName;
        status.tenantId = d->staff.tenantId;
        status.offlineFallback = model.provider != ModelOptions::Provider::Offline
            && model.fallbackToOffline;
    }
    status.mcpServers = d->mcp.status(d->breakers.get(), d->registry);
    if (!d->breakers)
        return status;
    QList<DependencyStatus> halfOpen;
    const QStringList dependencies = d->breakers->dependencies();
    for (const QString &dependency : dependencies) {
        const CircuitBreaker *breaker = d->breakers->find(dependency);
        if (!breaker)
            continue;
        DependencyStatus entry{dependency, DependencyStatus::Breaker::Closed,
                               breaker->options().openCooldown};
        switch (breaker->state()) {
        case CircuitBreaker::State::Open:
            entry.breaker = DependencyStatus::Breaker::Open;
            status.troubledDependencies.append(entry);
            break;
        case CircuitBreaker::State::HalfOpen:
            entry.breaker = DependencyStatus::Breaker::HalfOpen;
            halfOpen.append(entry);
            break;
        case CircuitBreaker::State::Closed:
            break;
        }
    }
    for (const QString &dependency : dependencies) {
        if (const CircuitBreaker *breaker = d->breakers->find(dependency))
            status.breakers.append(breakerStatus(*breaker));
    }
    if (!status.troubledDependencies.isEmpty())
        status.worstBreaker = DependencyStatus::Breaker::Open;
    else if (!halfOpen.isEmpty())
        status.worstBreaker = DependencyStatus::Breaker::HalfOpen;
    status.troubledDependencies.append(halfOpen);
    return status;
}

} // namespace AgentConsole
