#pragma once

#include <QLoggingCategory>
#include <QString>

namespace AgentConsole {

// One category per folder of core/. Details that must never reach the model or the chat
// (exception text, SQL, URLs) are written here only.
Q_DECLARE_LOGGING_CATEGORY(lcResilience)
Q_DECLARE_LOGGING_CATEGORY(lcTools)
Q_DECLARE_LOGGING_CATEGORY(lcFaults)
Q_DECLARE_LOGGING_CATEGORY(lcLlm)
Q_DECLARE_LOGGING_CATEGORY(lcAgent)
Q_DECLARE_LOGGING_CATEGORY(lcLedger)
Q_DECLARE_LOGGING_CATEGORY(lcMcp)

// A short id that ties a generic "internal error" shown to staff to the full details in the
// local log.
QString newIncidentId();

} // namespace AgentConsole
