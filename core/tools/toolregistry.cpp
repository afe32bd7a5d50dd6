#include "toolregistry.h"

namespace AgentConsole {

void ToolRegistry::add(std::shared_ptr<const AgentTool> tool)
{
    Q_ASSERT(tool && !find(tool->name()));
    m_tools.append(std::move(tool));
}

std::shared_ptr<const AgentTool> ToolRegistry::find(const QString &name) const
{
    for (const auto &tool : m_tools) {
        if (tool->name() == name)
            return tool;
    }
    return nullptr;
}

QList<ToolDescriptor> ToolRegistry::descriptors() const
{
    QList<ToolDescriptor> all;
    for (const auto &tool : m_tools)
        all.append(tool->descriptor());
    return all;
}

QStringList ToolRegistry::names() const
{
    QStringList all;
    for (const auto &tool : m_tools)
        all.append(tool->name());
    return all;
}

} // namespace AgentConsole
