#include "agentruntime_p.h"

#include "activeconnection.h"
#include "duplicateticketmonitor.h"
#include "faultcontrol.h"
#include "mcpconfigfile.h"
#include "mcpservers.h"
#include "modelchain.h"
#include "runtimemonitor.h"
#include "runtimewords.h"
#include "teampolicy.h"
#include "toolpolicies.h"
#include "turnrecovery.h"
#include "writeaudit.h"

#include "../faults/faultplan.h"
#include "../ledger/idempotencyledger.h"
#include "../ledger/turnjournal.h"
#include "../llm/apikeysource.h"
#include "../llm/chatmodel.h"
#include "../llm/secretstore.h"
#include "../mcp/mcpsession.h"
#include "../mcp/mcptool.h"
#include "../resilience/circuitbreaker.h"
#include "../resilience/toolexecutor.h"
#include "../support/createtickettool.h"
#include "../support/httpsupportbackend.h"
#include "../support/httpticketbackend.h"
#include "../support/offlinedemomodel.h"
#include "../support/supportbackend.h"
#include "../support/supportstore.h"
#include "../support/supporttools.h"
#include "../support/ticketbackend.h"
#include "../team/isolations.h"
#include "../telemetry/logging.h"
#include "../turn/agentloop.h"

#include <QTimer>
#include <QFileInfo>
#include <QLockFile>
#include <QRandomGenerator>
#include <QUrl>

#include <algorithm>

namespace AgentConsole {

namespace {

RuntimeOptions filledIn(RuntimeOptions options)
{
    if (!options.jitterSeed)
        options.jitterSeed = QRandomGenerator::system()->generate64();
    if (options.dataDirectory.isEmpty())
        options.dataDirectory = RuntimeOptions::defaultDataDirectory();
    // One store for the start and every switch (a test's in-process one, or the keychain).
    if (!options.secrets)
        options.secrets = osKeychain(ApiKeySource::keychainService());
    return options;
}

} // namespace

AgentRuntime::Private::Private(AgentRuntime *q, const RuntimeOptions &given)
    : q(q)
    , options(filledIn(given))
    , teamPolicy(std::make_unique<TeamPolicy>())
    , breakers(std::make_unique<CircuitBreakerRegistry>())
{
    // Made here, in an order of their own (each takes those it reads); destroyed in the order
    // the members are declared.
    mcp = std::make_unique<McpServers>(&registry, [this] {
        // Rebuilt whole: the registry has no removal, and a server's list may have shrunk.
        if (!ready)
            return;
        buildTools();
        Q_EMIT this->q->toolsChanged();
    });
    mcp->useStoredPolicies(options.mcpToolPolicies);
    policies = std::make_unique<ToolPolicies>(&registry, options.toolPolicy, *options.jitterSeed);
    faults = std::make_unique<FaultControl>(&registry, [this] {
        // At start, the first question must meet the sim's faults: ready() follows its
        // answer, after simFaultsApplied() or faultsRefused().
        if (awaitingSim) {
            awaitingSim = false;
            if (!awaitingIsolations)
                Q_EMIT this->q->ready();
        }
    });
    recovery = std::make_unique<TurnRecovery>();
    audit = std::make_unique<WriteAudit>();
    isolations = std::make_unique<Isolations>();
    const auto chain = [this] { return models.get(); };
    connection = std::make_unique<ActiveConnection>(
        q, options.secrets,
        [this](const ModelOptions &model, const BackendOptions &backend) {
            switchTo(model, backend);
        },
        chain);
    monitor = std::make_unique<RuntimeMonitor>(breakers.get(), &registry, policies.get(),
                                               mcp.get(), connection.get(), chain);
    // Staff's MCP tool policies decide those tools' retries (ToolPolicies asks each tool as
    // registered), and are kept with the options a window saves.
    QObject::connect(mcp.get(), &McpServers::toolPoliciesChanged, policies.get(),
                     &ToolPolicies::changed);
    QObject::connect(mcp.get(), &McpServers::toolPoliciesChanged, q,
                     [this] { options.mcpToolPolicies = mcp->toolPolicies(); });
}

AgentRuntime::Private::~Private() = default;

void AgentRuntime::Private::buildModels()
{
    // The chain is rebuilt from scratch: the loop is pointed at the new one before the old
    // parts go.
    std::unique_ptr<ModelChain> old = std::move(models);
    models = ModelChain::build(options.model, connection->apiKey(), offlineModel.get(),
                               faults->liveFaults(), *breakers, policies->jitterSeed());
    if (loop) {
        loop->setModel(models->model());
        // Another provider, another context window.
        AgentLoop::TurnLimits limits = loop->turnLimits();
        limits.conversationChars = options.model.conversationBudget();
        loop->setTurnLimits(limits);
    }
}

void AgentRuntime::Private::buildTools()
{
    registry.clear();
    std::shared_ptr<const SupportBackend> backend;
    const bool rest = options.backend.kind == BackendOptions::Kind::Http;
    if (rest) {
        HttpBackendConfig config;
        config.baseUrl = QUrl(options.backend.url);
        backend = std::make_shared<HttpSupportBackend>(config);
        backendName = remoteDependencyName(QString(), options.backend.url).mid(1);
    } else {
        backend = std::make_shared<StoreSupportBackend>(store);
        backendName = QStringLiteral("embedded");
    }
    registerSupportTools(registry, backend, faults->liveFaults());
    if (rest) {
        HttpBackendConfig config;
        config.baseUrl = QUrl(options.backend.url);
        tickets = std::make_shared<HttpTicketBackend>(config);
    } else {
        tickets = std::make_shared<StoreTicketBackend>(store);
    }
    registerTicketTool(registry, tickets, faults->liveFaults());
    mcp->registerTools(registry);
    if (duplicates)
        duplicates->setBackend(tickets, store);
    // Another backend, another sim: the plan's section goes to the new one.
    faults->setBackend(rest ? QUrl(options.backend.url) : QUrl());
}

void AgentRuntime::Private::switchTo(const ModelOptions &model, const BackendOptions &backend)
{
    options.model = model;
    options.backend = backend;
    buildModels();
    buildTools();
}

CircuitBreaker *AgentRuntime::Private::toolBreaker(const QString &toolName) const
{
    // One breaker per downstream service (DESIGN.md, "Circuit breakers"): five failed
    // logistics calls must not fail the inventory lookup or the ticket. Created on first use.
    if (backendName.isEmpty())
        return nullptr;
    const std::shared_ptr<const AgentTool> tool = registry.find(toolName);
    QString service = tool ? tool->descriptor().service : QString();
    if (service.isEmpty())
        service = toolName;
    if (service.startsWith(QLatin1String("mcp:")))
        return breakers->breaker(service); // one per MCP server, whatever the support backend
    return breakers->breaker(service + QLatin1Char(':') + backendName);
}

QStringList AgentRuntime::Private::isolatableNames() const
{
    // A route by its service ("logistics": on every backend), a model provider or an MCP
    // server by its breaker's name, and every breaker made so far by its whole name.
    QStringList names = breakers->dependencies();
    for (const QString &toolName : registry.names()) {
        const std::shared_ptr<const AgentTool> tool = registry.find(toolName);
        const QString service = tool ? tool->descriptor().service : QString();
        names.append(service.isEmpty() ? toolName : service);
        if (!service.isEmpty() && !service.startsWith(QLatin1String("mcp:"))
            && !backendName.isEmpty())
            names.append(service + QLatin1Char(':') + backendName);
    }
    // Every MCP server of mcp.json, also one that is down and lists no tools now.
    for (const McpServerStatus &server : mcp->status())
        names.append(Mcp::McpTool::serviceName(server.name));
    names.removeDuplicates();
    names.sort();
    return names;
}

void AgentRuntime::Private::wire(StartedParts parts)
{
    store = std::move(parts.store);
    if (parts.faults)
        faults->startWith(*parts.faults);
    staff = parts.staff;
    if (parts.policy)
        applyTeamPolicy(*parts.policy);
    connection->startWith(parts.apiKey, store->filePath());
    ledger = std::move(parts.ledger);
    journal = std::move(parts.journal);
    duplicates = std::make_unique<DuplicateTicketMonitor>(
        TrustedContext{
            staff.userId, staff.tenantId, {}, QStringLiteral("dup-check"), Language::English},
        journal.get());

    ToolExecutor::Options executorOptions;
    executorOptions.workerThreads = std::max(2, options.toolWorkerThreads);
    executor = std::make_unique<ToolExecutor>(executorOptions);
    offlineModel = std::make_unique<OfflineDemoModel>();
    buildModels();
    buildTools();
    AgentLoop::Dependencies dependencies;
    dependencies.model = models->model();
    dependencies.tools = &registry;
    dependencies.executor = executor.get();
    dependencies.ledger = ledger.get();
    dependencies.journal = journal.get();
    dependencies.toolBreakers = [this](const QString &toolName) { return toolBreaker(toolName); };
    // Each call runs under the policy ToolPolicies decides, handed to the executor whole.
    dependencies.toolPolicies = [this](const QString &toolName) {
        return policies->policy(toolName);
    };
    dependencies.breakerRegistry = breakers.get();
    dependencies.turnConditions = [this] { return q->conditionsNow(); };
    dependencies.turnPolicy = [this] { return teamPolicy->record(); };
    // An audit row's arguments lose what an export would not show: the redactor in force,
    // copied, run on the ledger's thread.
    dependencies.auditRedaction = [this] {
        return [redactor = connection->exportRedactor()](const QJsonObject &arguments) {
            return redactor.redact(arguments);
        };
    };
    // A question asked while MCP servers start (a one-shot agent-cli, a quick staff member)
    // waits for them, bounded, so the model is offered their tools.
    dependencies.toolsReady = [this](QObject *context,
                                     std::function<void(const QStringList &)> toolsReady) {
        mcp->whenStarted(options.mcpReadyWaitMs, context, std::move(toolsReady));
    };
    loop = std::make_unique<AgentLoop>(std::move(dependencies));
    mcp->setLoop(loop.get());
    mcp->setBreakers(breakers.get());
    AgentLoop::TurnLimits limits = loop->turnLimits();
    limits.maxToolCallsPerMessage = options.maxToolCallsPerMessage;
    limits.conversationChars = options.model.conversationBudget();
    loop->setTurnLimits(limits);
    loop->setDuplicateWindow(std::chrono::minutes(options.duplicateWindowMinutes));
    loop->setSession({staff.userId, staff.tenantId, {}, {}});
    // In this order as each turn finishes: a resumed turn that finished is no longer
    // interrupted, then its calls are timed and, when it wrote, the backend checked.
    recovery->attach(std::move(parts.dataDirectoryLock), journal.get(),
                     std::move(parts.interrupted), staff.userId, staff.tenantId, loop.get());
    monitor->attach(staff, journal.get(), duplicates.get(), loop.get());
    monitor->setTeam(parts.team);
    audit->attach(ledger->auditTrail(), staff.tenantId, loop.get());
    if (!options.teamSpec.isEmpty()) {
        QString problem;
        if (!isolations->start(
                options.teamSpec, staff.userId, breakers.get(),
                [this] { return isolatableNames(); }, &problem)) {
            qCWarning(lcAgent).noquote() << "team database not used:" << problem;
        } else if (!parts.team.alone) {
            // A console started while a dependency is isolated refuses it from its first
            // question: ready() waits for the first read, or a connect timeout at most (then
            // the dock says the team database is being reached).
            awaitingIsolations = true;
            QObject::connect(isolations.get(), &Isolations::changed, q, [this] {
                if (isolations->connection() == Isolations::Connection::Connected)
                    releaseIsolationsWait();
            });
            QTimer::singleShot(std::chrono::seconds(6), q, [this] {
                if (awaitingIsolations)
                    qCWarning(lcAgent).noquote()
                        << "the lead's isolations were not read within 6 s; starting without";
                releaseIsolationsWait();
            });
        }
    }
    ready = true;
    mcp->start(options, options.secrets);
    duplicates->check();
    qCInfo(lcAgent).noquote() << "runtime ready: store" << store->filePath() << "staff"
                              << staff.userId << "tenant" << staff.tenantId << "model"
                              << models->model()->modelName() << "backoff jitter seed"
                              << QString::number(policies->jitterSeed(), 16);
    if (faults->beginSending()) { // --faults with a "sim" section
        // The first question must meet the sim's faults: ready() follows the sim's answer
        // (FaultControl's afterSimAnswer), within its timeout.
        awaitingSim = true;
        return;
    }
    if (awaitingIsolations)
        return;
    Q_EMIT q->ready();
}

void AgentRuntime::Private::releaseIsolationsWait()
{
    if (!awaitingIsolations)
        return;
    awaitingIsolations = false;
    if (ready && !awaitingSim)
        Q_EMIT q->ready();
}

AgentRuntime::AgentRuntime(const RuntimeOptions &options, QObject *parent)
    : QObject(parent)
    , d(std::make_unique<Private>(this, options))
{
}

AgentRuntime::~AgentRuntime()
{
    // First, while every part its check uses is still there (a crash fix: a check outliving
    // the runtime used a destroyed backend and store).
    if (d->duplicates)
        d->duplicates->stop();
}

void AgentRuntime::start()
{
    if (d->started)
        return;
    d->started = true;
    // mcp.json first: a broken file is reported (and left as it is) before anything starts.
    const QString mcpFile = McpConfigFile::pathFor(d->options);
    if (!d->options.mcpConfigFile.isEmpty() || QFileInfo::exists(mcpFile)) {
        QString problem;
        if (!d->mcp->readConfig(mcpFile, &problem)) {
            qCWarning(lcAgent).noquote() << "MCP configuration refused:" << problem;
            QMetaObject::invokeMethod(
                this,
                [this, problem] {
                    Q_EMIT failed(AgentRuntimeWords::tr("MCP configuration: %1").arg(problem));
                },
                Qt::QueuedConnection);
            return;
        }
    }
    d->startup = std::make_unique<RuntimeStartup>(d->options);
    connect(d->startup.get(), &RuntimeStartup::failed, this, &AgentRuntime::failed);
    connect(d->startup.get(), &RuntimeStartup::teamUnreachable, this,
            &AgentRuntime::teamUnreachable);
    connect(d->startup.get(), &RuntimeStartup::ready, this,
            [this] { d->wire(d->startup->takeParts()); });
    d->startup->start();
}

void AgentRuntime::runAlone()
{
    if (d->startup)
        d->startup->runAlone();
}

void AgentRuntime::giveUp()
{
    if (d->startup)
        d->startup->giveUp();
}

bool AgentRuntime::isReady() const
{
    return d->ready && !d->awaitingSim && !d->awaitingIsolations;
}

const RuntimeOptions &AgentRuntime::options() const
{
    return d->options;
}

AgentLoop *AgentRuntime::agentLoop() const
{
    return d->loop.get();
}

const ToolRegistry *AgentRuntime::tools() const
{
    return &d->registry;
}

QJsonObject AgentRuntime::conditionsNow() const
{
    return {{QStringLiteral("faults"), d->faults->conditions()},
            {QStringLiteral("policies"), d->policies->conditions()}};
}

ToolPolicies *AgentRuntime::policies() const
{
    return d->policies.get();
}

FaultControl *AgentRuntime::faults() const
{
    return d->faults.get();
}

McpServers *AgentRuntime::mcp() const
{
    return d->mcp.get();
}

TurnRecovery *AgentRuntime::recovery() const
{
    return d->recovery.get();
}

RuntimeMonitor *AgentRuntime::monitor() const
{
    return d->monitor.get();
}

ActiveConnection *AgentRuntime::connection() const
{
    return d->connection.get();
}

WriteAudit *AgentRuntime::audit() const
{
    return d->audit.get();
}

Isolations *AgentRuntime::isolations() const
{
    return d->isolations.get();
}

TeamPolicy *AgentRuntime::teamPolicy() const
{
    return d->teamPolicy.get();
}

} // namespace AgentConsole
