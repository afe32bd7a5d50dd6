#include "logging.h"

#include <QUuid>

namespace AgentConsole {

Q_LOGGING_CATEGORY(lcResilience, "agentconsole.resilience")
Q_LOGGING_CATEGORY(lcTools, "agentconsole.tools")
Q_LOGGING_CATEGORY(lcFaults, "agentconsole.faults")
Q_LOGGING_CATEGORY(lcLlm, "agentconsole.llm")
Q_LOGGING_CATEGORY(lcAgent, "agentconsole.agent")
Q_LOGGING_CATEGORY(lcLedger, "agentconsole.ledger")
Q_LOGGING_CATEGORY(lcMcp, "agentconsole.mcp")

QString newIncidentId()
{
    return QStringLiteral("INC-")
        + QUuid::createUuid().toString(QUuid::WithoutBraces).left(8).toUpper();
}

} // namespace AgentConsole
