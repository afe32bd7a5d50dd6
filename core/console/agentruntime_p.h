#pragma once

// AgentRuntime's parts and their wiring (agentruntime.cpp). What each concern owns lives in
// its own service (toolpolicies.h, faultcontrol.h, mcpservers.h, turnrecovery.h,
// runtimemonitor.h, activeconnection.h); the runtime keeps what the services share: the
// registry, the ledger, the journal, the breakers, the executor, the models and the loop.
#include "agentruntime.h"
#include "runtimestartup.h"

#include "../tools/toolregistry.h"

#include <memory>

namespace AgentConsole {

class CircuitBreaker;
class CircuitBreakerRegistry;
class DuplicateTicketMonitor;
class IdempotencyLedger;
class ModelChain;
class OfflineDemoModel;
class SupportStore;
class TicketBackend;
class ToolExecutor;
class TurnJournal;

class AgentRuntime::Private
{
public:
    // Fills in what `options` leaves open (the jitter seed, the data directory, the secret
    // store) and makes the services.
    Private(AgentRuntime *q, const RuntimeOptions &options);
    ~Private();

    // Takes what the startup opened and wires the parts; ready() follows.
    void wire(StartedParts parts);
    // The model chain for the settings in force; the loop is pointed at it before the old
    // chain goes.
    void buildModels();
    // The registry from scratch: the support tools over the backend in force, the ticket
    // tool, the MCP servers' tools; the sim of a REST backend follows the backend.
    void buildTools();
    // ActiveConnection's switch: the settings in force, then the models and tools for them.
    void switchTo(const ModelOptions &model, const BackendOptions &backend);
    CircuitBreaker *toolBreaker(const QString &toolName) const;
    // The team's policy read at start, handed to the services (agentruntimepolicy.cpp).
    void applyTeamPolicy(const ManagedPolicy &policy);

    AgentRuntime *q;
    RuntimeOptions options;
    // Holds what it opened until it hands it over, or until the runtime goes after a failure.
    std::unique_ptr<RuntimeStartup> startup;
    std::shared_ptr<SupportStore> store;
    StaffMember staff;
    ToolRegistry registry;
    bool ready = false;
    // Wired, but ready() waits for support-sim's answer to the start's sim section.
    // A team console's first read of the lead's isolations (at most a connect timeout): its
    // first question must meet them. ready() follows (releaseIsolationsWait).
    bool awaitingIsolations = false;
    void releaseIsolationsWait();
    bool awaitingSim = false;
    bool started = false;
    // Declared in dependency order: what is declared later uses what is declared earlier and
    // is destroyed first. The services are made with the runtime (front ends take them before
    // it is ready); the parts they report on are attached as the start opens them.
    std::unique_ptr<TeamPolicy> teamPolicy; // docs/POLICY.md; first: the others ask it
    std::unique_ptr<ToolPolicies> policies;
    std::unique_ptr<FaultControl> faults;
    // Holds the data directory's lock: released last, after the ledger's and the journal's
    // queues have drained.
    std::unique_ptr<TurnRecovery> recovery;
    std::unique_ptr<IdempotencyLedger> ledger;
    std::unique_ptr<TurnJournal> journal;
    std::shared_ptr<const TicketBackend> tickets;
    // Stopped first when the runtime goes (~AgentRuntime): its check uses the parts above.
    std::unique_ptr<DuplicateTicketMonitor> duplicates;
    // One breaker per provider and per backend route, made with the runtime.
    std::unique_ptr<CircuitBreakerRegistry> breakers;
    std::unique_ptr<ToolExecutor> executor;
    std::unique_ptr<OfflineDemoModel> offlineModel;
    std::unique_ptr<ModelChain> models;
    // The backend's part of each route breaker's name: "embedded" or "host:port".
    QString backendName;
    std::unique_ptr<ActiveConnection> connection;
    std::unique_ptr<RuntimeMonitor> monitor;
    std::unique_ptr<AgentLoop> loop;
    // Reads the ledger's audit trail; made with the runtime, attached once the loop is there.
    std::unique_ptr<WriteAudit> audit;
    // After the loop: a server going withdraws its questions, which updates the loop's cards.
    std::unique_ptr<McpServers> mcp;
    // The team's isolations (--team): made with the runtime, started once the breakers and
    // the staff member are known; stopped (its thread) first when the runtime goes.
    std::unique_ptr<Isolations> isolations;
    // The dependencies this console can name for an isolation (Isolations::knownNames).
    QStringList isolatableNames() const;
};

} // namespace AgentConsole
