#pragma once

// AgentRuntime's parts, shared by its source files (agentruntime.cpp: start-up, wiring and what
// staff change while it runs; agentruntimestatus.cpp: what the window reads back). What each
// part owns lives in its own class: the model chain (ModelChain), the fault plan's sim section
// (SimFaultSender), the MCP servers (RuntimeMcpServers).
#include "agentruntime.h"
#include "modelchain.h"
#include "runtimemcpservers.h"
#include "runtimestartup.h"
#include "simfaultsender.h"

#include "../faults/livefaults.h"
#include "../tools/toolregistry.h"

#include <QCoreApplication>
#include <QHash>
#include <QLockFile>

#include <memory>

namespace AgentConsole {

class ApiKeySource;
class DuplicateTicketMonitor;
class IdempotencyLedger;
class OfflineDemoModel;
class SupportStore;
class TicketBackend;

// Refusals and start failures the window shows, worded in its language where they are made
// (docs/TRANSLATIONS.md); agent-cli installs no translator and keeps the English source.
struct AgentRuntimeWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::AgentRuntime)
};

class AgentRuntime::Private
{
public:
    explicit Private(AgentRuntime *q);
    ~Private();

    // Takes what the startup opened and wires the parts; ready() follows.
    void wire(StartedParts parts);
    // The model chain for the settings in force; the loop is pointed at it before the old
    // chain goes.
    void buildModels();
    // The registry from scratch: the support tools over the backend in force, the ticket
    // tool, the MCP servers' tools; the sim of a REST backend follows the backend.
    void buildTools();
    // Puts the plan's sim section in force on support-sim, when it differs from what was sent
    // there; true when a request went out (its answer follows).
    bool sendSimFaults();
    void simAnswered(const SimFaultAnswer &answer);
    CircuitBreaker *toolBreaker(const QString &toolName) const;
    // The policy the tool's next call runs under, whole: its own, an MCP tool's, else the
    // default. The loop hands it to the executor, which keeps no default of its own.
    RetryPolicy effectivePolicy(const QString &toolName) const;
    // The policy of a tool staff did not set one for: the options' or the jittered default.
    RetryPolicy defaultToolPolicy() const
    {
        return options.toolPolicy.value_or(RetryPolicy::jittered(*options.jitterSeed));
    }

    AgentRuntime *q;
    RuntimeOptions options;
    // Holds what it opened until it hands it over, or until the runtime goes after a failure.
    std::unique_ptr<RuntimeStartup> startup;
    std::shared_ptr<SupportStore> store;
    // The fault plan in force, read by every tool attempt and model call as it starts.
    const std::shared_ptr<LiveFaults> faults = std::make_shared<LiveFaults>();
    QHash<QString, RetryPolicy> toolPolicies; // the tools whose policy is not the default
    ToolLatencyStats latency;
    StaffMember staff;
    QString apiKey; // never logged
    // Where the key is kept when its variable is not set; read at start and by every switch.
    std::shared_ptr<SecretStore> secrets;
    // A settings switch waiting for the keychain's answer (the newest one; older ones are
    // dropped with their source).
    std::unique_ptr<ApiKeySource> pendingKey;
    ToolRegistry registry;
    bool ready = false;
    // Wired, but ready() waits for support-sim's answer to the start's sim section.
    bool awaitingSim = false;
    bool started = false;
    // Declared in dependency order: what is declared later uses what is declared earlier and
    // is destroyed first.
    // Held while this process owns the data directory; released last, after the ledger's and
    // the journal's queues have drained.
    std::unique_ptr<QLockFile> dataDirectoryLock;
    std::unique_ptr<IdempotencyLedger> ledger;
    std::unique_ptr<TurnJournal> journal;
    InterruptedTurns interrupted;
    std::shared_ptr<const TicketBackend> tickets;
    // Stopped first when the runtime goes (~AgentRuntime): its check uses the parts below.
    std::unique_ptr<DuplicateTicketMonitor> duplicates;
    std::unique_ptr<CircuitBreakerRegistry> breakers;
    std::unique_ptr<ToolExecutor> executor;
    std::unique_ptr<OfflineDemoModel> offlineModel;
    std::unique_ptr<ModelChain> models;
    // The backend's part of each route breaker's name: "embedded" or "host:port".
    QString backendName;
    // support-sim's control API when the backend is REST.
    SimFaultSender sim;
    std::unique_ptr<AgentLoop> loop;
    // After the loop: a server going withdraws its questions, which updates the loop's cards.
    RuntimeMcpServers mcp;
};

} // namespace AgentConsole
