#include "toolpolicies.h"

#include "runtimewords.h"

#include "../mcp/mcpsession.h" // before mcptool.h, whose tool lister holds a PendingRequest
#include "../mcp/mcptool.h"
#include "../telemetry/logging.h"
#include "../tools/toolregistry.h"

namespace AgentConsole {

ToolPolicies::ToolPolicies(const ToolRegistry *tools, std::optional<RetryPolicy> configured,
                           std::uint64_t jitterSeed, QObject *parent)
    : QObject(parent)
    , m_tools(tools)
    , m_configured(std::move(configured))
    , m_jitterSeed(jitterSeed)
{
    Q_ASSERT(m_tools);
}

ToolPolicies::~ToolPolicies() = default;

namespace {

// A team's policy with jitter draws from the console's seed: consoles seeded apart.
RetryPolicy seeded(RetryPolicy policy, std::uint64_t seed)
{
    if (policy.jitter != JitterMode::None)
        policy.jitterSeed = seed;
    return policy;
}

} // namespace

RetryPolicy ToolPolicies::defaultPolicy() const
{
    if (m_teamDefault)
        return seeded(*m_teamDefault, m_jitterSeed);
    return m_configured.value_or(RetryPolicy::jittered(m_jitterSeed));
}

void ToolPolicies::setTeamPolicies(std::optional<RetryPolicy> teamDefault,
                                   const QMap<QString, RetryPolicy> &byTool,
                                   const QString &lockRefusal)
{
    m_teamDefault = std::move(teamDefault);
    m_team = byTool;
    m_lockRefusal = lockRefusal;
    if (!m_lockRefusal.isEmpty())
        m_custom.clear();
    Q_EMIT changed();
}

QStringList ToolPolicies::toolsWithTeamPolicy() const
{
    QStringList names;
    for (const QString &name : m_tools->names()) {
        if (m_team.contains(name))
            names.append(name);
    }
    return names;
}

std::uint64_t ToolPolicies::jitterSeed() const
{
    return m_jitterSeed;
}

void ToolPolicies::setJitterSeed(std::uint64_t seed)
{
    if (m_jitterSeed == seed)
        return;
    m_jitterSeed = seed;
    Q_EMIT changed();
}

RetryPolicy ToolPolicies::policy(const QString &toolName) const
{
    const auto custom = m_custom.constFind(toolName);
    if (custom != m_custom.cend())
        return *custom;
    const auto team = m_team.constFind(toolName);
    if (team != m_team.cend())
        return seeded(*team, m_jitterSeed);
    // An MCP tool as registered, under staff's MCP tool policy where one is set.
    if (const auto mcp = std::dynamic_pointer_cast<const Mcp::McpTool>(m_tools->find(toolName)))
        return mcp->retryPolicy(defaultPolicy());
    return defaultPolicy();
}

bool ToolPolicies::setPolicy(const QString &toolName, const RetryPolicy &policy, QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    if (!m_lockRefusal.isEmpty())
        return fail(m_lockRefusal);
    if (!m_tools->find(toolName))
        return fail(AgentRuntimeWords::tr("no such tool: %1").arg(toolName));
    if (const std::optional<QString> problem = policy.problem())
        return fail(*problem);
    m_custom.insert(toolName, policy);
    qCInfo(lcAgent).noquote() << "policy of" << toolName << "set:" << policy.describe();
    Q_EMIT changed();
    return true;
}

void ToolPolicies::resetPolicy(const QString &toolName)
{
    if (m_custom.remove(toolName) > 0)
        Q_EMIT changed();
}

void ToolPolicies::resetPolicies()
{
    if (m_custom.isEmpty())
        return;
    m_custom.clear();
    Q_EMIT changed();
}

QStringList ToolPolicies::tools() const
{
    return m_tools->names();
}

QStringList ToolPolicies::toolsWithCustomPolicy() const
{
    const RetryPolicy fallback = defaultPolicy();
    QStringList names;
    for (const QString &name : m_tools->names()) {
        const auto it = m_custom.constFind(name);
        if (it != m_custom.cend() && *it != fallback)
            names.append(name);
    }
    return names;
}

QJsonObject ToolPolicies::conditions() const
{
    QJsonObject custom;
    for (const QString &tool : toolsWithCustomPolicy())
        custom.insert(tool, policy(tool).describe());
    QJsonObject policies{{QStringLiteral("default"), defaultPolicy().describe()}};
    if (!custom.isEmpty())
        policies.insert(QStringLiteral("custom"), custom);
    return policies;
}

} // namespace AgentConsole
