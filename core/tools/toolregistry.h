#pragma once

#include "agenttool.h"

#include <QList>
#include <QString>

#include <memory>

namespace AgentConsole {

class ToolRegistry final
{
public:
    void add(std::shared_ptr<const AgentTool> tool);
    // Forgets every tool; calls already running keep theirs alive until they finish.
    void clear() { m_tools.clear(); }
    std::shared_ptr<const AgentTool> find(const QString &name) const;
    QList<ToolDescriptor> descriptors() const;
    QStringList names() const;

private:
    QList<std::shared_ptr<const AgentTool>> m_tools;
};

} // namespace AgentConsole
