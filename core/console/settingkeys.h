#pragma once

#include <QString>
#include <QStringList>

namespace AgentConsole {

// The console's settings by key: their names in agent-console.ini (ConsoleSettings) and the
// keys a team's policy locks (docs/POLICY.md). One list, read by the settings file, the
// command line, the policy and the window.
namespace SettingKeys {
inline const QString provider = QStringLiteral("model/provider");
inline const QString baseUrl = QStringLiteral("model/baseUrl");
inline const QString model = QStringLiteral("model/name");
inline const QString apiKeyVariable = QStringLiteral("model/apiKeyVariable");
inline const QString stream = QStringLiteral("model/stream");
inline const QString fallback = QStringLiteral("model/fallback");
inline const QString contextChars = QStringLiteral("model/contextChars");
inline const QString backendKind = QStringLiteral("backend/kind");
inline const QString backendUrl = QStringLiteral("backend/url");
inline const QString ledger = QStringLiteral("ledger/spec");
inline const QString team = QStringLiteral("team/database");
inline const QString language = QStringLiteral("ui/language");
inline const QString mcpToolPolicies = QStringLiteral("mcpPolicies");
// Not in the settings file, but settings staff change in the window or on the command line.
inline const QString secondary = QStringLiteral("model/secondary"); // --secondary-*
inline const QString toolRetryPolicies = QStringLiteral("tools/retryPolicies"); // the editor
inline const QString mcpServers = QStringLiteral("mcp/servers"); // mcp.json from the window

// Every key a policy may lock, in the settings dialog's order.
inline QStringList lockable()
{
    return {provider,  baseUrl,      model,     apiKeyVariable,  stream,
            fallback,  contextChars, secondary, backendKind,     backendUrl,
            ledger,    team,         language,  mcpToolPolicies, toolRetryPolicies,
            mcpServers};
}
} // namespace SettingKeys

} // namespace AgentConsole
