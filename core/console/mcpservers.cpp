#include "mcpservers.h"

#include "mcpsignin.h"
#include "runtimeoptions.h"
#include "runtimewords.h"

#include "../llm/secretstore.h"
#include "../mcp/mcpconfig.h"
#include "../mcp/mcpserver.h"
#include "../mcp/mcpsession.h"
#include "../mcp/mcptool.h"
#include "../mcp/mcptoolpolicy.h"
#include "../oauth/authorizer.h"
#include "../resilience/circuitbreaker.h"
#include "../team/isolationwords.h"
#include "../telemetry/logging.h"
#include "../tools/toolregistry.h"
#include "../turn/agentloop.h"

#include <QMetaMethod>
#include <QTimer>

namespace AgentConsole {

McpServers::McpServers(const ToolRegistry *tools, std::function<void()> registerAgain,
                       QObject *parent)
    : QObject(parent)
    , m_tools(tools)
    , m_registerAgain(std::move(registerAgain))
    , m_overrides(std::make_unique<Mcp::ToolPolicyOverrides>())
{
    Q_ASSERT(m_tools);
}

McpServers::~McpServers()
{
    // The servers go first, while this is whole: a server going withdraws its open questions
    // (questionEnded) and updates the loop's cards.
    m_servers.reset();
}

void McpServers::useStoredPolicies(const QMap<QString, QString> &stored)
{
    QStringList refused;
    *m_overrides = Mcp::ToolPolicyOverrides::fromStored(stored, &refused);
    for (const QString &key : std::as_const(refused))
        qCWarning(lcAgent).noquote() << "MCP tool policy" << key << "not understood; not used";
}

QMap<QString, QString> McpServers::toolPolicies() const
{
    return m_overrides->toStored();
}

bool McpServers::setToolPolicies(const QMap<QString, QString> &policies, QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    if (!m_toolPoliciesLocked.isEmpty())
        return fail(m_toolPoliciesLocked);
    QStringList refused;
    const Mcp::ToolPolicyOverrides overrides = Mcp::ToolPolicyOverrides::fromStored(policies,
                                                                                    &refused);
    if (!refused.isEmpty())
        return fail(AgentRuntimeWords::tr("not a tool policy: %1")
                        .arg(refused.join(QStringLiteral(", "))));
    // A call planned under one policy must not run under another (confirmed, then retried).
    if (m_loop && m_loop->isBusy())
        return fail(AgentRuntimeWords::tr("wait until the running question is answered"));
    if (overrides == *m_overrides)
        return true;
    *m_overrides = overrides;
    qCInfo(lcAgent).noquote() << "MCP tool policies set by staff:" << overrides.size();
    m_registerAgain();
    Q_EMIT toolPoliciesChanged();
    Q_EMIT statusChanged();
    return true;
}

bool McpServers::readConfig(const QString &file, QString *problem)
{
    std::optional<Mcp::Config> config = Mcp::readConfigFile(file, problem);
    if (!config)
        return false;
    m_config = std::make_unique<Mcp::Config>(std::move(*config));
    return true;
}

void McpServers::setAllowedServers(const std::optional<QStringList> &allowed,
                                   const QString &version)
{
    m_allowedServers = allowed;
    m_policyVersion = version;
}

QString McpServers::refusalOf(const QString &server) const
{
    if (!m_allowedServers || m_allowedServers->contains(server))
        return {};
    return AgentRuntimeWords::tr("The team's policy (version %1) does not allow the MCP server "
                                 "\"%2\"")
        .arg(m_policyVersion, server);
}

void McpServers::start(const RuntimeOptions &options, std::shared_ptr<SecretStore> secrets)
{
    // A server the team's policy does not allow never starts, and is shown as refused rather
    // than left out: staff see why its tools are missing.
    if (m_config && m_allowedServers) {
        QList<Mcp::ServerConfig> allowed;
        for (const Mcp::ServerConfig &server : std::as_const(m_config->servers)) {
            const QString refusal = refusalOf(server.name);
            if (refusal.isEmpty()) {
                allowed.append(server);
                continue;
            }
            qCWarning(lcAgent).noquote()
                << "MCP server" << server.name << "not started: the team policy does not allow it";
            McpServerStatus entry;
            entry.name = server.name;
            entry.transport = server.describe();
            entry.state = McpServerStatus::State::Down;
            entry.problem = McpServerStatus::Problem::RefusedByPolicy;
            entry.lastError = refusal;
            m_refusedByPolicy.append(entry);
        }
        m_config->servers = allowed;
    }
    if (!m_config || m_config->servers.isEmpty()) {
        QMetaObject::invokeMethod(this, &McpServers::settled, Qt::QueuedConnection);
        return;
    }
    Mcp::Server::Options serverOptions;
    serverOptions.tool.idleTimeoutMs = options.mcpIdleTimeoutMs;
    serverOptions.tool.hardMaximumMs = options.mcpHardMaximumMs;
    // The console's own hard maximum is the one whose worst case fits inside the turn
    // (RuntimeOptions): no server's mcp.json may ask for more.
    serverOptions.longestAttemptMs = options.mcpHardMaximumMs;
    // ${keychain:...} references in mcp.json are read from the runtime's store (docs/MCP.md).
    serverOptions.secrets =
        [store = secrets](const QString &key, QObject *context,
                          std::function<void(const Mcp::SecretLookup &)> done) {
            store->read(key, context, [done = std::move(done)](const SecretAnswer &answer) {
                using Status = Mcp::SecretLookup::Status;
                done({answer.status == SecretAnswer::Status::Found          ? Status::Found
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
        return m_browserOpener && m_browserOpener(url);
    };
    // Elicitation (form mode): asked through the front end, declined when none listens.
    serverOptions.questions = [this](const QString &server, Mcp::PendingElicitation *pending) {
        askStaff(server, pending);
    };
    m_servers = std::make_unique<Mcp::ServerSet>(*m_config, serverOptions);
    connect(m_servers.get(), &Mcp::ServerSet::signInChanged, this, &McpServers::statusChanged);
    connect(m_servers.get(), &Mcp::ServerSet::toolsChanged, this, [this] {
        m_registerAgain();
        Q_EMIT statusChanged();
    });
    connect(m_servers.get(), &Mcp::ServerSet::stateChanged, this, &McpServers::statusChanged);
    connect(m_servers.get(), &Mcp::ServerSet::settled, this, &McpServers::settled);
    m_servers->start();
}

void McpServers::whenStarted(int waitMs, QObject *context,
                             std::function<void(const QStringList &)> started) const
{
    if (!m_servers) {
        started({});
        return;
    }
    m_servers->whenStarted(waitMs, context, std::move(started));
}

void McpServers::setBrowserOpener(std::function<bool(const QUrl &url)> opener)
{
    m_browserOpener = std::move(opener);
}

void McpServers::registerTools(ToolRegistry &registry) const
{
    if (!m_servers)
        return;
    for (const std::shared_ptr<Mcp::McpTool> &listed : m_servers->tools()) {
        // Staff's policy, where one is set, decides the descriptor (confirmation, ledger) and
        // the retries (ToolPolicies asks the tool as registered); the annotations' otherwise.
        const std::shared_ptr<Mcp::McpTool> tool = m_overrides->apply(listed);
        if (registry.find(tool->name())) {
            qCWarning(lcAgent).noquote()
                << "MCP tool" << tool->name() << "not offered: the name is taken";
            continue;
        }
        registry.add(tool);
    }
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

bool McpServers::signIn(const QString &server)
{
    OAuth::Authorizer *authorizer = authorizerOf(m_servers.get(), server);
    if (!authorizer)
        return false;
    qCInfo(lcMcp).noquote() << "server" << server << "sign-in started by staff";
    authorizer->signIn();
    return true;
}

bool McpServers::signOut(const QString &server)
{
    Mcp::Server *running = signingServer(m_servers.get(), server);
    if (!running)
        return false;
    qCInfo(lcMcp).noquote() << "server" << server << "signed out by staff";
    running->signOut();
    return true;
}

bool McpServers::cancelSignIn(const QString &server)
{
    OAuth::Authorizer *authorizer = authorizerOf(m_servers.get(), server);
    if (!authorizer)
        return false;
    authorizer->cancelSignIn();
    return true;
}

bool McpServers::staffListens() const
{
    return isSignalConnected(QMetaMethod::fromSignal(&McpServers::questionAsked));
}

void McpServers::askStaff(const QString &server, Mcp::PendingElicitation *pending)
{
    if (!staffListens()) {
        qCInfo(lcAgent).noquote() << "MCP server" << server
                                  << "asked staff a question; nobody can answer: declined";
        pending->answer(Mcp::ElicitationAction::Decline);
        return;
    }
    const QString id = QStringLiteral("mcp-question-%1").arg(++m_questionsAsked);
    McpQuestion question = pending->question();
    question.server = server;
    question.operationId = pending->relatedTag();
    if (m_loop && !question.operationId.isEmpty())
        question.toolTitle = m_loop->setToolCallQuestion(question.operationId, server,
                                                         ToolCallRecord::Question::Waiting);
    m_questions.insert(id, pending);
    connect(
        pending, &Mcp::PendingElicitation::ended, this,
        [this, id, server, operationId = question.operationId](Mcp::PendingElicitation::End how) {
            m_questions.remove(id);
            // An answered question's card is set by answer(), which knows the action.
            if (how != Mcp::PendingElicitation::End::Answered && m_loop && !operationId.isEmpty())
                m_loop->setToolCallQuestion(operationId, server,
                                            ToolCallRecord::Question::Withdrawn);
            Q_EMIT questionEnded(id,
                                 how == Mcp::PendingElicitation::End::Answered
                                     ? McpQuestionEnd::Answered
                                     : how == Mcp::PendingElicitation::End::Withdrawn
                                     ? McpQuestionEnd::Withdrawn
                                     : McpQuestionEnd::CancelledByServer);
        });
    Q_EMIT questionAsked(id, question);
}

bool McpServers::answer(const QString &id, McpAnswer action, const QJsonObject &content,
                        McpAnswerProblem *problem)
{
    const QPointer<Mcp::PendingElicitation> pending = m_questions.value(id);
    if (!pending || pending->isFinished())
        return false;
    const QString operationId = pending->relatedTag();
    if (!pending->answer(action, content, problem))
        return false;
    if (m_loop && !operationId.isEmpty()) {
        using Question = ToolCallRecord::Question;
        m_loop->setToolCallQuestion(operationId, QString(),
                                    action == McpAnswer::Accept        ? Question::Accepted
                                        : action == McpAnswer::Decline ? Question::Declined
                                                                       : Question::Cancelled);
    }
    return true;
}

namespace {

McpServerStatus::Problem problemOf(Mcp::Failure failure)
{
    using Problem = McpServerStatus::Problem;
    switch (failure) {
    case Mcp::Failure::None:
        return Problem::None;
    case Mcp::Failure::Timeout:
        return Problem::NoAnswer;
    case Mcp::Failure::TransportFailed:
        return Problem::CouldNotStart;
    case Mcp::Failure::NotConnected:
    case Mcp::Failure::Cancelled:
    case Mcp::Failure::TransportClosed:
        return Problem::Stopped;
    case Mcp::Failure::Malformed:
    case Mcp::Failure::Oversized:
        return Problem::NotUnderstood;
    case Mcp::Failure::ProtocolVersion:
        return Problem::OtherProtocol;
    case Mcp::Failure::AccessDenied:
        return Problem::AccessDenied;
    case Mcp::Failure::RemoteError:
    case Mcp::Failure::Rejected:
    case Mcp::Failure::TooManyRequests:
        return Problem::Refused;
    case Mcp::Failure::SessionExpired:
        return Problem::SessionEnded;
    case Mcp::Failure::AuthRequired:
        return Problem::SignInNeeded;
    }
    return Problem::Stopped;
}

McpServerStatus::State stateOf(Mcp::Server::State state)
{
    switch (state) {
    case Mcp::Server::State::Starting:
        return McpServerStatus::State::Starting;
    case Mcp::Server::State::Ready:
        return McpServerStatus::State::Ready;
    case Mcp::Server::State::Down:
        return McpServerStatus::State::Down;
    }
    return McpServerStatus::State::Down;
}

} // namespace

QList<McpServerStatus> McpServers::status() const
{
    const CircuitBreakerRegistry *breakers = m_breakers;
    const ToolRegistry &registry = *m_tools;
    QList<McpServerStatus> servers;
    if (!m_servers)
        return m_refusedByPolicy;
    for (const Mcp::Server *server : m_servers->servers()) {
        McpServerStatus entry;
        entry.name = server->name();
        entry.transport = server->config().describe();
        entry.state = stateOf(server->state());
        entry.tools = int(server->tools().size());
        entry.refusedTools = server->refusedTools();
        entry.timeoutsLimitedToMs = server->timeoutsLimitedToMs();
        entry.lastError = server->lastError();
        entry.problem = problemOf(server->lastFailure());
        entry.restartInMs = server->restartInMs();
        entry.givenUp = server->givenUp();
        describeSignIn(server->authorizer(), &entry);
        if (const CircuitBreaker *breaker = breakers
                ? breakers->find(Mcp::McpTool::serviceName(server->name()))
                : nullptr) {
            entry.circuitOpen = breaker->state() == CircuitBreaker::State::Open;
            entry.circuitCooldownLeftMs = entry.circuitOpen ? breaker->cooldownLeft().count() : 0;
            if (breaker->isIsolated())
                entry.isolation = IsolationWords::refusal(breaker->isolation());
        }
        for (const auto &listed : server->tools()) {
            // As registered, under staff's policy where one is set (registerTools).
            const auto registered = std::dynamic_pointer_cast<const Mcp::McpTool>(
                registry.find(listed->name()));
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
            row.hintsRelaxSafeguard = tool->descriptor().labels.policyOrigin.hintsRelaxSafeguard();
            entry.toolPolicies.append(row);
        }
        servers.append(entry);
    }
    return servers + m_refusedByPolicy;
}

QStringList McpServers::knownSecrets() const
{
    QStringList secrets;
    if (m_servers) {
        for (const Mcp::Server *server : m_servers->servers())
            secrets += server->knownSecrets();
    }
    return secrets;
}

void McpServers::close(int timeoutMs, QObject *context, std::function<void()> done)
{
    if (!m_servers) {
        QTimer::singleShot(0, context, std::move(done));
        return;
    }
    m_servers->closeAll(timeoutMs, context, std::move(done));
}

} // namespace AgentConsole
