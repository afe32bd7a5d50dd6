#include "mcpserver.h"

#include "../telemetry/logging.h"
#include "httptransport.h"
#include "mcptoolinfo.h"
#include "stdiotransport.h"

namespace AgentConsole::Mcp {

Server::Server(ServerConfig config, Options options, QObject *parent)
    : QObject(parent)
    , m_config(std::move(config))
    , m_options(std::move(options))
{
    m_restart.setSingleShot(true);
    connect(&m_restart, &QTimer::timeout, this, &Server::connectSession);
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
    return m_secrets + secretValues(m_config);
}

void Server::resolveSecrets()
{
    if (!hasReferences(m_config)) { // started at once, as a server without secrets always was
        m_running = m_config;
        m_secrets = secretValues(m_config);
        m_redactor.add(m_secrets);
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
            qCWarning(lcMcp).noquote() << "server" << m_config.name << "not started:"
                                       << result.detail;
            setState(State::Down);
            settle();
            return;
        }
        m_running = result.config;
        m_secrets = result.values + secretValues(*m_running);
        m_redactor.add(m_secrets);
        connectSession();
    });
}

void Server::connectSession()
{
    Q_ASSERT(m_running);
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
        transport = std::make_unique<HttpTransport>(http);
    }
    Session::Options sessionOptions = m_options.session;
    auto *session = new Session(std::move(transport), sessionOptions, this);
    m_session = session;
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
        connect(m_lister, &ToolLister::finished, this,
                [this](const QList<ToolInfo> &infos, int refused, const Error &error) {
            if (error.isError()) {
                onDown(error);
                return;
            }
            QList<std::shared_ptr<McpTool>> tools;
            m_refused = refused;
            for (const ToolInfo &info : infos) {
                QString problem;
                if (auto tool = McpTool::create(m_handle, m_config.name, info, m_options.tool,
                                                &problem)) {
                    tools.append(tool);
                } else {
                    ++m_refused;
                    qCWarning(lcMcp).noquote() << "server" << m_config.name << "tool not offered:"
                                               << problem;
                }
            }
            m_tools = tools;
            m_restarts = 0;
            m_lastError.clear();
            m_lastFailure = Failure::None;
            qCInfo(lcMcp).noquote() << "server" << m_config.name << "ready with"
                                    << m_tools.size() << "tools" << "(" << m_refused
                                    << "refused)";
            setState(State::Ready);
            Q_EMIT toolsChanged();
            settle();
        });
    }
    if (!m_lister->isListing())
        m_lister->list(m_options.listTimeoutMs);
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
    if (m_restarts >= m_options.maxRestarts) {
        qCWarning(lcMcp).noquote() << "server" << m_config.name << "stays down after"
                                   << m_restarts << "restarts:" << m_lastError;
        return;
    }
    const qint64 delay = std::min<qint64>(qint64(m_options.restartInitialMs) << m_restarts,
                                          m_options.restartMaxMs);
    ++m_restarts;
    qCInfo(lcMcp).noquote() << "server" << m_config.name << "down (" << m_lastError
                            << "); restart" << m_restarts << "in" << delay << "ms";
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

bool ServerSet::hasSettled() const
{
    return std::all_of(m_servers.cbegin(), m_servers.cend(),
                       [](const Server *server) { return server->hasSettled(); });
}

} // namespace AgentConsole::Mcp
