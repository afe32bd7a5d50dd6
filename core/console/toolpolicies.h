#pragma once

#include "../resilience/retrypolicy.h"

#include <QHash>
#include <QMap>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>

namespace AgentConsole {

class ToolRegistry;

// Every tool's retry policy (DESIGN.md, "Retry boundaries"), decided in one place: the agent
// loop asks policy() as each call starts and hands the answer to the executor whole, the
// window and exports read the same answer. A tool runs under, first found:
//   1. the policy staff or a scenario set for it (setPolicy);
//   2. for an MCP server's tool, the policy its annotations make of the default (a write is
//      never retried, every attempt bounded by the server's hard maximum; McpTool::
//      retryPolicy), worked out from the default in force now, so that a new jitter seed or
//      default reaches MCP tools too;
//   3. the default: RuntimeOptions::toolPolicy when one was given, else the seed article's
//      figures with full jitter from the jitter seed (RetryPolicy::jittered).
// A team's policy (docs/POLICY.md, setTeamPolicies) comes between 1 and 2 with its tools'
// policies and replaces the default of 3 with its own; when it locks the tool retry policies,
// 1 is refused (setPolicy says why) and only the team's apply.
// A change applies from the tool's next call; calls already running keep theirs. Lives on the
// runtime's thread.
class ToolPolicies final : public QObject
{
    Q_OBJECT

public:
    // `tools`: the runtime's registry (which tools there are, in which order, which are MCP
    // servers'); it outlives this. `configured`: RuntimeOptions::toolPolicy.
    ToolPolicies(const ToolRegistry *tools, std::optional<RetryPolicy> configured,
                 std::uint64_t jitterSeed, QObject *parent = nullptr);
    ~ToolPolicies() override;

    // The policy of a tool nobody set one for (3. above).
    RetryPolicy defaultPolicy() const;
    // The seed of the default's jitter (RuntimeOptions::jitterSeed at start). A scenario runs
    // on a fixed one, so that its waits are the same on every console, and puts the console's
    // back when it ends. The model providers' retries are seeded from it when they are built.
    std::uint64_t jitterSeed() const;
    void setJitterSeed(std::uint64_t seed);

    // The policy the tool's next call runs under (1, 2 or 3 above).
    RetryPolicy policy(const QString &toolName) const;
    // Refused with the reason (RetryPolicy::problem()) when a value is out of range, or the
    // tool is unknown; the tool's policy is then unchanged.
    bool setPolicy(const QString &toolName, const RetryPolicy &policy, QString *error);
    void resetPolicy(const QString &toolName);
    void resetPolicies();
    // The tools a policy may be set for, in registry order.
    QStringList tools() const;
    // The team's policies (the runtime's side, at start): its default, its tools' (jittered
    // from the seed in force when their own jitter is), and the refusal of setPolicy when the
    // policy locks them (empty: staff may still set their own).
    void setTeamPolicies(std::optional<RetryPolicy> teamDefault,
                         const QMap<QString, RetryPolicy> &byTool, const QString &lockRefusal);
    // Why staff cannot set a tool's policy ("The tool retry policies are locked by your team's
    // policy (version 2026-12-01)"); empty when they can.
    QString lockRefusal() const { return m_lockRefusal; }
    // The tools whose policy the team's policy gives.
    QStringList toolsWithTeamPolicy() const;

    // The tools whose set policy differs from the default, in registry order: flagged in the
    // window like an active fault.
    QStringList toolsWithCustomPolicy() const;
    // The policies as a turn keeps them (TurnResult::conditions): {"default": describe(),
    // "custom": {tool: describe()}} with "custom" only when there is one.
    QJsonObject conditions() const;

Q_SIGNALS:
    // A policy changed: one set or reset, the jitter seed, or staff's MCP tool policies
    // (McpServers::toolPoliciesChanged, which the runtime forwards here).
    void changed();

private:
    const ToolRegistry *m_tools;
    const std::optional<RetryPolicy> m_configured;
    std::uint64_t m_jitterSeed;
    QHash<QString, RetryPolicy> m_custom; // the tools whose policy someone set
    std::optional<RetryPolicy> m_teamDefault;
    QMap<QString, RetryPolicy> m_team; // the team policy's, by tool
    QString m_lockRefusal;
};

} // namespace AgentConsole
