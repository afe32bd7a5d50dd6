// The team's managed policy handed to the runtime's services at start (docs/POLICY.md): kept
// apart from agentruntime.cpp's wiring, which it only joins at one line.
#include "agentruntime_p.h"

#include "mcpservers.h"
#include "settingkeys.h"
#include "teampolicy.h"
#include "toolpolicies.h"

namespace AgentConsole {

void AgentRuntime::Private::applyTeamPolicy(const ManagedPolicy &policy)
{
    // The startup put the same values into its own copy of the options; these are the ones
    // the models, the tools and the window read from now on.
    QString problem;
    const bool applied = TeamPolicy::applyTo(policy, &options, &problem);
    Q_ASSERT(applied);
    Q_UNUSED(applied);
    const QString lockReason = TeamPolicy::lockReasonFor(policy.version);
    policies->setTeamPolicies(policy.toolDefault, policy.toolPolicies,
                              policy.isLocked(SettingKeys::toolRetryPolicies)
                                  ? TeamPolicy::refusalFor(SettingKeys::toolRetryPolicies,
                                                           policy.version)
                                  : QString());
    if (policy.isLocked(SettingKeys::mcpToolPolicies)) {
        mcp->useStoredPolicies({});
        mcp->lockToolPolicies(
            TeamPolicy::refusalFor(SettingKeys::mcpToolPolicies, policy.version));
    }
    mcp->setAllowedServers(policy.allowedMcpServers, policy.version);
    teamPolicy->setPolicy(policy);
}

} // namespace AgentConsole
