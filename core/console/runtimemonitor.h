#pragma once

#include "runtimestatus.h"

#include "../async/await.h" // how its futures are taken (counterTotals()), from ui/ too
#include "../turn/toollatencystats.h"

#include <QFuture>
#include <QJsonObject>
#include <QObject>
#include <QString>

#include <functional>

namespace AgentConsole {

class ActiveConnection;
class AgentLoop;
class CircuitBreakerRegistry;
class DuplicateTicketMonitor;
class McpServers;
class ModelChain;
class ToolPolicies;
class ToolRegistry;
class TurnJournal;
struct DependencyState;
struct StaffMember;

// What the running console tells of itself, for the window's status bar and diagnostics dock,
// agent-cli and scenario runs: the status value (model, breakers worst first, MCP servers, the
// tool policy and its worst case), every breaker and its reset, what failing dependencies have
// left (breakers and the models out of the fallback chain), each tool's latency, DESIGN.md's
// counters and the backend's duplicate tickets. Decides nothing of its own but a breaker's
// reset; reads the parts it reports on. Lives on the runtime's thread.
class RuntimeMonitor final : public QObject
{
    Q_OBJECT

public:
    // The parts reported on, all the runtime's and outliving this: `breakers` (one per
    // provider and per backend route), `tools` (which calls wrote), `policies` (the default and
    // its worst case), `mcp` (its servers), `connection` (the model in force), and `models`
    // (the chain in force, rebuilt by every settings switch; null before the runtime is ready).
    RuntimeMonitor(CircuitBreakerRegistry *breakers, const ToolRegistry *tools,
                   const ToolPolicies *policies, const McpServers *mcp,
                   const ActiveConnection *connection, std::function<ModelChain *()> models,
                   QObject *parent = nullptr);
    ~RuntimeMonitor() override;

    // The model, the breakers that are not closed and the tool policy with its worst case, as
    // the window shows them; statusChanged() says when to read it again.
    RuntimeStatus status() const;
    // Closes the dependency's breaker with an empty window (the diagnostics dock's Reset);
    // false when there is no breaker of that name. statusChanged() follows.
    bool resetBreaker(const QString &dependency);
    // What failing dependencies have left (dependencystate.h); a default DependencyState
    // given back is a fresh start's: every breaker new, no model out of the chain.
    DependencyState dependencyState() const;
    void restoreDependencyState(const DependencyState &state);
    // How long each tool's calls took, over every turn this runtime ran (not stored);
    // toolLatencyChanged() says when it grew.
    const ToolLatencyStats &toolLatency() const { return m_latency; }
    // DESIGN.md's counters over every turn of this data directory, with
    // duplicate_business_object_count as last checked (absent while unknown).
    QFuture<QJsonObject> counterTotals() const;
    // Idempotency keys owning more than one ticket in the backend, as last checked: -1 while
    // unknown. Checked at start and after every turn that wrote.
    int duplicateBusinessObjects() const;
    // A duplicate check is running; duplicateBusinessObjectsChecked follows.
    bool isCheckingDuplicates() const;

    // The runtime's side, once its start opened them: who the console's staff member is, the
    // journal that sums the counters, the duplicate check, and the loop whose finished turns
    // are timed and, when they wrote, checked for duplicates.
    void attach(const StaffMember &staff, TurnJournal *journal, DuplicateTicketMonitor *duplicates,
                AgentLoop *loop);
    // Where the console keeps what a team shares, as its start found it (docs/TEAM.md).
    void setTeam(const TeamStatus &team) { m_team = team; }
    const TeamStatus &team() const { return m_team; }

Q_SIGNALS:
    // status() changed: a breaker opened, half-opened, closed or was reset, an MCP server's
    // state changed, or the settings changed.
    void statusChanged();
    // A turn finished and its calls were counted in toolLatency().
    void toolLatencyChanged();
    // A duplicate check finished; above 0 is an alert (one operationId, several tickets).
    void duplicateBusinessObjectsChecked(int count);

private:
    CircuitBreakerRegistry *m_breakers;
    const ToolRegistry *m_tools;
    const ToolPolicies *m_policies;
    const McpServers *m_mcp;
    const ActiveConnection *m_connection;
    std::function<ModelChain *()> m_models;
    ToolLatencyStats m_latency;
    QString m_staffUserId;
    QString m_staffName;
    QString m_tenantId;
    TeamStatus m_team;
    TurnJournal *m_journal = nullptr;
    DuplicateTicketMonitor *m_duplicates = nullptr;
};

} // namespace AgentConsole
