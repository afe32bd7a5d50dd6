#include "agentruntime_p.h"

#include "connectionsettings.h"
#include "dependencystate.h"
#include "duplicateticketmonitor.h"
#include "mcpconfigfile.h"

#include "../faults/faultplan.h"
#include "../ledger/idempotencyledger.h"
#include "../ledger/turnjournal.h"
#include "../llm/apikeysource.h"
#include "../llm/secretstore.h"
#include "../resilience/circuitbreaker.h"
#include "../resilience/toolexecutor.h"
#include "../support/createtickettool.h"
#include "../support/httpsupportbackend.h"
#include "../support/httpticketbackend.h"
#include "../support/offlinedemomodel.h"
#include "../support/simfaultcontrol.h"
#include "../support/supportbackend.h"
#include "../support/supportstore.h"
#include "../support/supporttools.h"
#include "../support/ticketbackend.h"
#include "../telemetry/counters.h"
#include "../telemetry/logging.h"

#include <QFileInfo>
#include <QRandomGenerator>
#include <QMetaMethod>
#include <QUrl>

#include <algorithm>

namespace AgentConsole {

AgentRuntime::Private::Private(AgentRuntime *q)
    : q(q)
    , sim([this](const SimFaultAnswer &answer) { simAnswered(answer); })
    , mcp(q, [q] {
        return q->isSignalConnected(QMetaMethod::fromSignal(&AgentRuntime::mcpQuestionAsked));
    })
{
}

AgentRuntime::Private::~Private() = default;

void AgentRuntime::Private::buildModels()
{
    // The chain is rebuilt from scratch: the loop is pointed at the new one before the old
    // parts go.
    std::unique_ptr<ModelChain> old = std::move(models);
    models = ModelChain::build(options.model, apiKey, offlineModel.get(), faults, *breakers,
                               *options.jitterSeed);
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
    if (options.backend.kind == BackendOptions::Kind::Http) {
        HttpBackendConfig config;
        config.baseUrl = QUrl(options.backend.url);
        backend = std::make_shared<HttpSupportBackend>(config);
        backendName = remoteDependencyName(QString(), options.backend.url).mid(1);
    } else {
        backend = std::make_shared<StoreSupportBackend>(store);
        backendName = QStringLiteral("embedded");
    }
    registerSupportTools(registry, backend, faults);
    if (options.backend.kind == BackendOptions::Kind::Http) {
        HttpBackendConfig config;
        config.baseUrl = QUrl(options.backend.url);
        tickets = std::make_shared<HttpTicketBackend>(config);
    } else {
        tickets = std::make_shared<StoreTicketBackend>(store);
    }
    registerTicketTool(registry, tickets, faults);
    mcp.registerTools(registry, defaultToolPolicy());
    if (duplicates)
        duplicates->setBackend(tickets, store);

    // Another backend, another sim: the plan's section goes to the new one.
    const bool rest = options.backend.kind == BackendOptions::Kind::Http;
    if (sim.setBackend(rest ? QUrl(options.backend.url) : QUrl()) && rest && ready)
        sendSimFaults();
}

bool AgentRuntime::Private::sendSimFaults()
{
    switch (sim.send()) {
    case SimFaultSender::Outcome::Sent:
        return true;
    case SimFaultSender::Outcome::NeedsRestBackend:
        qCWarning(lcAgent) << "fault plan: the sim section needs a REST backend; not sent";
        Q_EMIT q->faultsRefused(AgentRuntimeWords::tr(
            "the support-sim faults apply only when the backend is REST (support-sim); "
            "they were not sent"));
        return false;
    case SimFaultSender::Outcome::Nothing:
        return false;
    }
    return false;
}

void AgentRuntime::Private::simAnswered(const SimFaultAnswer &answer)
{
    if (answer.isApplied())
        Q_EMIT q->simFaultsApplied();
    else
        Q_EMIT q->faultsRefused(answer.reason);
    // At start, the first question must meet the sim's faults: ready() follows its answer.
    if (awaitingSim) {
        awaitingSim = false;
        Q_EMIT q->ready();
    }
}

CircuitBreaker *AgentRuntime::Private::toolBreaker(const QString &toolName) const
{
    // One breaker per downstream service (DESIGN.md, "Circuit breakers"): five failed
    // logistics calls must not fail the inventory lookup or the ticket. Created on first use.
    if (!breakers || backendName.isEmpty())
        return nullptr;
    const std::shared_ptr<const AgentTool> tool = registry.find(toolName);
    QString service = tool ? tool->descriptor().service : QString();
    if (service.isEmpty())
        service = toolName;
    if (service.startsWith(QLatin1String("mcp:")))
        return breakers->breaker(service); // one per MCP server, whatever the support backend
    return breakers->breaker(service + QLatin1Char(':') + backendName);
}

RetryPolicy AgentRuntime::Private::effectivePolicy(const QString &toolName) const
{
    const auto it = toolPolicies.constFind(toolName);
    if (it != toolPolicies.cend())
        return *it;
    return mcp.toolPolicy(toolName).value_or(defaultToolPolicy());
}

void AgentRuntime::Private::wire(StartedParts parts)
{
    store = std::move(parts.store);
    if (parts.faults) {
        faults->set(*parts.faults);
        sim.setSection(parts.faults->simFaults());
    }
    staff = parts.staff;
    apiKey = parts.apiKey;
    dataDirectoryLock = std::move(parts.dataDirectoryLock);
    ledger = std::move(parts.ledger);
    journal = std::move(parts.journal);
    interrupted = std::move(parts.interrupted);
    duplicates = std::make_unique<DuplicateTicketMonitor>(
        TrustedContext{staff.userId, staff.tenantId, {}, QStringLiteral("dup-check"),
                       Language::English},
        journal.get());
    QObject::connect(duplicates.get(), &DuplicateTicketMonitor::checked, q,
                     &AgentRuntime::duplicateBusinessObjectsChecked);
    breakers = std::make_unique<CircuitBreakerRegistry>();
    // The registry re-emits the changes of every breaker, including those it creates later.
    QObject::connect(breakers.get(), &CircuitBreakerRegistry::stateChanged, q,
                     &AgentRuntime::statusChanged);

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
    dependencies.toolPolicies = [this](const QString &toolName) {
        return effectivePolicy(toolName);
    };
    dependencies.breakerRegistry = breakers.get();
    dependencies.turnConditions = [this] { return q->conditionsNow(); };
    // A question asked while MCP servers start (a one-shot agent-cli, a quick staff member)
    // waits for them, bounded, so the model is offered their tools.
    dependencies.toolsReady = [this](QObject *context,
                                     std::function<void(const QStringList &)> toolsReady) {
        mcp.whenStarted(options.mcpReadyWaitMs, context, std::move(toolsReady));
    };
    loop = std::make_unique<AgentLoop>(std::move(dependencies));
    mcp.setLoop(loop.get());
    AgentLoop::TurnLimits limits = loop->turnLimits();
    limits.maxToolCallsPerMessage = options.maxToolCallsPerMessage;
    limits.conversationChars = options.model.conversationBudget();
    loop->setTurnLimits(limits);
    loop->setDuplicateWindow(std::chrono::minutes(options.duplicateWindowMinutes));
    loop->setSession({staff.userId, staff.tenantId, {}});
    QObject::connect(loop.get(), &AgentLoop::turnFinished, q, [this](const TurnResult &result) {
        // A resumed turn that finished is no longer interrupted (a failed answer is offered
        // again at the next start, from the journal).
        interrupted.take(result.conversationId, result.requestId);
        latency.recordTurn(result);
        Q_EMIT q->toolLatencyChanged();
        const bool wrote = std::any_of(result.toolCalls.cbegin(), result.toolCalls.cend(),
                                       [this](const ToolCallRecord &call) {
            const auto tool = registry.find(call.name);
            return tool && tool->descriptor().hasSideEffects;
        });
        if (wrote)
            duplicates->check(result.conversationId, result.requestId);
    });
    ready = true;
    mcp.start(options, secrets, [this] {
        // Rebuilt whole: the registry has no removal, and a server's list may have shrunk.
        buildTools();
        Q_EMIT q->toolsChanged();
        Q_EMIT q->statusChanged();
    });
    duplicates->check();
    qCInfo(lcAgent).noquote() << "runtime ready: store" << store->filePath() << "staff"
                              << staff.userId << "tenant" << staff.tenantId << "model"
                              << models->model()->modelName() << "backoff jitter seed"
                              << QString::number(*options.jitterSeed, 16);
    if (sendSimFaults()) { // --faults with a "sim" section
        // The first question must meet the sim's faults: ready() follows the sim's answer
        // (after simFaultsApplied() or faultsRefused(), simAnswered), within its timeout.
        awaitingSim = true;
        return;
    }
    Q_EMIT q->ready();
}

AgentRuntime::AgentRuntime(const RuntimeOptions &options, QObject *parent)
    : QObject(parent)
    , d(std::make_unique<Private>(this))
{
    d->options = options;
    if (!d->options.jitterSeed)
        d->options.jitterSeed = QRandomGenerator::system()->generate64();
    if (d->options.dataDirectory.isEmpty())
        d->options.dataDirectory = RuntimeOptions::defaultDataDirectory();
    // One store for the start and every switch (a test's in-process one, or the keychain).
    if (!d->options.secrets)
        d->options.secrets = osKeychain(ApiKeySource::keychainService());
    d->secrets = d->options.secrets;
    QStringList refused;
    d->mcp.setOverrides(
        Mcp::ToolPolicyOverrides::fromStored(d->options.mcpToolPolicies, &refused));
    for (const QString &key : std::as_const(refused))
        qCWarning(lcAgent).noquote() << "MCP tool policy" << key << "not understood; not used";
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
        if (!d->mcp.readConfig(mcpFile, &problem)) {
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
    connect(d->startup.get(), &RuntimeStartup::ready, this,
            [this] { d->wire(d->startup->takeParts()); });
    d->startup->start();
}

const Mcp::ServerSet *AgentRuntime::mcpServers() const
{
    return d->mcp.servers();
}

void AgentRuntime::closeMcpServers(int timeoutMs, QObject *context, std::function<void()> done)
{
    d->mcp.close(timeoutMs, context, std::move(done));
}

QMap<QString, QString> AgentRuntime::mcpToolPolicies() const
{
    return d->mcp.overrides().toStored();
}

void AgentRuntime::setBrowserOpener(std::function<bool(const QUrl &url)> opener)
{
    d->mcp.setBrowserOpener(std::move(opener));
}

bool AgentRuntime::signInToMcpServer(const QString &server)
{
    return d->mcp.signIn(server);
}

bool AgentRuntime::signOutOfMcpServer(const QString &server)
{
    return d->mcp.signOut(server);
}

bool AgentRuntime::cancelMcpSignIn(const QString &server)
{
    return d->mcp.cancelSignIn(server);
}

bool AgentRuntime::answerMcpQuestion(const QString &id, McpAnswer action,
                                     const QJsonObject &content, McpAnswerProblem *problem)
{
    return d->mcp.answer(id, action, content, problem);
}

bool AgentRuntime::setMcpToolPolicies(const QMap<QString, QString> &policies, QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    QStringList refused;
    const Mcp::ToolPolicyOverrides overrides = Mcp::ToolPolicyOverrides::fromStored(policies,
                                                                                   &refused);
    if (!refused.isEmpty())
        return fail(AgentRuntimeWords::tr("not a tool policy: %1")
                        .arg(refused.join(QStringLiteral(", "))));
    // A call planned under one policy must not run under another (confirmed, then retried).
    if (d->loop && d->loop->isBusy())
        return fail(AgentRuntimeWords::tr("wait until the running question is answered"));
    if (overrides == d->mcp.overrides())
        return true;
    d->mcp.setOverrides(overrides);
    qCInfo(lcAgent).noquote() << "MCP tool policies set by staff:" << overrides.size();
    d->options.mcpToolPolicies = overrides.toStored();
    if (d->ready) {
        d->buildTools(); // the registry has no replacement: rebuilt whole, as on list_changed
        Q_EMIT toolsChanged();
    }
    Q_EMIT policiesChanged();
    Q_EMIT statusChanged();
    return true;
}

bool AgentRuntime::applyConnectionSettings(const ModelOptions &model,
                                           const BackendOptions &backend, QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    if (!isReady())
        return fail(AgentRuntimeWords::tr("the console is not ready yet"));
    if (d->loop->isBusy())
        return fail(AgentRuntimeWords::tr("wait until the running question is answered"));
    // Its caller is the settings dialog: the field's name, not the command-line option's.
    if (const auto problem = checkConnectionSettings(model, backend))
        return fail(problem->forStaff());
    d->pendingKey.reset(); // a newer switch wins over one still waiting for the keychain
    const auto finish = [this, model, backend](const QString &key) {
        d->options.model = model;
        d->options.backend = backend;
        d->apiKey = key;
        d->buildModels();
        d->buildTools();
        qCInfo(lcAgent).noquote() << "settings applied: model" << d->models->model()->modelName()
                                  << "backend" << (backend.kind == BackendOptions::Kind::Http
                                                       ? QStringLiteral("http")
                                                       : QStringLiteral("embedded"));
        Q_EMIT settingsChanged();
        Q_EMIT statusChanged();
    };
    // The variable wins when set, as at start; then the switch is done at once. Without a
    // provider no key is needed at all.
    const QString fromVariable = ApiKeySource::fromEnvironment(model.apiKeyEnv);
    if (model.provider == ModelOptions::Provider::Offline || !fromVariable.isEmpty()) {
        finish(fromVariable);
        return true;
    }
    // Otherwise the keychain, as at start (today's key may have been stored in the dialog).
    d->pendingKey = std::make_unique<ApiKeySource>(d->secrets);
    d->pendingKey->setVariable(model.apiKeyEnv);
    connect(d->pendingKey.get(), &ApiKeySource::finished, this,
            [this, finish](const QString &key, ApiKeySource::Origin origin) {
        // Deleted after this slot returns: its signal is still being delivered.
        d->pendingKey.release()->deleteLater();
        if (origin == ApiKeySource::Origin::None)
            qCWarning(lcAgent).noquote() << "settings: no API key in the variable or the "
                                            "keychain; requests go without one";
        if (d->loop && d->loop->isBusy()) {
            // Not expected (the window asks nothing while a switch is pending), but a model
            // is never replaced under a running turn: the switch follows that turn.
            auto once = std::make_shared<QMetaObject::Connection>();
            *once = connect(d->loop.get(), &AgentLoop::turnFinished, this,
                            [finish, key, once] {
                QObject::disconnect(*once);
                finish(key);
            });
            return;
        }
        finish(key);
    });
    d->pendingKey->lookup();
    return true;
}

bool AgentRuntime::isApplyingSettings() const
{
    return d->pendingKey != nullptr;
}

std::shared_ptr<SecretStore> AgentRuntime::secretStore() const
{
    return d->secrets;
}

bool AgentRuntime::isReady() const
{
    return d->ready && !d->awaitingSim;
}

const RuntimeOptions &AgentRuntime::options() const
{
    return d->options;
}

AgentLoop *AgentRuntime::agentLoop() const
{
    return d->loop.get();
}

ToolExecutor *AgentRuntime::executor() const
{
    return d->executor.get();
}

const ToolRegistry *AgentRuntime::tools() const
{
    return &d->registry;
}

ChatModel *AgentRuntime::model() const
{
    return d->models ? d->models->model() : nullptr;
}

CircuitBreakerRegistry *AgentRuntime::breakers() const
{
    return d->breakers.get();
}

DependencyState AgentRuntime::dependencyState() const
{
    DependencyState state;
    state.breakers = d->breakers->snapshot();
    if (d->models && d->models->fallback())
        state.models = d->models->fallback()->outOfChain();
    return state;
}

void AgentRuntime::restoreDependencyState(const DependencyState &state)
{
    d->breakers->restore(state.breakers);
    if (d->models && d->models->fallback())
        d->models->fallback()->restoreOutOfChain(state.models);
}

QString AgentRuntime::storePath() const
{
    return d->store ? d->store->filePath() : QString();
}

QString AgentRuntime::backendSummary() const
{
    return d->options.backend.kind == BackendOptions::Kind::Http
        ? QStringLiteral("REST %1").arg(QUrl(d->options.backend.url).toDisplayString(
              QUrl::RemoveUserInfo | QUrl::RemoveQuery))
        : QStringLiteral("embedded store");
}

TurnJournal *AgentRuntime::journal() const
{
    return d->journal.get();
}

QList<TurnCheckpoint> AgentRuntime::interruptedTurns() const
{
    return d->interrupted.offered();
}

QList<SetAsideTurn> AgentRuntime::setAsideTurns() const
{
    return d->interrupted.setAside();
}

void AgentRuntime::dismissInterruptedTurn(const QString &conversationId,
                                          const QString &requestId)
{
    for (const TurnCheckpoint &turn : d->interrupted.take(conversationId, requestId)) {
        if (d->loop)
            d->loop->abandon(turn);
        if (d->journal)
            d->journal->dismiss(turn.conversationId, requestId);
    }
}

bool AgentRuntime::lendDataDirectory(QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    if (!d->ready || !d->dataDirectoryLock)
        return fail(AgentRuntimeWords::tr("the console is not ready yet"));
    if (d->loop->isBusy())
        return fail(AgentRuntimeWords::tr("wait until the running question is answered"));
    if (d->dataDirectoryLock->isLocked())
        d->dataDirectoryLock->unlock();
    qCInfo(lcAgent).noquote() << "data directory lent to another process";
    return true;
}

bool AgentRuntime::isDataDirectoryLent() const
{
    return d->dataDirectoryLock && !d->dataDirectoryLock->isLocked();
}

void AgentRuntime::rescanInterruptedTurns()
{
    if (!d->ready || !d->journal) {
        Q_EMIT interruptedTurnsRescanned(AgentRuntimeWords::tr("the console is not ready yet"));
        return;
    }
    // A lock left by a killed child is stale (its process is gone) and is taken over.
    if (isDataDirectoryLent() && !d->dataDirectoryLock->tryLock(0)) {
        qint64 pid = 0;
        QString host;
        QString application;
        d->dataDirectoryLock->getLockInfo(&pid, &host, &application);
        Q_EMIT interruptedTurnsRescanned(
            AgentRuntimeWords::tr("another Agent Console process (pid %1) still holds the "
                                  "data directory")
                .arg(pid));
        return;
    }
    await(d->journal->resumable(), this, [this](const QList<JournalEntry> &entries) {
        InterruptedTurns turns;
        turns.sortOut(entries, d->staff.userId, d->staff.tenantId);
        d->interrupted = std::move(turns);
        Q_EMIT interruptedTurnsRescanned(QString());
    });
}

QFuture<QJsonObject> AgentRuntime::counterTotals() const
{
    if (!d->journal)
        return QtFuture::makeReadyFuture(QJsonObject());
    // The duplicate count is the backend's figure now, not a sum over turns.
    const QString duplicates = Metrics::counterName(Metrics::Counter::DuplicateBusinessObject);
    const int figure = duplicateBusinessObjects();
    if (figure >= 0)
        return d->journal->counterTotals({{duplicates, figure}});
    return d->journal->counterTotals({}, {duplicates});
}

bool AgentRuntime::isCheckingDuplicates() const
{
    return d->duplicates && d->duplicates->isChecking();
}

int AgentRuntime::duplicateBusinessObjects() const
{
    return d->duplicates ? d->duplicates->count() : -1;
}

} // namespace AgentConsole
