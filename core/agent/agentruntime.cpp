#include "agentruntime.h"

#include "../faults/faultplan.h"
#include "../faults/livefaults.h"
#include "../ledger/idempotencyledger.h"
#include "../ledger/turnjournal.h"
#include "../llm/apikeysource.h"
#include "../llm/fallbackchatmodel.h"
#include "../llm/faultychatmodel.h"
#include "../support/offlinedemomodel.h"
#include "../support/simfaultcontrol.h"
#include "../llm/openaicompatiblemodel.h"
#include "../llm/secretstore.h"
#include "../resilience/circuitbreaker.h"
#include "../resilience/toolexecutor.h"
#include "../telemetry/counters.h"
#include "../telemetry/logging.h"
#include "../support/createtickettool.h"
#include "../support/httpsupportbackend.h"
#include "../support/httpticketbackend.h"
#include "../support/ticketbackend.h"
#include "../support/supportbackend.h"
#include "../support/supportstore.h"
#include "../support/supporttools.h"
#include "../mcp/mcpserver.h"
#include "../mcp/mcptoolpolicy.h"
#include "../oauth/authorizer.h"
#include "mcpsignin.h"
#include "../tools/toolregistry.h"
#include "connectionsettings.h"
#include "duplicateticketmonitor.h"
#include "mcpconfigfile.h"
#include "runtimestartup.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <QLockFile>
#include <QMetaMethod>
#include <QPointer>
#include <QUrl>

#include <algorithm>

namespace AgentConsole {

namespace {

// Refusals and start failures the window shows, worded in its language where they are made
// (docs/TRANSLATIONS.md); agent-cli installs no translator and keeps the English source.
struct AgentRuntimeWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::AgentRuntime)
};

} // namespace

class AgentRuntime::Private
{
public:
    explicit Private(AgentRuntime *q)
        : q(q)
    {
    }

    // Takes what the startup opened and wires the parts; ready() follows.
    void wire(StartedParts parts);
    void buildModels();
    void buildTools();
    // Puts simSection in force on support-sim, when it differs from what was sent there;
    // true when a request went out (its answer follows).
    bool sendSimFaults();
    QString dependencyName(const QString &kind, const QString &url) const;
    CircuitBreaker *toolBreaker(const QString &toolName) const;

    AgentRuntime *q;
    RuntimeOptions options;
    // Holds what it opened until it hands it over, or until the runtime goes after a failure.
    std::unique_ptr<RuntimeStartup> startup;
    std::shared_ptr<SupportStore> store;
    // The fault plan in force, read by every tool attempt and model call as it starts.
    const std::shared_ptr<LiveFaults> faults = std::make_shared<LiveFaults>();
    QHash<QString, RetryPolicy> toolPolicies; // the tools whose policy is not the default
    // An MCP tool's own policy, from its annotations: its "default" when none was set by hand.
    QHash<QString, RetryPolicy> mcpPolicies;
    ToolLatencyStats latency;
    StaffMember staff;
    QString apiKey; // never logged
    // Where the key is kept when its variable is not set; read at start and by every switch.
    std::shared_ptr<SecretStore> secrets;
    std::function<bool(const QUrl &)> browserOpener;
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
    std::unique_ptr<OpenAiCompatibleModel> remoteModel;
    std::unique_ptr<OpenAiCompatibleModel> secondaryModel;
    std::unique_ptr<FaultyChatModel> faultyModel; // the primary, under the live model faults
    std::unique_ptr<FaultyChatModel> faultySecondaryModel; // the secondary, when configured
    std::unique_ptr<FallbackChatModel> fallbackModel;
    ChatModel *model = nullptr; // the one the loop talks to
    // The backend's part of each route breaker's name: "embedded" or "host:port".
    QString backendName;
    // support-sim's control API when the backend is REST; null with the embedded store.
    std::unique_ptr<SimFaultControl> simControl;
    QJsonObject simSection; // the plan's "sim" section in force
    std::optional<QJsonObject> simSent; // what this console last set on the sim, if anything
    std::unique_ptr<AgentLoop> loop;
    // The MCP servers' questions to staff that are open, by the id the front ends answer by.
    // Declared before `mcp`: a server going withdraws its questions into this.
    QHash<QString, QPointer<Mcp::PendingElicitation>> questions;
    quint64 questionsAsked = 0;
    void askStaff(const QString &server, Mcp::PendingElicitation *pending);
    // The MCP servers; their tools are registered after the built-in ones by buildTools().
    std::optional<Mcp::Config> mcpConfig;
    std::unique_ptr<Mcp::ServerSet> mcp;
    // Staff's policies over the annotations (setMcpToolPolicies), applied as tools register.
    Mcp::ToolPolicyOverrides mcpOverrides;
    void startMcp();
    void addMcpTools();
};

QString AgentRuntime::Private::dependencyName(const QString &kind, const QString &url) const
{
    const QUrl parsed(url);
    const int defaultPort = parsed.scheme() == QLatin1String("https") ? 443 : 80;
    return QStringLiteral("%1:%2:%3").arg(kind, parsed.host()).arg(parsed.port(defaultPort));
}

namespace {

void applyTiming(OpenAiConfig &config, const std::optional<ModelOptions::Timing> &timing)
{
    if (!timing)
        return;
    config.connectTimeoutMs = timing->connectTimeoutMs;
    config.idleTimeoutMs = timing->idleTimeoutMs;
    config.initialBackoffMs = timing->initialBackoffMs;
    config.retryAfterCapMs = timing->retryAfterCapMs;
}

} // namespace

void AgentRuntime::Private::buildModels()
{
    // The chain is rebuilt from scratch: the loop is pointed at the new one before the old
    // parts go.
    std::unique_ptr<OpenAiCompatibleModel> oldRemote = std::move(remoteModel);
    std::unique_ptr<OpenAiCompatibleModel> oldSecondary = std::move(secondaryModel);
    std::unique_ptr<FaultyChatModel> oldFaulty = std::move(faultyModel);
    std::unique_ptr<FaultyChatModel> oldFaultySecondary = std::move(faultySecondaryModel);
    std::unique_ptr<FallbackChatModel> oldFallback = std::move(fallbackModel);

    // Without a provider the offline demo model is the primary, and it stands in for one
    // under the fault plan's model faults: with its own breaker, and the un-faulted offline
    // model after it, "quota exhausted, falls back" is shown with no network (docs/FAULTS.md).
    ChatModel *primary = offlineModel.get();
    QString primaryBreaker = QStringLiteral("model:offline");
    FaultyChatModel::ProviderTiming primaryTiming = FaultyChatModel::ProviderTiming::standIn();
    const ModelOptions &settings = options.model;
    if (settings.provider == ModelOptions::Provider::OpenAiCompatible) {
        OpenAiConfig config;
        config.baseUrl = QUrl(settings.baseUrl);
        config.model = settings.model;
        config.apiKey = apiKey;
        config.stream = settings.stream;
        config.extraHeaders = settings.extraHeaders;
        applyTiming(config, settings.timing);
        remoteModel = std::make_unique<OpenAiCompatibleModel>(config);
        primary = remoteModel.get();
        primaryBreaker = dependencyName(QStringLiteral("model"), settings.baseUrl);
        primaryTiming = FaultyChatModel::ProviderTiming::of(config);
    }
    // The fault sits where the provider would fail, so a fallback can still answer. Always
    // in the chain: the fault panel may set a model fault at any time.
    faultyModel = std::make_unique<FaultyChatModel>(primary, faults, FaultPlan::Provider::Primary);
    faultyModel->setTiming(primaryTiming);
    QList<FallbackChatModel::Link> chain{
        {faultyModel.get(), breakers->breaker(primaryBreaker)}};
    const bool remote = settings.provider != ModelOptions::Provider::Offline;
    if (remote && settings.hasSecondary()) {
        OpenAiConfig config;
        config.baseUrl = QUrl(settings.secondaryBaseUrl);
        config.model = settings.secondaryModel;
        config.apiKey = ApiKeySource::fromEnvironment(settings.secondaryApiKeyEnv);
        config.stream = settings.stream;
        config.extraHeaders = settings.extraHeaders;
        applyTiming(config, settings.timing);
        secondaryModel = std::make_unique<OpenAiCompatibleModel>(config);
        faultySecondaryModel = std::make_unique<FaultyChatModel>(
            secondaryModel.get(), faults, FaultPlan::Provider::Secondary);
        faultySecondaryModel->setTiming(FaultyChatModel::ProviderTiming::of(config));
        chain.append({faultySecondaryModel.get(),
                      breakers->breaker(dependencyName(QStringLiteral("model"),
                                                       settings.secondaryBaseUrl))});
    }
    // Last and never faulted: the answer of last resort.
    if (settings.fallbackToOffline)
        chain.append({offlineModel.get(), nullptr});
    fallbackModel = std::make_unique<FallbackChatModel>(chain);
    model = fallbackModel.get();
    if (loop)
        loop->setModel(model);
}

void AgentRuntime::Private::buildTools()
{
    registry.clear();
    std::shared_ptr<const SupportBackend> backend;
    if (options.backend.kind == BackendOptions::Kind::Http) {
        HttpBackendConfig config;
        config.baseUrl = QUrl(options.backend.url);
        backend = std::make_shared<HttpSupportBackend>(config);
        backendName = dependencyName(QString(), options.backend.url).mid(1);
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
    addMcpTools();
    if (duplicates)
        duplicates->setBackend(tickets, store);

    // Another backend, another sim: the plan's section goes to the new one.
    const QUrl simUrl = options.backend.kind == BackendOptions::Kind::Http
        ? QUrl(options.backend.url)
        : QUrl();
    if ((simControl ? simControl->backendUrl() : QUrl()) != simUrl) {
        simControl.reset();
        simSent.reset();
        if (simUrl.isValid()) {
            simControl = std::make_unique<SimFaultControl>(simUrl);
            QObject::connect(simControl.get(), &SimFaultControl::answered, q,
                             [this](const SimFaultAnswer &answer) {
                if (answer.isApplied())
                    Q_EMIT q->simFaultsApplied();
                else
                    Q_EMIT q->faultsRefused(answer.reason);
            });
            if (ready)
                sendSimFaults();
        }
    }
}

bool AgentRuntime::Private::sendSimFaults()
{
    if (!simControl) {
        if (!simSection.isEmpty()) {
            qCWarning(lcAgent) << "fault plan: the sim section needs a REST backend; not sent";
            Q_EMIT q->faultsRefused(AgentRuntimeWords::tr(
                "the support-sim faults apply only when the backend is REST (support-sim); "
                "they were not sent"));
        }
        return false;
    }
    if (!simSection.isEmpty()) {
        // Sent only when it changed: a PUT restarts the sim's counts ("times").
        if (simSent && *simSent == simSection)
            return false;
        simControl->put(simSection);
        simSent = simSection;
        return true;
    }
    if (simSent) {
        // Only what this console set is reset, never faults the sim was started with.
        simControl->reset();
        simSent.reset();
        return true;
    }
    return false;
}

void AgentRuntime::Private::startMcp()
{
    if (!mcpConfig || mcpConfig->servers.isEmpty()) {
        QMetaObject::invokeMethod(q, &AgentRuntime::mcpSettled, Qt::QueuedConnection);
        return;
    }
    Mcp::Server::Options serverOptions;
    serverOptions.tool.idleTimeoutMs = options.mcpIdleTimeoutMs;
    serverOptions.tool.hardMaximumMs = options.mcpHardMaximumMs;
    // ${keychain:...} references in mcp.json are read from the runtime's store (docs/MCP.md).
    serverOptions.secrets = [store = secrets](const QString &key, QObject *context,
                                              std::function<void(const Mcp::SecretLookup &)> done) {
        store->read(key, context, [done = std::move(done)](const SecretAnswer &answer) {
            using Status = Mcp::SecretLookup::Status;
            done({answer.status == SecretAnswer::Status::Found      ? Status::Found
                  : answer.status == SecretAnswer::Status::NotFound ? Status::NotFound
                                                                    : Status::Failed,
                  answer.secret, answer.problem});
        });
    };
    // OAuth sign-ins: tokens in the same keychain, the browser through the front end.
    serverOptions.signIn.whenAsked = options.mcpSignInWhenAsked;
    serverOptions.signIn.timeoutMs = options.mcpSignInTimeoutMs;
    serverOptions.signIn.grants = keychainGrants(secrets);
    serverOptions.signIn.openBrowser = [this](const QUrl &url) {
        return browserOpener && browserOpener(url);
    };
    // Elicitation (form mode): asked through the front end, declined when none listens.
    serverOptions.questions = [this](const QString &server, Mcp::PendingElicitation *pending) {
        askStaff(server, pending);
    };
    mcp = std::make_unique<Mcp::ServerSet>(*mcpConfig, serverOptions);
    QObject::connect(mcp.get(), &Mcp::ServerSet::signInChanged, q, &AgentRuntime::statusChanged);
    QObject::connect(mcp.get(), &Mcp::ServerSet::toolsChanged, q, [this] {
        // Rebuilt whole: the registry has no removal, and a server's list may have shrunk.
        buildTools();
        Q_EMIT q->toolsChanged();
        Q_EMIT q->statusChanged();
    });
    QObject::connect(mcp.get(), &Mcp::ServerSet::stateChanged, q, &AgentRuntime::statusChanged);
    QObject::connect(mcp.get(), &Mcp::ServerSet::settled, q, &AgentRuntime::mcpSettled);
    mcp->start();
}

void AgentRuntime::Private::askStaff(const QString &server, Mcp::PendingElicitation *pending)
{
    if (!q->isSignalConnected(QMetaMethod::fromSignal(&AgentRuntime::mcpQuestionAsked))) {
        qCInfo(lcAgent).noquote() << "MCP server" << server
                                  << "asked staff a question; nobody can answer: declined";
        pending->answer(Mcp::ElicitationAction::Decline);
        return;
    }
    const QString id = QStringLiteral("mcp-question-%1").arg(++questionsAsked);
    McpQuestion question = pending->question();
    question.server = server;
    question.operationId = pending->relatedTag();
    if (loop && !question.operationId.isEmpty())
        question.toolTitle = loop->setToolCallQuestion(question.operationId, server,
                                                       ToolCallRecord::Question::Waiting);
    questions.insert(id, pending);
    QObject::connect(pending, &Mcp::PendingElicitation::ended, q,
                     [this, id, server, operationId = question.operationId](
                         Mcp::PendingElicitation::End how) {
        questions.remove(id);
        // An answered question's card is set by answerMcpQuestion, which knows the action.
        if (how != Mcp::PendingElicitation::End::Answered && loop && !operationId.isEmpty())
            loop->setToolCallQuestion(operationId, server, ToolCallRecord::Question::Withdrawn);
        Q_EMIT q->mcpQuestionEnded(id, how == Mcp::PendingElicitation::End::Answered
                                           ? McpQuestionEnd::Answered
                                       : how == Mcp::PendingElicitation::End::Withdrawn
                                           ? McpQuestionEnd::Withdrawn
                                           : McpQuestionEnd::CancelledByServer);
    });
    Q_EMIT q->mcpQuestionAsked(id, question);
}

bool AgentRuntime::answerMcpQuestion(const QString &id, McpAnswer action,
                                     const QJsonObject &content, McpAnswerProblem *problem)
{
    const QPointer<Mcp::PendingElicitation> pending = d->questions.value(id);
    if (!pending || pending->isFinished())
        return false;
    const QString operationId = pending->relatedTag();
    if (!pending->answer(action, content, problem))
        return false;
    if (d->loop && !operationId.isEmpty()) {
        using Question = ToolCallRecord::Question;
        d->loop->setToolCallQuestion(operationId, QString(),
                                     action == McpAnswer::Accept    ? Question::Accepted
                                     : action == McpAnswer::Decline ? Question::Declined
                                                                    : Question::Cancelled);
    }
    return true;
}

void AgentRuntime::Private::addMcpTools()
{
    mcpPolicies.clear();
    if (!mcp)
        return;
    const RetryPolicy base = options.toolPolicy.value_or(RetryPolicy::defaults());
    for (const std::shared_ptr<Mcp::McpTool> &listed : mcp->tools()) {
        // Staff's policy, where one is set, decides the descriptor (confirmation, ledger) and
        // the retries below; the annotations' otherwise.
        const std::shared_ptr<Mcp::McpTool> tool = mcpOverrides.apply(listed);
        if (registry.find(tool->name())) {
            qCWarning(lcAgent).noquote() << "MCP tool" << tool->name()
                                         << "not offered: the name is taken";
            continue;
        }
        registry.add(tool);
        // The annotations' policy (a write is never retried; the hard maximum bounds every
        // attempt), unless someone set one for this tool by hand.
        mcpPolicies.insert(tool->name(), tool->retryPolicy(base));
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

void AgentRuntime::Private::wire(StartedParts parts)
{
    store = std::move(parts.store);
    if (parts.faults) {
        faults->set(*parts.faults);
        simSection = parts.faults->simFaults();
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
    executorOptions.defaultPolicy = options.toolPolicy.value_or(RetryPolicy::defaults());
    executor = std::make_unique<ToolExecutor>(executorOptions);
    offlineModel = std::make_unique<OfflineDemoModel>();
    buildModels();
    buildTools();
    AgentLoop::Dependencies dependencies;
    dependencies.model = model;
    dependencies.tools = &registry;
    dependencies.executor = executor.get();
    dependencies.ledger = ledger.get();
    dependencies.journal = journal.get();
    dependencies.toolBreakers = [this](const QString &toolName) { return toolBreaker(toolName); };
    dependencies.toolPolicies = [this](const QString &toolName) -> std::optional<RetryPolicy> {
        const auto it = toolPolicies.constFind(toolName);
        if (it != toolPolicies.cend())
            return *it;
        const auto mcpIt = mcpPolicies.constFind(toolName);
        return mcpIt == mcpPolicies.cend() ? std::nullopt : std::optional<RetryPolicy>(*mcpIt);
    };
    dependencies.breakerRegistry = breakers.get();
    // A question asked while MCP servers start (a one-shot agent-cli, a quick staff member)
    // waits for them, bounded, so the model is offered their tools.
    dependencies.toolsReady = [this](QObject *context,
                                     std::function<void(const QStringList &)> toolsReady) {
        if (!mcp) {
            toolsReady({});
            return;
        }
        mcp->whenStarted(options.mcpReadyWaitMs, context, std::move(toolsReady));
    };
    loop = std::make_unique<AgentLoop>(std::move(dependencies));
    AgentLoop::TurnLimits limits = loop->turnLimits();
    limits.maxToolCallsPerMessage = options.maxToolCallsPerMessage;
    loop->setTurnLimits(limits);
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
    startMcp();
    duplicates->check();
    qCInfo(lcAgent).noquote() << "runtime ready: store" << store->filePath() << "staff"
                              << staff.userId << "tenant" << staff.tenantId << "model"
                              << model->modelName();
    if (sendSimFaults()) { // --faults with a "sim" section
        // The first question must meet the sim's faults: ready() follows the sim's answer
        // (after simFaultsApplied() or faultsRefused()), within the control's timeout.
        awaitingSim = true;
        auto once = std::make_shared<QMetaObject::Connection>();
        *once = QObject::connect(simControl.get(), &SimFaultControl::answered, q, [this, once] {
            QObject::disconnect(*once);
            awaitingSim = false;
            Q_EMIT q->ready();
        });
        return;
    }
    Q_EMIT q->ready();
}

AgentRuntime::AgentRuntime(const RuntimeOptions &options, QObject *parent)
    : QObject(parent)
    , d(std::make_unique<Private>(this))
{
    d->options = options;
    if (d->options.dataDirectory.isEmpty())
        d->options.dataDirectory = RuntimeOptions::defaultDataDirectory();
    // One store for the start and every switch (a test's in-process one, or the keychain).
    if (!d->options.secrets)
        d->options.secrets = osKeychain(ApiKeySource::keychainService());
    d->secrets = d->options.secrets;
    QStringList refused;
    d->mcpOverrides = Mcp::ToolPolicyOverrides::fromStored(d->options.mcpToolPolicies, &refused);
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
        d->mcpConfig = Mcp::readConfigFile(mcpFile, &problem);
        if (!d->mcpConfig) {
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
    return d->mcp.get();
}

QMap<QString, QString> AgentRuntime::mcpToolPolicies() const
{
    return d->mcpOverrides.toStored();
}

namespace {

Mcp::Server *signingServer(const Mcp::ServerSet *servers, const QString &name)
{
    if (!servers)
        return nullptr;
    for (Mcp::Server *server : servers->servers()) {
        if (server->name() == name && server->authorizer())
            return server;
    }
    return nullptr;
}

OAuth::Authorizer *authorizerOf(const Mcp::ServerSet *servers, const QString &name)
{
    Mcp::Server *server = signingServer(servers, name);
    return server ? server->authorizer() : nullptr;
}

} // namespace

void AgentRuntime::setBrowserOpener(std::function<bool(const QUrl &url)> opener)
{
    d->browserOpener = std::move(opener);
}

bool AgentRuntime::signInToMcpServer(const QString &server)
{
    OAuth::Authorizer *authorizer = authorizerOf(d->mcp.get(), server);
    if (!authorizer)
        return false;
    qCInfo(lcMcp).noquote() << "server" << server << "sign-in started by staff";
    authorizer->signIn();
    return true;
}

bool AgentRuntime::signOutOfMcpServer(const QString &server)
{
    Mcp::Server *running = signingServer(d->mcp.get(), server);
    if (!running)
        return false;
    qCInfo(lcMcp).noquote() << "server" << server << "signed out by staff";
    running->signOut();
    return true;
}

bool AgentRuntime::cancelMcpSignIn(const QString &server)
{
    OAuth::Authorizer *authorizer = authorizerOf(d->mcp.get(), server);
    if (!authorizer)
        return false;
    authorizer->cancelSignIn();
    return true;
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
    if (overrides == d->mcpOverrides)
        return true;
    d->mcpOverrides = overrides;
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
        qCInfo(lcAgent).noquote() << "settings applied: model" << d->model->modelName()
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
    return d->model;
}

CircuitBreakerRegistry *AgentRuntime::breakers() const
{
    return d->breakers.get();
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

QString AgentRuntime::faultPlanSummary(bool translated) const
{
    return d->faults->current()->summary(translated ? FaultPlan::SummaryWords::Staff
                                                    : FaultPlan::SummaryWords::Log);
}

FaultPlan AgentRuntime::faultPlan() const
{
    return *d->faults->current();
}

KnownTools AgentRuntime::knownTools() const
{
    KnownTools known;
    for (const ToolDescriptor &tool : d->registry.descriptors()) {
        known.names.append(tool.name);
        if (tool.hasSideEffects)
            known.writes.append(tool.name);
    }
    return known;
}

void AgentRuntime::setFaultPlan(const FaultPlan &plan)
{
    d->faults->set(plan);
    qCInfo(lcAgent).noquote() << "fault plan set:"
                              << (plan.isEmpty() ? QStringLiteral("none") : plan.summary());
    Q_EMIT faultsChanged();
    if (plan.simFaults() != d->simSection) {
        d->simSection = plan.simFaults();
        if (d->ready)
            d->sendSimFaults();
    }
}

void AgentRuntime::clearFaults()
{
    setFaultPlan(FaultPlan());
}

bool AgentRuntime::isSendingSimFaults() const
{
    return d->simControl && d->simControl->isBusy();
}

bool AgentRuntime::hasActiveFaults() const
{
    return !d->faults->current()->isEmpty();
}

RetryPolicy AgentRuntime::defaultToolPolicy() const
{
    return d->options.toolPolicy.value_or(RetryPolicy::defaults());
}

RetryPolicy AgentRuntime::toolPolicy(const QString &toolName) const
{
    return d->toolPolicies.value(toolName, d->mcpPolicies.value(toolName, defaultToolPolicy()));
}

bool AgentRuntime::setToolPolicy(const QString &toolName, const RetryPolicy &policy,
                                 QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    if (!d->registry.find(toolName))
        return fail(AgentRuntimeWords::tr("no such tool: %1").arg(toolName));
    if (const std::optional<QString> problem = policy.problem())
        return fail(*problem);
    d->toolPolicies.insert(toolName, policy);
    qCInfo(lcAgent).noquote() << "policy of" << toolName << "set:" << policy.describe();
    Q_EMIT policiesChanged();
    return true;
}

void AgentRuntime::resetToolPolicy(const QString &toolName)
{
    if (d->toolPolicies.remove(toolName) > 0)
        Q_EMIT policiesChanged();
}

void AgentRuntime::resetToolPolicies()
{
    if (d->toolPolicies.isEmpty())
        return;
    d->toolPolicies.clear();
    Q_EMIT policiesChanged();
}

QStringList AgentRuntime::toolsWithCustomPolicy() const
{
    QStringList names;
    for (const ToolDescriptor &tool : d->registry.descriptors()) {
        const auto it = d->toolPolicies.constFind(tool.name);
        if (it != d->toolPolicies.cend() && *it != defaultToolPolicy())
            names.append(tool.name);
    }
    return names;
}

Redactor AgentRuntime::exportRedactor() const
{
    // The variables' values as they are now, and the primary key the runtime holds, which may
    // have come from the keychain (the secondary one is only ever read from its variable).
    // And the secrets the MCP servers run with (mcp.json's header and env values).
    QStringList known{d->apiKey};
    if (d->mcp) {
        for (const Mcp::Server *server : d->mcp->servers())
            known += server->knownSecrets();
    }
    return Redactor::forModel(d->options.model, known);
}

namespace {

DependencyStatus::Breaker breakerState(CircuitBreaker::State state)
{
    switch (state) {
    case CircuitBreaker::State::Closed: return DependencyStatus::Breaker::Closed;
    case CircuitBreaker::State::HalfOpen: return DependencyStatus::Breaker::HalfOpen;
    case CircuitBreaker::State::Open: return DependencyStatus::Breaker::Open;
    }
    return DependencyStatus::Breaker::Open;
}

McpServerStatus::Problem mcpProblem(Mcp::Failure failure)
{
    using Problem = McpServerStatus::Problem;
    switch (failure) {
    case Mcp::Failure::None: return Problem::None;
    case Mcp::Failure::Timeout: return Problem::NoAnswer;
    case Mcp::Failure::TransportFailed: return Problem::CouldNotStart;
    case Mcp::Failure::NotConnected:
    case Mcp::Failure::Cancelled:
    case Mcp::Failure::TransportClosed: return Problem::Stopped;
    case Mcp::Failure::Malformed:
    case Mcp::Failure::Oversized: return Problem::NotUnderstood;
    case Mcp::Failure::ProtocolVersion: return Problem::OtherProtocol;
    case Mcp::Failure::AccessDenied: return Problem::AccessDenied;
    case Mcp::Failure::RemoteError:
    case Mcp::Failure::Rejected:
    case Mcp::Failure::TooManyRequests: return Problem::Refused;
    case Mcp::Failure::SessionExpired: return Problem::SessionEnded;
    case Mcp::Failure::AuthRequired: return Problem::SignInNeeded;
    }
    return Problem::Stopped;
}

BreakerStatus breakerStatus(const CircuitBreaker &breaker)
{
    const CircuitBreaker::Options &options = breaker.options();
    BreakerStatus entry;
    entry.dependency = breaker.dependency();
    entry.state = breakerState(breaker.state());
    entry.windowCalls = breaker.windowCalls();
    entry.windowFailures = breaker.windowFailures();
    entry.windowSize = options.windowSize;
    entry.minimumCalls = options.minimumCalls;
    entry.failureRateThreshold = options.failureRateThreshold;
    entry.openCooldownMs = options.openCooldown.count();
    entry.cooldownLeftMs = breaker.cooldownLeft().count();
    entry.probeDue = breaker.state() == CircuitBreaker::State::Open && entry.cooldownLeftMs == 0;
    const CircuitBreaker::Transition &last = breaker.lastTransition();
    if (last.atMs >= 0) {
        entry.lastFrom = breakerState(last.from);
        entry.lastTo = breakerState(last.to);
        entry.lastChangeAgoMs = std::max<qint64>(0, breaker.nowMs() - last.atMs);
        entry.lastChangeReason = last.reason;
    }
    entry.openCount = breaker.openCount();
    entry.rejectedCount = breaker.rejectedCount();
    return entry;
}

} // namespace

bool AgentRuntime::resetBreaker(const QString &dependency)
{
    CircuitBreaker *breaker = d->breakers ? d->breakers->find(dependency) : nullptr;
    if (!breaker)
        return false;
    qCInfo(lcAgent).noquote() << "circuit breaker" << dependency << "reset by staff";
    breaker->reset();
    Q_EMIT statusChanged(); // also when it was closed: its window is empty now
    return true;
}

const ToolLatencyStats &AgentRuntime::toolLatency() const
{
    return d->latency;
}

RuntimeStatus AgentRuntime::status() const
{
    RuntimeStatus status;
    const RetryPolicy policy = d->options.toolPolicy.value_or(RetryPolicy::defaults());
    status.toolPolicy = policy.describe();
    status.toolWorstCase = policy.worstCaseDuration();
    if (d->model) {
        const ModelOptions &model = d->options.model;
        status.modelName = d->model->modelName();
        status.staffUserId = d->staff.userId;
        status.staffName = d->staff.displayName;
        status.tenantId = d->staff.tenantId;
        status.offlineFallback = model.provider != ModelOptions::Provider::Offline
            && model.fallbackToOffline;
    }
    if (d->mcp) {
        for (const Mcp::Server *server : d->mcp->servers()) {
            McpServerStatus entry;
            entry.name = server->name();
            entry.transport = server->config().describe();
            switch (server->state()) {
            case Mcp::Server::State::Starting: entry.state = McpServerStatus::State::Starting; break;
            case Mcp::Server::State::Ready: entry.state = McpServerStatus::State::Ready; break;
            case Mcp::Server::State::Down: entry.state = McpServerStatus::State::Down; break;
            }
            entry.tools = int(server->tools().size());
            entry.refusedTools = server->refusedTools();
            entry.lastError = server->lastError();
            entry.problem = mcpProblem(server->lastFailure());
            entry.restartInMs = server->restartInMs();
            entry.givenUp = server->givenUp();
            describeSignIn(server->authorizer(), &entry);
            if (const CircuitBreaker *breaker = d->breakers
                    ? d->breakers->find(Mcp::McpTool::serviceName(server->name()))
                    : nullptr) {
                entry.circuitOpen = breaker->state() == CircuitBreaker::State::Open;
                entry.circuitCooldownLeftMs = entry.circuitOpen ? breaker->cooldownLeft().count()
                                                                : 0;
            }
            for (const auto &listed : server->tools()) {
                // As registered, under staff's policy where one is set (addMcpTools).
                const auto registered = std::dynamic_pointer_cast<const Mcp::McpTool>(
                    d->registry.find(listed->name()));
                const Mcp::McpTool *tool = registered ? registered.get() : listed.get();
                McpServerStatus::Tool row;
                row.name = tool->name();
                row.toolName = tool->info().name;
                row.policyKey = Mcp::ToolPolicyOverrides::key(server->name(), row.toolName);
                row.title = tool->descriptor().labels.title;
                row.policy = Mcp::ToolPolicyWords::status(tool->policy());
                row.annotatedPolicy = Mcp::ToolPolicyWords::status(tool->annotatedPolicy());
                row.decidedBy = tool->isOverridden() ? McpServerStatus::Decider::Staff
                                                     : McpServerStatus::Decider::Annotations;
                row.hintsRelaxSafeguard = tool->descriptor().labels.policyOrigin
                                              .hintsRelaxSafeguard();
                entry.toolPolicies.append(row);
            }
            status.mcpServers.append(entry);
        }
    }
    if (!d->breakers)
        return status;
    QList<DependencyStatus> halfOpen;
    const QStringList dependencies = d->breakers->dependencies();
    for (const QString &dependency : dependencies) {
        const CircuitBreaker *breaker = d->breakers->find(dependency);
        if (!breaker)
            continue;
        DependencyStatus entry{dependency, DependencyStatus::Breaker::Closed,
                               breaker->options().openCooldown};
        switch (breaker->state()) {
        case CircuitBreaker::State::Open:
            entry.breaker = DependencyStatus::Breaker::Open;
            status.troubledDependencies.append(entry);
            break;
        case CircuitBreaker::State::HalfOpen:
            entry.breaker = DependencyStatus::Breaker::HalfOpen;
            halfOpen.append(entry);
            break;
        case CircuitBreaker::State::Closed:
            break;
        }
    }
    for (const QString &dependency : dependencies) {
        if (const CircuitBreaker *breaker = d->breakers->find(dependency))
            status.breakers.append(breakerStatus(*breaker));
    }
    if (!status.troubledDependencies.isEmpty())
        status.worstBreaker = DependencyStatus::Breaker::Open;
    else if (!halfOpen.isEmpty())
        status.worstBreaker = DependencyStatus::Breaker::HalfOpen;
    status.troubledDependencies.append(halfOpen);
    return status;
}

} // namespace AgentConsole
