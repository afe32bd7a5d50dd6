#pragma once

#include "mcperror.h"

#include <QHash>
#include <QMap>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

namespace AgentConsole::Mcp {

class McpTool;

// Staff's choice of an MCP tool's policy over its annotations (docs/MCP.md, "Staff policy
// overrides"). Kept in the console settings as "<server>/<tool>" = "read" |
// "idempotent-write" | "confirm"; a tool without an entry runs as its annotations say.
// Whatever is chosen, the arguments are still validated and every attempt keeps its
// deadline: an override only chooses between retried, ledger-keyed and confirmed.
namespace ToolPolicyWords {

// "read", "idempotent-write", "confirm": the words the settings file holds.
QString stored(ToolPolicy policy);
std::optional<ToolPolicy> fromStored(const QString &word);
QStringList storedWords();
// "read", "idempotent-write", "write": the words RuntimeStatus and the cards carry.
QString status(ToolPolicy policy);

} // namespace ToolPolicyWords

// The overrides in force, by "<server>/<tool>" (the server's own tool name, not the name the
// model calls, so that an override survives a server renaming nothing but its prefix).
class ToolPolicyOverrides final
{
public:
    static QString key(const QString &serverName, const QString &toolName);

    // From the stored words. A key or a word that is not one of those is left out and said
    // in `problems` ("<key>: ..."), never guessed at.
    static ToolPolicyOverrides fromStored(const QMap<QString, QString> &stored,
                                          QStringList *problems = nullptr);
    QMap<QString, QString> toStored() const;

    std::optional<ToolPolicy> find(const QString &serverName, const QString &toolName) const;
    void set(const QString &serverName, const QString &toolName, std::optional<ToolPolicy> policy);
    bool isEmpty() const { return m_policies.isEmpty(); }
    int size() const { return int(m_policies.size()); }

    // The tool as it runs with these overrides: itself when none names it, else a copy under
    // staff's policy (McpTool::withOverride), even one the annotations agree with: staff's
    // choice stays when the server later hints otherwise.
    std::shared_ptr<McpTool> apply(const std::shared_ptr<McpTool> &tool) const;

    bool operator==(const ToolPolicyOverrides &other) const = default;

private:
    QHash<QString, ToolPolicy> m_policies;
};

} // namespace AgentConsole::Mcp
