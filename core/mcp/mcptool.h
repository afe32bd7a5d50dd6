#pragma once

#include "mcperror.h"
#include "mcptoolinfo.h"

#include "../resilience/retrypolicy.h"
#include "../tools/agenttool.h"
#include "../tools/argumentschema.h"

#include <memory>

namespace AgentConsole::Mcp {

class Session;
class SessionHandle;
struct Reply;

// One MCP server tool as a generic AgentTool: everything the built-in tools get, with its
// annotations choosing the policy (ToolPolicy). Arguments are validated against the tool's
// inputSchema before any attempt; each attempt is one tools/call on the session's thread,
// asynchronous: no pool thread waits for it (bounded: the session's idle timeout, kept alive
// by progress up to the hard maximum; cancellation sends notifications/cancelled). The result
// is summarised for the model with a bound (mcpresultsummary.h); an isError result and
// JSON-RPC errors are classified into the failure table's codes. All the server's tools share
// one circuit breaker (the descriptor's service, "mcp:<server>").
class McpTool final : public AgentTool
{
public:
    struct Settings
    {
        // Defaults that fit a read's three attempts and its backoff (3 × 16 s + 0.6 s =
        // 48.6 s, the worst case the card shows) inside the turn's 60 s deadline with time
        // left to answer: a hung server costs the turn its answer about that tool, not the
        // whole answer (issue #24 §1).
        int idleTimeoutMs = 10000; // no answer and no progress for this long ends an attempt
        int hardMaximumMs = 15000; // however it progresses, an attempt ends here
    };

    McpTool(std::shared_ptr<SessionHandle> session, QString serverName, ToolInfo info,
            Settings settings);
    ~McpTool() override;

    // Null, with the reason, when the tool cannot be offered safely: its schema uses keywords
    // the validator does not enforce, or cannot be read.
    static std::shared_ptr<McpTool> create(std::shared_ptr<SessionHandle> session,
                                           const QString &serverName, const ToolInfo &info,
                                           Settings settings, QString *problem);

    // The name the model calls: "<server>__<tool>", only [A-Za-z0-9_-], at most 64 characters
    // (a hash ends names that would be longer), so that two servers' tools never collide.
    static QString exposedName(const QString &serverName, const QString &toolName);
    static QString serviceName(const QString &serverName);

    ToolDescriptor descriptor() const override { return m_descriptor; }
    // The policy in force: the annotations' (annotatedPolicy()) unless staff overrode it.
    ToolPolicy policy() const { return m_policy; }
    ToolPolicy annotatedPolicy() const { return m_annotatedPolicy; }
    bool isOverridden() const { return m_overridden; }
    // The same tool (session, schema, settings) under staff's policy: its descriptor, its
    // confirmation and its retries follow `policy` (mcptoolpolicy.h). Validation and the
    // attempt's deadline stay as they are whatever the policy.
    std::shared_ptr<McpTool> withOverride(ToolPolicy policy) const;
    const QString &serverName() const { return m_serverName; }
    const ToolInfo &info() const { return m_info; }
    // The executor's policy for this tool from the console's default: the attempt timeout is
    // the hard maximum (the session's idle timeout ends a silent attempt first), and a write
    // is never retried.
    RetryPolicy retryPolicy(const RetryPolicy &base) const;

    std::optional<ToolResult> precheck(const QJsonObject &arguments,
                                       const TrustedContext &context) const override;
    AttemptResult attempt(const QJsonObject &arguments, const TrustedContext &context,
                          const AttemptContext &attempt) const override;
    // Each attempt is one tools/call, made on the session's thread; it holds no pool thread
    // while the server works (an MCP server that never answers starves nothing).
    bool isAsynchronous() const override { return true; }
    std::function<void()> startAttempt(const QJsonObject &arguments, const TrustedContext &context,
                                       const AttemptContext &attempt,
                                       AttemptDone done) const override;

private:
    void describePolicy();

    std::shared_ptr<SessionHandle> m_session;
    QString m_serverName;
    ToolInfo m_info;
    Settings m_settings;
    ToolPolicy m_annotatedPolicy;
    ToolPolicy m_policy;
    bool m_overridden = false;
    ToolDescriptor m_descriptor;
    std::unique_ptr<ArgumentSchema> m_schema;
    // The shape its structuredContent must have (MCP's outputSchema); null when it has none.
    std::shared_ptr<const ArgumentSchema> m_outputSchema;
};

// How a pool thread reaches a session that lives on another thread: post() queues a
// function to run on the session's thread, or says the session is gone. Thread-safe.
class SessionHandle final
{
public:
    explicit SessionHandle(Session *session);
    ~SessionHandle();
    SessionHandle(const SessionHandle &) = delete;
    SessionHandle &operator=(const SessionHandle &) = delete;

    bool post(std::function<void(Session *)> function) const;

private:
    struct State;
    std::shared_ptr<State> d;
};

// What an attempt's reply becomes for the executor (exposed for the tests).
// A tool that declares an outputSchema must answer with structuredContent of that shape: one
// that does not is a classified failure (TOOL_REJECTED), never data for the model.
AttemptResult attemptResultFor(const Reply &reply, ToolPolicy policy, Language language,
                               const ArgumentSchema *outputSchema = nullptr);

} // namespace AgentConsole::Mcp
