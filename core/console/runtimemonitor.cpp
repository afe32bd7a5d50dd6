#include "runtimemonitor.h"

#include "activeconnection.h"
#include "dependencystate.h"
#include "duplicateticketmonitor.h"
#include "mcpservers.h"
#include "modelchain.h"
#include "runtimeoptions.h"
#include "toolpolicies.h"

#include "../ledger/turnjournal.h"
#include "../llm/fallbackchatmodel.h"
#include "../resilience/circuitbreaker.h"
#include "../team/isolationwords.h"
#include "../support/supportstore.h"
#include "../telemetry/counters.h"
#include "../telemetry/logging.h"
#include "../tools/toolregistry.h"
#include "../turn/agentloop.h"

#include <algorithm>

namespace AgentConsole {

namespace {

DependencyStatus::Breaker breakerState(CircuitBreaker::State state)
{
    switch (state) {
    case CircuitBreaker::State::Closed:
        return DependencyStatus::Breaker::Closed;
    case CircuitBreaker::State::HalfOpen:
        return DependencyStatus::Breaker::HalfOpen;
    case CircuitBreaker::State::Open:
        return DependencyStatus::Breaker::Open;
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
    entry.isolated = breaker.isIsolated();
    if (entry.isolated)
        entry.isolation = IsolationWords::refusal(breaker.isolation());
    entry.openCount = breaker.openCount();
    entry.rejectedCount = breaker.rejectedCount();
    return entry;
}

} // namespace

RuntimeMonitor::RuntimeMonitor(CircuitBreakerRegistry *breakers, const ToolRegistry *tools,
                               const ToolPolicies *policies, const McpServers *mcp,
                               const ActiveConnection *connection,
                               std::function<ModelChain *()> models, QObject *parent)
    : QObject(parent)
    , m_breakers(breakers)
    , m_tools(tools)
    , m_policies(policies)
    , m_mcp(mcp)
    , m_connection(connection)
    , m_models(std::move(models))
{
    Q_ASSERT(m_breakers && m_tools && m_policies && m_mcp && m_connection && m_models);
    // The registry re-emits the changes of every breaker, including those it creates later.
    connect(m_breakers, &CircuitBreakerRegistry::stateChanged, this,
            &RuntimeMonitor::statusChanged);
    connect(m_breakers, &CircuitBreakerRegistry::isolationChanged, this,
            &RuntimeMonitor::statusChanged);
    connect(m_mcp, &McpServers::statusChanged, this, &RuntimeMonitor::statusChanged);
    // Another model or backend: another name, other breakers.
    connect(m_connection, &ActiveConnection::settingsChanged, this,
            &RuntimeMonitor::statusChanged);
}

RuntimeMonitor::~RuntimeMonitor() = default;

void RuntimeMonitor::attach(const StaffMember &staff, TurnJournal *journal,
                            DuplicateTicketMonitor *duplicates, AgentLoop *loop)
{
    m_staffUserId = staff.userId;
    m_staffName = staff.displayName;
    m_tenantId = staff.tenantId;
    m_journal = journal;
    m_duplicates = duplicates;
    connect(m_duplicates, &DuplicateTicketMonitor::checked, this,
            &RuntimeMonitor::duplicateBusinessObjectsChecked);
    connect(loop, &AgentLoop::turnFinished, this, [this](const TurnResult &result) {
        m_latency.recordTurn(result);
        Q_EMIT toolLatencyChanged();
        const bool wrote = std::any_of(result.toolCalls.cbegin(), result.toolCalls.cend(),
                                       [this](const ToolCallRecord &call) {
                                           const auto tool = m_tools->find(call.name);
                                           return tool && tool->descriptor().hasSideEffects;
                                       });
        if (wrote)
            m_duplicates->check(result.conversationId, result.requestId);
    });
}

RuntimeStatus RuntimeMonitor::status() const
{
    RuntimeStatus status;
    const RetryPolicy policy = m_policies->defaultPolicy();
    status.toolPolicy = policy.describe();
    status.toolWorstCase = policy.worstCaseDuration();
    if (m_models()) {
        const ModelOptions &model = m_connection->model();
        status.modelName = m_connection->modelName();
        status.staffUserId = m_staffUserId;
        status.staffName = m_staffName;
        status.tenantId = m_tenantId;
        status.team = m_team;
        status.offlineFallback = model.provider != ModelOptions::Provider::Offline
            && model.fallbackToOffline;
    }
    status.mcpServers = m_mcp->status();
    QList<DependencyStatus> halfOpen;
    const QStringList dependencies = m_breakers->dependencies();
    for (const QString &dependency : dependencies) {
        const CircuitBreaker *breaker = m_breakers->find(dependency);
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
        if (const CircuitBreaker *breaker = m_breakers->find(dependency))
            status.breakers.append(breakerStatus(*breaker));
    }
    if (!status.troubledDependencies.isEmpty())
        status.worstBreaker = DependencyStatus::Breaker::Open;
    else if (!halfOpen.isEmpty())
        status.worstBreaker = DependencyStatus::Breaker::HalfOpen;
    status.troubledDependencies.append(halfOpen);
    return status;
}

bool RuntimeMonitor::resetBreaker(const QString &dependency)
{
    CircuitBreaker *breaker = m_breakers->find(dependency);
    if (!breaker)
        return false;
    qCInfo(lcAgent).noquote() << "circuit breaker" << dependency << "reset by staff";
    breaker->reset();
    Q_EMIT statusChanged(); // also when it was closed: its window is empty now
    return true;
}

DependencyState RuntimeMonitor::dependencyState() const
{
    DependencyState state;
    state.breakers = m_breakers->snapshot();
    if (const ModelChain *models = m_models(); models && models->fallback())
        state.models = models->fallback()->outOfChain();
    return state;
}

void RuntimeMonitor::restoreDependencyState(const DependencyState &state)
{
    m_breakers->restore(state.breakers);
    if (const ModelChain *models = m_models(); models && models->fallback())
        models->fallback()->restoreOutOfChain(state.models);
}

QFuture<QJsonObject> RuntimeMonitor::counterTotals() const
{
    if (!m_journal)
        return QtFuture::makeReadyFuture(QJsonObject());
    // The duplicate count is the backend's figure now, not a sum over turns.
    const QString duplicates = Metrics::counterName(Metrics::Counter::DuplicateBusinessObject);
    const int figure = duplicateBusinessObjects();
    if (figure >= 0)
        return m_journal->counterTotals({{duplicates, figure}});
    return m_journal->counterTotals({}, {duplicates});
}

int RuntimeMonitor::duplicateBusinessObjects() const
{
    return m_duplicates ? m_duplicates->count() : -1;
}

bool RuntimeMonitor::isCheckingDuplicates() const
{
    return m_duplicates && m_duplicates->isChecking();
}

} // namespace AgentConsole
