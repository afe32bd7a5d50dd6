#pragma once

// One call of a registered MCP tool as a turn runs it, without a model: through the runtime's
// executor, under the staff session the tests use, with the call's operation id as its trace
// id (how a server's question finds its card). No retries, and a 20 s attempt, so that what
// ends the call is what the test does; with `budget`, the turn's, whose deadline caps it.
// Header-only, shared by tst_mcpelicitation and tst_mcpquestion.

#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/runtimetestseam.h"
#include "core/resilience/toolexecutor.h"
#include "core/tools/toolregistry.h"

#include <QFuture>

namespace AgentConsole::Testing {

inline QFuture<ToolCallOutcome> runMcpCall(AgentRuntime *runtime, const QString &tool,
                                           const QString &operationId,
                                           RetryBudgetPtr budget = nullptr)
{
    ToolCallRequest request;
    request.tool = runtime->tools()->find(tool);
    request.context = {QStringLiteral("u-1001"), QStringLiteral("t-acme"),
                       QStringLiteral("conv"), QStringLiteral("req"), Language::English};
    RetryPolicy policy = RetryPolicy::defaults();
    policy.maxRetries = 0;
    policy.attemptTimeout = RetryPolicy::Millis(20000);
    request.policy = policy;
    request.traceId = operationId;
    request.budget = std::move(budget);
    return RuntimeTestSeam::executor(*runtime)->execute(std::move(request));
}

} // namespace AgentConsole::Testing
