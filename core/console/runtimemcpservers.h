#pragma once

#include "mcpquestion.h"
#include "runtimestatus.h"

#include "../mcp/mcptoolpolicy.h"
#include "../resilience/retrypolicy.h"

#include <QHash>
#include <QList>
#include <QPointer>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

class QObject;
class QUrl;

namespace AgentConsole {

class AgentLoop;
class AgentRuntime;
class CircuitBreakerRegistry;
class SecretStore;
class ToolRegistry;
struct RuntimeOptions;
namespace Mcp {
struct Config;
class PendingElicitation;
class ServerSet;
} // namespace Mcp

// The runtime's MCP servers (docs/MCP.md) and what goes with them: mcp.json as read at start,
// the running servers, staff's policies over the tools' annotations, the policy each
// registered tool runs under, and the servers' open questions to staff. It speaks through the
// runtime's signals (statusChanged, mcpSettled, mcpQuestionAsked, ...); the runtime decides
// when tools are registered and when a policy change may apply.
class RuntimeMcpServers final
{
public:
    // `staffListens` says whether a front end can answer a server's question now (else it is
    // declined at once).
    RuntimeMcpServers(AgentRuntime *runtime, std::function<bool()> staffListens);
    ~RuntimeMcpServers();

    // mcp.json, read before anything starts: false with a one-line problem.
    bool readConfig(const QString &file, QString *problem);
    // Starts the servers of the file read (mcpSettled at once without any). `toolsChanged`
    // runs when a server's tool list changed.
    void start(const RuntimeOptions &options, std::shared_ptr<SecretStore> secrets,
               std::function<void()> toolsChanged);
    const Mcp::ServerSet *servers() const { return m_servers.get(); }
    // Ends every server as MCP asks (Mcp::ServerSet::closeAll), at most `timeoutMs`; `done`
    // then, at once when there are none, unless `context` goes first.
    void close(int timeoutMs, QObject *context, std::function<void()> done);
    // Answers at once without servers, else when each has started or `waitMs` passed, with
    // the names of those not ready (AgentLoop::Dependencies::toolsReady).
    void whenStarted(int waitMs, QObject *context,
                     std::function<void(const QStringList &notReady)> started) const;
    void setLoop(AgentLoop *loop) { m_loop = loop; }
    void setBrowserOpener(std::function<bool(const QUrl &url)> opener);

    // Registers every listed tool not shadowed by a name already taken, under staff's policy
    // where one is set; remembers the annotations' retry policy of each.
    void registerTools(ToolRegistry &registry, const RetryPolicy &base);
    // The policy a registered MCP tool runs under unless one was set by hand; none for a
    // tool that is not an MCP server's.
    std::optional<RetryPolicy> toolPolicy(const QString &toolName) const;

    const Mcp::ToolPolicyOverrides &overrides() const { return m_overrides; }
    void setOverrides(const Mcp::ToolPolicyOverrides &overrides) { m_overrides = overrides; }

    bool signIn(const QString &server);
    bool signOut(const QString &server);
    bool cancelSignIn(const QString &server);
    bool answer(const QString &id, McpAnswer action, const QJsonObject &content,
                McpAnswerProblem *problem);

    // Each server as the window shows it, its tools as registered.
    QList<McpServerStatus> status(const CircuitBreakerRegistry *breakers,
                                  const ToolRegistry &registry) const;
    // The secrets the servers run with (mcp.json's header and env values): kept out of exports.
    QStringList knownSecrets() const;

private:
    void askStaff(const QString &server, Mcp::PendingElicitation *pending);

    AgentRuntime *m_runtime;
    std::function<bool()> m_staffListens;
    AgentLoop *m_loop = nullptr;
    std::function<bool(const QUrl &)> m_browserOpener;
    Mcp::ToolPolicyOverrides m_overrides;
    // An MCP tool's own policy, from its annotations: its "default" when none was set by hand.
    QHash<QString, RetryPolicy> m_annotatedPolicies;
    // The open questions, by the id the front ends answer by. Declared before the servers: a
    // server going withdraws its questions into this.
    QHash<QString, QPointer<Mcp::PendingElicitation>> m_questions;
    quint64 m_questionsAsked = 0;
    std::unique_ptr<Mcp::Config> m_config;
    std::unique_ptr<Mcp::ServerSet> m_servers;
};

} // namespace AgentConsole
