#pragma once

#include "../resilience/retrypolicy.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QMap>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

namespace AgentConsole {

class PolicySource;
class SecretStore;

// Which model answers. The offline demo model needs no key and no network.
struct ModelOptions
{
    enum class Provider { Offline, OpenAiCompatible };

    Provider provider = Provider::Offline;
    QString baseUrl; // up to and including /v1, e.g. https://api.deepseek.com/v1
    QString model; // e.g. deepseek-v4-flash
    QString apiKeyEnv = QStringLiteral(
        "AGENT_CONSOLE_API_KEY"); // the key's variable, never the key
    bool stream = true;
    bool fallbackToOffline = true; // primary -> [secondary ->] the offline demo model
    // Sent with every request, e.g. an organisation header. Never logged.
    QList<QPair<QByteArray, QByteArray>> extraHeaders;

    // A second OpenAI-compatible provider asked when the primary fails (optional).
    QString secondaryBaseUrl;
    QString secondaryModel;
    QString secondaryApiKeyEnv = QStringLiteral("AGENT_CONSOLE_SECONDARY_API_KEY");

    bool hasSecondary() const { return !secondaryBaseUrl.isEmpty(); }

    // Characters of the conversation sent with each request: the system prompt and the
    // current turn always, earlier turns while they fit (ConversationWindow). 0: the
    // provider's default (conversationBudget()). --context-chars, model/contextChars.
    int contextChars = 0;
    static constexpr int minContextChars = 2000;
    static constexpr int maxContextChars = 4'000'000;
    static constexpr int defaultContextChars = 32'000; // the offline model, unknown servers
    // contextChars, else the preset's for the provider's address (connectionsettings.h),
    // else defaultContextChars.
    int conversationBudget() const;

    // The OpenAI-compatible providers' timeouts and backoff; OpenAiConfig's defaults when
    // empty. Not on the command line: for a soak or a test that keeps them short but real.
    struct Timing
    {
        int connectTimeoutMs = 10000;
        int idleTimeoutMs = 30000;
        int initialBackoffMs = 500;
        int retryAfterCapMs = 20000;
    };
    std::optional<Timing> timing;

    // The model layer's retries when a team's policy sets them (docs/POLICY.md): attempts,
    // first delay and cap for every provider; empty: OpenAiConfig's.
    std::optional<RetryPolicy> retry;
};

// Where the support tools look things up.
struct BackendOptions
{
    enum class Kind { Embedded, Http };

    Kind kind = Kind::Embedded;
    QString url; // the REST backend's base URL, e.g. http://127.0.0.1:8080
};

struct RuntimeOptions
{
    static constexpr int McpIdleTimeoutMs = 10000;
    static constexpr int McpHardMaximumMs = 15000;

    QString dataDirectory; // where the embedded store and the log live
    QString faultPlanFile; // optional JSON fault plan (docs/FAULTS.md)
    QString userId; // defaults to the demo staff member of the first tenant
    QString tenantId;
    // The tools' policy; empty for RetryPolicy::jittered(jitterSeed): the seed article's
    // figures with full jitter. A policy given here is used as it is.
    std::optional<RetryPolicy> toolPolicy;
    // Seeds the jittered backoff of the default tool policy and of the model providers' retries.
    // Empty: drawn from the system's random source when the runtime is made, so that every
    // console and every process waits differently (fault plans and scenarios keep their own
    // fixed seeds). A test or a reproduction sets it.
    std::optional<std::uint64_t> jitterSeed;
    int toolWorkerThreads = 4;
    ModelOptions model;
    BackendOptions backend;
    // The idempotency ledger: empty for SQLite in the data directory, or postgresql://...
    // when a team shares one ledger.
    QString ledgerSpec;
    // A team's database (docs/TEAM.md): postgresql://user@host:port/db, without a password
    // (the keychain, ~/.pgpass or a service file holds it). It holds the ledger, the turn
    // journal with the history and the audit trail; empty: a desk of its own (SQLite).
    // Excludes ledgerSpec.
    QString teamSpec;
    // What a start does when the team's database cannot be reached: refuse (agent-cli's
    // default: it says how to run alone), ask the staff member (the window), or run alone on
    // this desk's own store, marked as such in the window and in every export.
    enum class WhenTeamUnreachable { Refuse, Ask, RunAlone };
    WhenTeamUnreachable whenTeamUnreachable = WhenTeamUnreachable::Refuse;
    // Tool calls run from one model message (DESIGN.md, "Bounds").
    static constexpr int defaultMaxToolCalls = 16;
    static constexpr int maxMaxToolCalls = 256;
    int maxToolCallsPerMessage = defaultMaxToolCalls;
    // Where the API key is kept when its variable is not set: null for the OS keychain (a
    // test gives an in-process store). Start-up and the settings switch both read it.
    std::shared_ptr<SecretStore> secrets;
    // MCP servers (docs/MCP.md): the mcp.json to read; empty for the data directory's own
    // mcp.json when there is one. A file that cannot be read or parsed fails the start.
    QString mcpConfigFile;
    // An MCP tool's attempt ends after this long without an answer or progress, and however
    // it progresses after the hard maximum.
    // McpTool::Settings' defaults: a read's worst case fits inside the turn's deadline.
    int mcpIdleTimeoutMs = McpIdleTimeoutMs;
    int mcpHardMaximumMs = McpHardMaximumMs;
    // A turn that starts while MCP servers are still starting waits for them this long at
    // most, then asks the model with the tools that are there and names the servers that are
    // not (TurnResult::serversNotReady). --mcp-wait.
    static constexpr int defaultMcpReadyWaitMs = 10000;
    static constexpr int maxMcpReadyWaitMs = 120000;
    int mcpReadyWaitMs = defaultMcpReadyWaitMs;
    // How old an earlier ticket for the same order and category may be and still be told to
    // staff as a likely duplicate before they confirm a new one. --duplicate-window.
    static constexpr int defaultDuplicateWindowMinutes = 24 * 60;
    static constexpr int maxDuplicateWindowMinutes = 30 * 24 * 60;
    int duplicateWindowMinutes = defaultDuplicateWindowMinutes;
    // OAuth sign-in of MCP servers (docs/MCP.md): whether a server's refusal opens the
    // browser by itself (agent-cli: yes, it prints the address; the window: staff click Sign
    // in), and how long a sign-in may wait for the browser's redirect.
    bool mcpSignInWhenAsked = false;
    int mcpSignInTimeoutMs = 300000;
    // Staff's policies for MCP tools over their annotations (Settings › MCP tool policies):
    // "<server>/<tool>" = "read" | "idempotent-write" | "confirm" (core/mcp/mcptoolpolicy.h).
    QMap<QString, QString> mcpToolPolicies;

    // The team's managed policy (docs/POLICY.md): where the start reads it (off the GUI
    // thread); null: no policy, as in tests. The programs give TeamPolicy::systemWideSource().
    std::shared_ptr<const PolicySource> policySource;
    // The settings the command line set, by key (settingkeys.h), with the
    // option that set each ("model/name" = "--model"): one a policy locks fails the start.
    QMap<QString, QString> commandLineSettings;

    static QString defaultDataDirectory();
    // Why `url` cannot name a team's database (not postgresql://, a password in it, ...), in
    // one line that does not repeat it; empty when it can.
    static QString teamSpecProblem(const QString &url);
};

// The words for these choices on the command line (--provider, --fallback, --backend) and in
// settings.ini: one table for both, in each enum's order (a word's index is its value).
namespace OptionWords {
QStringList providers(); // offline, openai
QStringList fallbacks(); // none, offline (fallbackToOffline false, true)
QStringList backends(); // embedded, http
QString provider(ModelOptions::Provider provider);
QString fallback(bool toOffline);
QString backend(BackendOptions::Kind kind);
// The word's value, or nothing for a word that is not in the table.
std::optional<ModelOptions::Provider> providerFrom(const QString &word);
std::optional<bool> fallbackFrom(const QString &word);
std::optional<BackendOptions::Kind> backendFrom(const QString &word);
// "offline or openai": the choices as a refusal names them.
QString choices(const QStringList &words);
} // namespace OptionWords

} // namespace AgentConsole
