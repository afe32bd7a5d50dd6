#include "runtimetestseam.h"

#include "agentruntime_p.h"

namespace AgentConsole {

ToolExecutor *RuntimeTestSeam::executor(const AgentRuntime &runtime)
{
    return runtime.d->executor.get();
}

CircuitBreakerRegistry *RuntimeTestSeam::breakers(const AgentRuntime &runtime)
{
    return runtime.d->breakers.get();
}

} // namespace AgentConsole
