#pragma once

#include "mcpquestion.h"
#include "runtimestatus.h"

#include <QHash>
#include <QList>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

class QUrl;

namespace AgentConsole {

class AgentLoop;
class CircuitBreakerRegistry;
class SecretStore;
class ToolRegistry;
struct RuntimeOptions;
namespace Mcp {
struct Config;
class PendingElicitation;
class ServerSet;
class ToolPolicyOverrides;
} // namespace Mcp

// The console's MCP servers (docs/MCP.md) and what goes with them: mcp.json as read at start,
// the running servers, staff's policies over the tools' annotations, sign-in, and the
// servers' open questions to staff. The runtime decides when tools are registered (its
// registry has no replacement: registerAgain) and whether a change may apply now. Each tool's
// retry policy is ToolPolicies' to say. Lives on the runtime's thread.
class McpServers final : public QObject
{
    Q_OBJECT

public:
    // `tools`: the runtime's registry, which status() reads each tool from as registered; it
    // outlives this. `registerAgain`: the runtime's; registers every tool again (after a
    // server's list changed, or staff's policies).
    McpServers(const ToolRegistry *tools, std::function<void()> registerAgain,
               QObject *parent = nullptr);
    ~McpServers() override;

    // The servers of mcp.json, started after the runtime is ready; null without one. Their
    // tools join the runtime's as each server lists them (AgentRuntime::toolsChanged);
    // settled() once every server's first start has ended (at once when there are none).
    const Mcp::ServerSet *servers() const { return m_servers.get(); }
    // Before the process ends: every server is ended as the specification asks (calls in
    // flight told notifications/cancelled; a stdio server's stdin closed, then SIGTERM, then
    // SIGKILL), within `timeoutMs`; then `done` (at once when there are none), unless
    // `context` goes first.
    void close(int timeoutMs, QObject *context, std::function<void()> done);

    // Staff's policies for MCP tools over their annotations (Settings › MCP tool policies),
    // "<server>/<tool>" = "read" | "idempotent-write" | "confirm"; a tool without one runs as
    // its annotations say. Set while the console runs, from each tool's next call: refused
    // (false, with the reason) while a question is being answered, or for a word that is not
    // a policy. Validation and every attempt's deadline stay whatever is chosen. status()
    // shows who decided each tool's policy; AgentRuntime::toolsChanged(),
    // toolPoliciesChanged() and statusChanged() follow.
    QMap<QString, QString> toolPolicies() const;
    bool setToolPolicies(const QMap<QString, QString> &policies, QString *error = nullptr);

    // Servers that need sign-in: how the front end opens the authorization address for staff
    // (the system browser in the window, the terminal in agent-cli); set before the runtime
    // starts. Without one, a sign-in fails as "the browser could not be opened".
    void setBrowserOpener(std::function<bool(const QUrl &url)> opener);
    // Staff sign in to a server (its browser page opens), sign out (the token is forgotten,
    // also in the keychain), or cancel a sign-in under way. False when no server of that name
    // signs in. statusChanged() follows each step (McpServerStatus::signIn); a server that
    // waited for the sign-in starts as soon as it succeeds.
    bool signIn(const QString &server);
    bool signOut(const QString &server);
    bool cancelSignIn(const QString &server);

    // Servers' questions to staff (elicitation, form mode): questionAsked() when a server
    // asks, with an id to answer by. Nothing connected to it: the question is declined at
    // once (nobody can answer). Accept's content has the defaults applied and is checked
    // against the question: false, with the field in `problem`, when it does not fit (nothing
    // is sent). False also for an id that has ended. questionEnded() follows once per id.
    // The wait counts against the tool call's attempt timeout, which nothing extends: when
    // the call ends first the question is withdrawn (the server is answered "cancel").
    bool answer(const QString &id, McpAnswer action, const QJsonObject &content = {},
                McpAnswerProblem *problem = nullptr);

    // The team's policy (docs/POLICY.md), before start(): only the servers named may start
    // (nothing: every one); the others stay in status(), down and refused by the policy.
    void setAllowedServers(const std::optional<QStringList> &allowed, const QString &version);
    // Why the server may not be used ("The team's policy (version 2026-12-01) does not allow
    // the MCP server \"crm\""); empty when it may.
    QString refusalOf(const QString &server) const;
    // The team's policy locks staff's MCP tool policies: setToolPolicies() is refused with
    // `refusal`.
    void lockToolPolicies(const QString &refusal) { m_toolPoliciesLocked = refusal; }
    QString toolPoliciesLockRefusal() const { return m_toolPoliciesLocked; }

    // Each server as the window shows it, its tools as registered.
    QList<McpServerStatus> status() const;
    // The secrets the servers run with (mcp.json's header and env values): kept out of exports.
    QStringList knownSecrets() const;

    // The runtime's side.
    // Staff's stored policies (RuntimeOptions::mcpToolPolicies), before anything starts; a
    // key not understood is logged and not used.
    void useStoredPolicies(const QMap<QString, QString> &stored);
    // mcp.json, read before anything starts: false with a one-line problem.
    bool readConfig(const QString &file, QString *problem);
    // Starts the servers of the file read (settled() at once without any).
    void start(const RuntimeOptions &options, std::shared_ptr<SecretStore> secrets);
    // Answers at once without servers, else when each has started or `waitMs` passed, with
    // the names of those not ready (AgentLoop::Dependencies::toolsReady).
    void whenStarted(int waitMs, QObject *context,
                     std::function<void(const QStringList &notReady)> started) const;
    // The loop whose cards show a question's state, and which says whether a turn runs.
    void setLoop(AgentLoop *loop) { m_loop = loop; }
    // Where status() finds each server's breaker.
    void setBreakers(const CircuitBreakerRegistry *breakers) { m_breakers = breakers; }
    // Registers every listed tool not shadowed by a name already taken, under staff's policy
    // where one is set.
    void registerTools(ToolRegistry &registry) const;

Q_SIGNALS:
    // Every server's first start has ended (at once when there are none).
    void settled();
    // A server's state or sign-in changed, or its tools were registered again.
    void statusChanged();
    // Staff's MCP tool policies changed (setToolPolicies); the tools run under them already.
    void toolPoliciesChanged();
    // A server asks staff a question (answer()); `question.operationId` and `toolTitle` name
    // the tool call it belongs to, when known.
    void questionAsked(const QString &id, const AgentConsole::McpQuestion &question);
    void questionEnded(const QString &id, AgentConsole::McpQuestionEnd how);

private:
    void askStaff(const QString &server, Mcp::PendingElicitation *pending);
    bool staffListens() const;

    const ToolRegistry *m_tools;
    std::function<void()> m_registerAgain;
    AgentLoop *m_loop = nullptr;
    const CircuitBreakerRegistry *m_breakers = nullptr;
    std::function<bool(const QUrl &)> m_browserOpener;
    std::unique_ptr<Mcp::ToolPolicyOverrides> m_overrides;
    // The open questions, by the id the front ends answer by. Declared before the servers: a
    // server going withdraws its questions into this.
    QHash<QString, QPointer<Mcp::PendingElicitation>> m_questions;
    quint64 m_questionsAsked = 0;
    std::unique_ptr<Mcp::Config> m_config;
    std::optional<QStringList> m_allowedServers; // the team policy's; nothing: every server
    QString m_policyVersion;
    QList<McpServerStatus> m_refusedByPolicy; // mcp.json's servers the policy does not allow
    QString m_toolPoliciesLocked;
    std::unique_ptr<Mcp::ServerSet> m_servers;
};

} // namespace AgentConsole
