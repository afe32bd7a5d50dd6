#include "mcpserver.h"

#include "../oauth/authorizer.h"
#include "../telemetry/logging.h"
#include "../telemetry/logsecrets.h"
#include "httptransport.h"
#include "mcptoolinfo.h"
#include "stdiotransport.h"

#include <QHash>

#include <algorithm>
#include <utility>

namespace AgentConsole::Mcp {

Server::Server(ServerConfig config, Options options, QObject *parent)
    : QObject(parent)
    , m_config(std::move(config))
    , m_options(std::move(options))
{
    // The file's own timeouts for this server win over the console's; a hard maximum is never
    // shorter than the idle timeout it bounds.
    if (m_config.idleTimeoutMs)
        m_options.tool.idleTimeoutMs = *m_config.idleTimeoutMs;
    if (m_config.hardMaximumMs)
        m_options.tool.hardMaximumMs = *m_config.hardMaximumMs;
    m_options.tool.hardMaximumMs = std::max(m_options.tool.hardMaximumMs,
                                            m_options.tool.idleTimeoutMs);
    // A worst case past the turn's deadline would fail the whole turn, and with it the
    // answers of the tools beside: the file's timeouts are limited to what fits, and said so.
    const int longest = m_options.longestAttemptMs;
    if (longest > 0 && m_options.tool.hardMaximumMs > longest) {
        qCWarning(lcMcp).noquote() << "server" << m_config.name << "asks for attempts of up to"
                                   << m_options.tool.hardMaximumMs << "ms; limited to" << longest
                                   << "ms so that the turn can answer";
        m_timeoutsLimitedToMs = longest;
        m_options.tool.hardMaximumMs = longest;
        m_options.tool.idleTimeoutMs = std::min(m_options.tool.idleTimeoutMs, longest);
    }
    m_restart.setSingleShot(true);
    connect(&m_restart, &QTimer::timeout, this, &Server::connectSession);
}

void Server::makeAuthorizer()
{
    const ServerConfig &config = *m_running;
    if (m_authorizer || config.kind != ServerConfig::Kind::Http || !config.oauth.enabled)
        return;
    for (const auto &header : config.headers) {
        if (header.first.compare("Authorization", Qt::CaseInsensitive) == 0)
            return; // the file's own credentials: no sign-in over them
    }
    OAuth::Authorizer::Options options;
    options.serverUrl = config.url;
    options.client.clientName = m_options.signIn.clientName;
    options.client.clientMetadataUrl = config.oauth.clientMetadataUrl.isEmpty()
        ? m_options.signIn.clientMetadataUrl
        : config.oauth.clientMetadataUrl;
    options.client.clientId = config.oauth.clientId;
    options.client.clientSecret = config.oauth.clientSecret;
    options.client.scopes = config.oauth.scopes;
    options.signInWhenAsked = m_options.signIn.whenAsked;
    options.openBrowser = m_options.signIn.openBrowser;
    options.signInTimeoutMs = m_options.signIn.timeoutMs;
    options.store = m_options.signIn.grants;
    options.storeKey = secretKey(config.name, QStringLiteral("oauth"));
    m_authorizer = new OAuth::Authorizer(std::move(options), this);
    connect(m_authorizer, &OAuth::Authorizer::stateChanged, this, &Server::signInChanged);
    connect(m_authorizer, &OAuth::Authorizer::authorized, this, [this] {
        // A sign-in that a down server waited for: it starts again at once, its restarts
        // counted afresh (it was down for want of a token, not for a fault).
        if (m_state == State::Down && !m_session) {
            m_restart.stop();
            m_restarts = 0;
            connectSession();
        }
    });
    connect(m_authorizer, &OAuth::Authorizer::refused, this, &Server::signInChanged);
}

void Server::signOut()
{
    if (!m_authorizer)
        return;
    m_authorizer->signOut();
    if (Session *old = m_session) {
        m_session = nullptr;
        m_tools.clear();
        connect(old, &Session::closed, old, &QObject::deleteLater);
        old->close();
        Q_EMIT toolsChanged();
    }
    m_restart.stop();
    m_restarts = 0;
    connectSession();
}

bool Server::waitsForSignIn(const Error &error) const
{
    if (!m_authorizer)
        return false;
    const auto state = m_authorizer->state();
    return error.failure == Failure::AuthRequired || state == OAuth::Authorizer::State::SigningIn
        || state == OAuth::Authorizer::State::Refreshing;
}

Server::~Server()
{
    delete m_session; // ends the child or the HTTP exchanges without waiting for the server
}

void Server::start()
{
    if (m_session || m_restart.isActive() || m_resolving)
        return;
    if (!m_running) {
        resolveSecrets();
        return;
    }
    connectSession();
}

QStringList Server::knownSecrets() const
{
    QStringList secrets = m_secrets + secretValues(m_config);
    if (m_authorizer)
        secrets += m_authorizer->knownSecrets();
    return secrets;
}

void Server::resolveSecrets()
{
    if (!hasReferences(m_config)) { // started at once, as a server without secrets always was
        m_running = m_config;
        m_secrets = secretValues(m_config);
        m_redactor.add(m_secrets);
        LogSecrets::add(m_secrets);
        connectSession();
        return;
    }
    m_resolving = true;
    setState(State::Starting);
    Mcp::resolveSecrets(m_config, m_options.secrets, this, [this](const ResolvedSecrets &result) {
        m_resolving = false;
        if (!result.config) {
            // Not restarted: an entry that is not there does not come back by waiting. The
            // reason is the staff's; the log gets the keys and the keychain's words.
            m_lastError = result.reason;
            qCWarning(lcMcp).noquote()
                << "server" << m_config.name << "not started:" << result.detail;
            setState(State::Down);
            settle();
            return;
        }
        m_running = result.config;
        m_secrets = result.values + secretValues(*m_running);
        m_redactor.add(m_secrets);
        LogSecrets::add(m_secrets);
        connectSession();
    });
}

void Server::connectSession()
{
    Q_ASSERT(m_running);
    makeAuthorizer();
    if (m_authorizer && !m_authorizer->isLoaded()) {
        // The grant from the keychain first: the first request carries its token.
        connect(m_authorizer, &OAuth::Authorizer::loaded, this, &Server::connectSession,
                Qt::SingleShotConnection);
        setState(State::Starting);
        m_authorizer->load();
        return;
    }
    const ServerConfig &config = *m_running;
    std::unique_ptr<Transport> transport;
    if (config.kind == ServerConfig::Kind::Stdio) {
        StdioTransport::Options stdio;
        stdio.serverName = config.name;
        stdio.program = config.command;
        stdio.arguments = config.args;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        for (const auto &[key, value] : config.env)
            environment.insert(key, value);
        stdio.environment = environment;
        stdio.maxFrameBytes = m_options.session.limits.maxBytes;
        stdio.redactedValues = m_secrets;
        transport = std::make_unique<StdioTransport>(stdio);
    } else {
        HttpTransport::Options http;
        http.url = config.url;
        for (const auto &[key, value] : config.headers)
            http.headers.insert(key, value);
        http.maxFrameBytes = m_options.session.limits.maxBytes;
        http.authorizer = m_authorizer;
        transport = std::make_unique<HttpTransport>(http);
    }
    Session::Options sessionOptions = m_options.session;
    sessionOptions.elicitation = bool(m_options.questions);
    auto *session = new Session(std::move(transport), sessionOptions, this);
    m_session = session;
    if (m_options.questions) {
        connect(session, &Session::elicitationRequested, this,
                [this](PendingElicitation *question) {
                    m_options.questions(m_config.name, question);
                });
    }
    m_handle = std::make_shared<SessionHandle>(session);
    setState(State::Starting);
    connect(session, &Session::ready, this, &Server::listTools);
    connect(session, &Session::toolsChanged, this, &Server::listTools);
    connect(session, &Session::failed, this, &Server::onDown);
    session->start();
}

void Server::listTools()
{
    if (!m_session || m_session->state() != Session::State::Ready)
        return;
    if (!m_lister || m_lister->parent() != m_session) {
        m_lister = new ToolLister(m_session, {}, m_session);
        connect(
            m_lister, &ToolLister::finished, this,
            [this](const QList<ToolInfo> &infos, const QStringList &refused, const Error &error) {
                if (error.isError()) {
                    onDown(error);
                    return;
                }
                QList<std::shared_ptr<McpTool>> tools;
                QHash<QString, QString> calledAs; // the model's name -> the tool offered under it
                m_refused = refused;
                for (const ToolInfo &info : infos) {
                    // "a.b" and "a_b" are both <server>__a_b to the model: the first listed is
                    // offered, the other named here, as any tool not offered is.
                    const QString exposed = McpTool::exposedName(m_config.name, info.name);
                    if (const auto taken = calledAs.constFind(exposed); taken != calledAs.cend()) {
                        const QString problem = QStringLiteral("tool %1 would be called %2, the "
                                                               "name of its tool %3")
                                                    .arg(info.name, exposed, *taken);
                        m_refused.append(problem);
                        qCWarning(lcMcp).noquote()
                            << "server" << m_config.name << "tool not offered:" << problem;
                        continue;
                    }
                    QString problem;
                    if (auto tool = McpTool::create(m_handle, m_config.name, info, m_options.tool,
                                                    &problem)) {
                        calledAs.insert(exposed, info.name);
                        tools.append(tool);
                    } else {
                        m_refused.append(problem);
                        qCWarning(lcMcp).noquote()
                            << "server" << m_config.name << "tool not offered:" << problem;
                    }
                }
                m_tools = tools;
                m_restarts = 0;
                m_lastError.clear();
                m_lastFailure = Failure::None;
                qCInfo(lcMcp).noquote()
                    << "server" << m_config.name << "ready with" << m_tools.size() << "tools"
                    << "(" << m_refused.size() << "refused)";
                setState(State::Ready);
                Q_EMIT toolsChanged();
                settle();
            });
    }
    if (!m_lister->isListing())
        m_lister->list(m_options.listTimeoutMs);
}

void Server::close()
{
    m_closing = true;
    m_restart.stop();
    Session *session = m_session;
    if (!session || session->state() == Session::State::Closed) {
        QMetaObject::invokeMethod(this, &Server::closed, Qt::QueuedConnection);
        return;
    }
    connect(session, &Session::closed, this, &Server::closed, Qt::SingleShotConnection);
    session->close();
}

void Server::onDown(const Error &error)
{
    // A server's own error text may echo what it was sent.
    m_lastError = m_redactor.redact(error.describe()).left(300);
    m_lastFailure = error.failure == Failure::None ? Failure::TransportClosed : error.failure;
    if (Session *old = m_session) {
        m_session = nullptr;
        connect(old, &Session::closed, old, &QObject::deleteLater);
        old->close();
    }
    setState(State::Down);
    settle();
    if (m_closing)
        return; // closed for good: not restarted
    if (waitsForSignIn(error)) {
        // Not restarted by the clock: without a token it would be refused again. It starts
        // when a sign-in (staff's, or one under way) brings one.
        qCInfo(lcMcp).noquote() << "server" << m_config.name << "waits for a sign-in ("
                                << m_lastError << ")";
        return;
    }
    if (m_restarts >= m_options.maxRestarts) {
        qCWarning(lcMcp).noquote() << "server" << m_config.name << "stays down after" << m_restarts
                                   << "restarts:" << m_lastError;
        return;
    }
    const qint64 delay = std::min<qint64>(qint64(m_options.restartInitialMs) << m_restarts,
                                          m_options.restartMaxMs);
    ++m_restarts;
    qCInfo(lcMcp).noquote() << "server" << m_config.name << "down (" << m_lastError << "); restart"
                            << m_restarts << "in" << delay << "ms";
    m_restart.start(int(delay));
}

qint64 Server::restartInMs() const
{
    if (m_state != State::Down || !m_restart.isActive())
        return -1;
    return std::max(0, m_restart.remainingTime());
}

bool Server::givenUp() const
{
    return m_state == State::Down && !m_restart.isActive() && m_restarts >= m_options.maxRestarts;
}

void Server::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void Server::settle()
{
    if (std::exchange(m_settled, true))
        return;
    Q_EMIT settled();
}

ServerSet::ServerSet(const Config &config, Server::Options options, QObject *parent)
    : QObject(parent)
{
    for (const ServerConfig &server : config.servers) {
        auto *running = new Server(server, options, this);
        m_servers.append(running);
        connect(running, &Server::toolsChanged, this, &ServerSet::toolsChanged);
        connect(running, &Server::stateChanged, this, &ServerSet::stateChanged);
        connect(running, &Server::signInChanged, this, &ServerSet::signInChanged);
        connect(running, &Server::settled, this, [this] {
            if (hasSettled() && !std::exchange(m_settledEmitted, true))
                Q_EMIT settled();
        });
    }
}

void ServerSet::start()
{
    for (Server *server : std::as_const(m_servers))
        server->start();
    if (m_servers.isEmpty() && !std::exchange(m_settledEmitted, true))
        QMetaObject::invokeMethod(this, &ServerSet::settled, Qt::QueuedConnection);
}

QList<std::shared_ptr<McpTool>> ServerSet::tools() const
{
    QList<std::shared_ptr<McpTool>> all;
    for (const Server *server : m_servers)
        all.append(server->tools());
    return all;
}

QStringList ServerSet::notReady() const
{
    QStringList names;
    for (const Server *server : m_servers) {
        if (server->state() != Server::State::Ready)
            names.append(server->name());
    }
    return names;
}

void ServerSet::whenStarted(int timeoutMs, QObject *context,
                            std::function<void(const QStringList &notReady)> done)
{
    const auto starting = [this] {
        return std::any_of(m_servers.cbegin(), m_servers.cend(), [](const Server *server) {
            return server->state() == Server::State::Starting;
        });
    };
    if (!starting()) {
        done(notReady());
        return;
    }
    // One small object per wait, owned by the context: the first of the two ways out ends
    // it, and with it the other (its timer and its connection).
    auto *wait = new QObject(context);
    auto *deadline = new QTimer(wait);
    deadline->setSingleShot(true);
    const QPointer<ServerSet> self(this);
    const auto finish = [wait, self, done = std::move(done)] {
        wait->deleteLater();
        if (self)
            done(self->notReady());
    };
    connect(deadline, &QTimer::timeout, wait, finish);
    connect(this, &ServerSet::stateChanged, wait, [starting, finish, deadline, wait] {
        if (deadline->isActive() && !starting()) {
            deadline->stop();
            // Queued: a server that became ready says so before its tools are announced
            // (toolsChanged), and whoever waits wants to declare them.
            QMetaObject::invokeMethod(wait, finish, Qt::QueuedConnection);
        }
    });
    deadline->start(std::max(0, timeoutMs));
}

bool ServerSet::hasSettled() const
{
    return std::all_of(m_servers.cbegin(), m_servers.cend(),
                       [](const Server *server) { return server->hasSettled(); });
}

void ServerSet::closeAll(int timeoutMs, QObject *context, std::function<void()> done)
{
    struct Closing
    {
        int left = 0;
        std::function<void()> done;
        void end()
        {
            if (const std::function<void()> call = std::exchange(done, {}))
                call();
        }
    };
    auto closing = std::make_shared<Closing>();
    closing->left = int(m_servers.size());
    closing->done = std::move(done);
    if (closing->left == 0) {
        QTimer::singleShot(0, context, [closing] { closing->end(); });
        return;
    }
    QTimer::singleShot(timeoutMs, context, [closing] { closing->end(); });
    for (Server *server : std::as_const(m_servers)) {
        connect(
            server, &Server::closed, context,
            [closing] {
                if (--closing->left == 0)
                    closing->end();
            },
            Qt::SingleShotConnection);
        server->close();
    }
}

} // namespace AgentConsole::Mcp
