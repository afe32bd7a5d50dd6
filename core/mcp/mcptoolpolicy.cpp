#include "mcptoolpolicy.h"

#include "mcpsession.h" // PendingRequest, which mcptoolinfo.h points to
#include "mcptool.h"

namespace AgentConsole::Mcp {

namespace ToolPolicyWords {

QString stored(ToolPolicy policy)
{
    switch (policy) {
    case ToolPolicy::Read:
        return QStringLiteral("read");
    case ToolPolicy::IdempotentWrite:
        return QStringLiteral("idempotent-write");
    case ToolPolicy::Write:
        return QStringLiteral("confirm");
    }
    return QStringLiteral("confirm");
}

std::optional<ToolPolicy> fromStored(const QString &word)
{
    for (const ToolPolicy policy :
         {ToolPolicy::Read, ToolPolicy::IdempotentWrite, ToolPolicy::Write}) {
        if (word == stored(policy))
            return policy;
    }
    return std::nullopt;
}

QStringList storedWords()
{
    return {stored(ToolPolicy::Read), stored(ToolPolicy::IdempotentWrite),
            stored(ToolPolicy::Write)};
}

QString status(ToolPolicy policy)
{
    switch (policy) {
    case ToolPolicy::Read:
        return QStringLiteral("read");
    case ToolPolicy::IdempotentWrite:
        return QStringLiteral("idempotent-write");
    case ToolPolicy::Write:
        return QStringLiteral("write");
    }
    return QStringLiteral("write");
}

} // namespace ToolPolicyWords

QString ToolPolicyOverrides::key(const QString &serverName, const QString &toolName)
{
    return serverName + QLatin1Char('/') + toolName;
}

ToolPolicyOverrides ToolPolicyOverrides::fromStored(const QMap<QString, QString> &stored,
                                                    QStringList *problems)
{
    ToolPolicyOverrides overrides;
    for (auto it = stored.cbegin(); it != stored.cend(); ++it) {
        // The tool's name has no '/' (MCP allows letters, digits, '_', '-', '.'): the last
        // one splits the server's name, which may hold any character, from the tool's.
        const qsizetype slash = it.key().lastIndexOf(QLatin1Char('/'));
        if (slash <= 0 || slash == it.key().size() - 1) {
            if (problems)
                problems->append(it.key());
            continue;
        }
        const std::optional<ToolPolicy> policy = ToolPolicyWords::fromStored(it.value());
        if (!policy) {
            if (problems)
                problems->append(it.key());
            continue;
        }
        overrides.m_policies.insert(it.key(), *policy);
    }
    return overrides;
}

QMap<QString, QString> ToolPolicyOverrides::toStored() const
{
    QMap<QString, QString> stored;
    for (auto it = m_policies.cbegin(); it != m_policies.cend(); ++it)
        stored.insert(it.key(), ToolPolicyWords::stored(it.value()));
    return stored;
}

std::optional<ToolPolicy> ToolPolicyOverrides::find(const QString &serverName,
                                                    const QString &toolName) const
{
    const auto it = m_policies.constFind(key(serverName, toolName));
    return it == m_policies.cend() ? std::nullopt : std::optional<ToolPolicy>(*it);
}

void ToolPolicyOverrides::set(const QString &serverName, const QString &toolName,
                              std::optional<ToolPolicy> policy)
{
    if (policy)
        m_policies.insert(key(serverName, toolName), *policy);
    else
        m_policies.remove(key(serverName, toolName));
}

std::shared_ptr<McpTool> ToolPolicyOverrides::apply(const std::shared_ptr<McpTool> &tool) const
{
    if (!tool)
        return tool;
    const std::optional<ToolPolicy> policy = find(tool->serverName(), tool->info().name);
    if (!policy)
        return tool;
    return tool->withOverride(*policy);
}

} // namespace AgentConsole::Mcp
