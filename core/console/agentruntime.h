#pragma once

#include "runtimeoptions.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <memory>

namespace AgentConsole {

class ActiveConnection;
class AgentLoop;
class FaultControl;
class Isolations;
class McpServers;
class RuntimeMonitor;
class TeamPolicy;
class ToolPolicies;
class ToolRegistry;
class TurnRecovery;
class WriteAudit;
struct RuntimeTestSeam;

// The console's front door, the same for the window and agent-cli: it composes the parts (the
// embedded store, the support tools, the executor, the models and the agent loop) and hands
// out a service per concern, as Qt Creator's ICore hands out its managers. Each service does
// its own work and is valid for the runtime's whole life (before ready() too):
//   policies()   ToolPolicies     every tool's retry policy, decided in one place
//   faults()     FaultControl     the fault plan in force and support-sim's part of it
//   mcp()        McpServers       mcp.json's servers, staff's MCP tool policies, sign-in,
//                                 the servers' questions
//   recovery()   TurnRecovery     the turn journal, interrupted turns, the data directory's lock
//   monitor()    RuntimeMonitor   status, breakers, latency, counters, duplicate tickets
//   connection() ActiveConnection the model and backend in force, their switch, the export's
//                                 redactor
//   audit()      WriteAudit       the audit trail of writes, read for the window, agent-cli
//                                 and exports
//   isolations() Isolations       a lead's isolations of a dependency for the whole team
//                                 (core/team, docs/TEAM.md; off without --team)
//   teamPolicy() TeamPolicy       the team's managed policy in force and what it locks
// A front end hands each of its panels the services that panel needs, never the runtime.
//
// start() runs RuntimeStartup (the store prepared on a worker thread, the ledger and the
// journal opened, the interrupted turns read); ready() or failed() follows, on the thread that
// owns the runtime.
class AgentRuntime final : public QObject
{
    Q_OBJECT

public:
    explicit AgentRuntime(const RuntimeOptions &options, QObject *parent = nullptr);
    ~AgentRuntime() override;

    void start();
    bool isReady() const;
    // After teamUnreachable(): work alone on this desk's own store (marked as such in the
    // status and every export), or stop (failed() follows).
    void runAlone();
    void giveUp();

    // As given, with the jitter seed, the data directory and the secret store filled in; the
    // model and backend follow ActiveConnection::apply. The jitter seed is the start's:
    // ToolPolicies owns the one in force.
    const RuntimeOptions &options() const;
    AgentLoop *agentLoop() const; // valid after ready()
    // The tools a turn may call: the support tools over the backend in force, the ticket tool,
    // and the MCP servers' tools as each server lists them (toolsChanged()).
    const ToolRegistry *tools() const;
    // What a turn starting now runs under, as it is kept with the turn (TurnResult::
    // conditions): {"faults": FaultControl::conditions(), "policies":
    // ToolPolicies::conditions()}.
    QJsonObject conditionsNow() const;

    ToolPolicies *policies() const;
    FaultControl *faults() const;
    McpServers *mcp() const;
    TurnRecovery *recovery() const;
    RuntimeMonitor *monitor() const;
    ActiveConnection *connection() const;
    WriteAudit *audit() const;
    Isolations *isolations() const;
    TeamPolicy *teamPolicy() const;

Q_SIGNALS:
    void ready();
    // A clear, one-line reason (bad fault plan, unwritable data dir, ...); nothing was lost.
    void failed(const QString &reason);
    // The team's database cannot be reached at the start (RuntimeOptions::
    // WhenTeamUnreachable::Ask): the start waits for runAlone() or giveUp().
    void teamUnreachable(const QString &reason);
    // tools() changed: a server's list, staff's MCP tool policies. RuntimeMonitor::
    // statusChanged() follows.
    void toolsChanged();

private:
    friend struct RuntimeTestSeam; // runtimetestseam.h: the executor and breakers, for tests
    class Private;
    std::unique_ptr<Private> d;
};

} // namespace AgentConsole
