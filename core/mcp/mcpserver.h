#pragma once

#include "mcpconfig.h"
#include "mcpsecrets.h"
#include "mcpsession.h"
#include "mcptool.h"

#include <QList>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <functional>
#include <memory>

namespace AgentConsole::OAuth {
class Authorizer;
class GrantStore;
} // namespace AgentConsole::OAuth

namespace AgentConsole::Mcp {

class ToolLister;

// One configured MCP server kept running: a session over its transport, its tools listed
// (again on notifications/tools/list_changed) and adapted (McpTool), and, when it dies or
// refuses, restarted with backoff a bounded number of times while it is shown as down. Its
// tools stay offered while it is down: their calls fail fast as unavailable (and its breaker
// opens), so the answer can say so instead of the tools silently vanishing.
// Its header and env values may refer to the keychain (mcpsecrets.h): they are resolved once,
// asynchronously, before the first start; a reference that cannot be resolved leaves the
// server down with the reason, never started and not restarted.
class Server final : public QObject
{
    Q_OBJECT

public:
    enum class State { Starting, Ready, Down };
    Q_ENUM(State)

    struct Options
    {
        Session::Options session;
        McpTool::Settings tool;
        // The longest an attempt of its tools may run (the hard maximum), so that a read's
        // three attempts fit inside the turn's deadline with time left to answer; mcp.json's
        // own longer timeouts are limited to it (timeoutsLimitedToMs()). 0: no limit.
        int longestAttemptMs = 0;
        int listTimeoutMs = 10000;
        int restartInitialMs = 1000;
        int restartMaxMs = 60000;
        int maxRestarts = 5; // in a row, without reaching Ready in between
        // Where the config's ${keychain:...} references are looked up; null: nowhere (a
        // server with references stays down).
        SecretReader secrets;
        // The OAuth sign-in of HTTP servers (docs/MCP.md, "Servers that need sign-in").
        struct SignIn
        {
            // Whether a server's refusal may open the browser by itself (agent-cli); the
            // window leaves it to staff (the dock's Sign in).
            bool whenAsked = false;
            std::function<bool(const QUrl &)> openBrowser;
            std::shared_ptr<OAuth::GrantStore> grants; // the keychain; null: kept in memory
            int timeoutMs = 5 * 60 * 1000;
            QString clientName = QStringLiteral("Agent Console");
            QString clientMetadataUrl;
        } signIn;
        // Who asks staff the server's questions (elicitation/create, form mode), with the
        // server's mcp.json name. Empty: elicitation is not offered (not declared, refused).
        std::function<void(const QString &server, PendingElicitation *question)> questions;
    };

    Server(ServerConfig config, Options options, QObject *parent = nullptr);
    ~Server() override;

    void start();
    // Ends it as MCP asks, for good (no restart): its calls in flight are told
    // notifications/cancelled, and a stdio server's input is closed, then it is sent SIGTERM,
    // then SIGKILL, each after a bounded wait (StdioTransport). closed() follows, at once
    // when nothing runs.
    void close();
    const QString &name() const { return m_config.name; }
    // As mcp.json says, references unresolved: safe to show (describe()), never a secret.
    const ServerConfig &config() const { return m_config; }
    State state() const { return m_state; }
    QString lastError() const { return m_lastError; } // for the log and the CLI, no secrets
    // What took it down (None while it is not down), for words staff read.
    Failure lastFailure() const { return m_lastFailure; }
    // Down and about to be restarted: how long until then; -1 when no restart is due (it is
    // not down, or it stays down after its restarts in a row: givenUp()).
    qint64 restartInMs() const;
    bool givenUp() const;
    QList<std::shared_ptr<McpTool>> tools() const { return m_tools; }
    // The tools it listed that are not offered, one line each with the reason ("tool x's
    // inputSchema is refused: ..."): for the log, the dock and --list-tools; no secret.
    const QStringList &refusedTools() const { return m_refused; }
    // When mcp.json asked for longer timeouts than fit inside a turn: the hard maximum its
    // tools' attempts were limited to; 0 when its own timeouts are kept.
    int timeoutsLimitedToMs() const { return m_timeoutsLimitedToMs; }
    // Whether the first start has ended (Ready, or Down after its first attempt).
    bool hasSettled() const { return m_settled; }
    // The secret values this server runs with (resolved and typed in the file), for the
    // redactors of what leaves the console (exports); never to be logged or shown.
    QStringList knownSecrets() const;
    // The server's OAuth sign-in; null for stdio servers, "oauth": false, or a server whose
    // headers carry their own Authorization.
    OAuth::Authorizer *authorizer() const { return m_authorizer; }
    // Forgets the server's token (here and in the keychain) and starts its session again
    // without one: it is then down until staff sign in again.
    void signOut();

Q_SIGNALS:
    void closed();
    void signInChanged();
    void stateChanged(AgentConsole::Mcp::Server::State state);
    void toolsChanged();
    void settled();

private:
    void resolveSecrets();
    void connectSession();
    void listTools();
    void onDown(const Error &error);
    void setState(State state);
    void settle();
    void makeAuthorizer();
    bool waitsForSignIn(const Error &error) const;

    ServerConfig m_config;
    OAuth::Authorizer *m_authorizer = nullptr;
    std::optional<ServerConfig> m_running; // m_config with its secrets, once resolved
    QStringList m_secrets; // the values m_running holds
    SecretRedactor m_redactor; // over m_secrets: for what this server logs
    bool m_resolving = false;
    Options m_options;
    State m_state = State::Starting;
    QPointer<Session> m_session;
    std::shared_ptr<SessionHandle> m_handle;
    QPointer<ToolLister> m_lister;
    QList<std::shared_ptr<McpTool>> m_tools;
    QString m_lastError;
    Failure m_lastFailure = Failure::None;
    QTimer m_restart;
    int m_restarts = 0;
    QStringList m_refused;
    int m_timeoutsLimitedToMs = 0;
    bool m_closing = false;
    bool m_settled = false;
};

// Every server of one mcp.json.
class ServerSet final : public QObject
{
    Q_OBJECT

public:
    ServerSet(const Config &config, Server::Options options, QObject *parent = nullptr);

    void start();
    const QList<Server *> &servers() const { return m_servers; }
    QList<std::shared_ptr<McpTool>> tools() const;
    bool hasSettled() const;
    // The servers that are not Ready now (starting, down, or waiting for a sign-in).
    QStringList notReady() const;
    // Calls `done` once no server is starting (each is ready or down), or when `timeoutMs`
    // has passed, whichever comes first, with notReady() then; at once when none is starting.
    // A server down for a restart or a sign-in is not waited for: no wait bounded in seconds
    // brings it back. Nothing is delivered once `context` or this set is destroyed.
    void whenStarted(int timeoutMs, QObject *context,
                     std::function<void(const QStringList &notReady)> done);
    // Closes every server (Server::close) and calls `done` once all have closed, or when
    // `timeoutMs` has passed, whichever comes first; unless `context` goes first.
    void closeAll(int timeoutMs, QObject *context, std::function<void()> done);

Q_SIGNALS:
    void toolsChanged();
    void stateChanged();
    void signInChanged();
    void settled(); // once, when every server's first start has ended

private:
    QList<Server *> m_servers;
    bool m_settledEmitted = false;
};

} // namespace AgentConsole::Mcp
