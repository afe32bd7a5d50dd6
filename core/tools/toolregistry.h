#pragma once

#include "../resilience/tooloperation.h"
#include "tooldescriptor.h"

#include <QList>
#include <QString>

#include <memory>

namespace AgentConsole {

// A tool the agent can offer to the model: something the executor can run, plus the
// description and argument schema the model is given.
class SupportTool : public ToolOperation
{
public:
    virtual ToolDescriptor descriptor() const = 0;
    QString name() const override { return descriptor().name; }
};

class ToolRegistry final
{
public:
    void add(std::shared_ptr<const SupportTool> tool);
    // Forgets every tool; calls already running keep theirs alive until they finish.
    void clear() { m_tools.clear(); }
    std::shared_ptr<const SupportTool> find(const QString &name) const;
    QList<ToolDescriptor> descriptors() const;
    QStringList names() const;

private:
    QList<std::shared_ptr<const SupportTool>> m_tools;
};

} // namespace AgentConsole
