#pragma once

#include "../resilience/tooloperation.h"
#include "tooldescriptor.h"

#include <QString>

namespace AgentConsole {

// A tool the agent can offer to the model, whatever its domain: something the executor can
// run, plus the description and argument schema the model is given and the labels staff see.
class AgentTool : public ToolOperation
{
public:
    virtual ToolDescriptor descriptor() const = 0;
    QString name() const override { return descriptor().name; }
};

} // namespace AgentConsole
