#pragma once

#include "../resilience/retrypolicy.h"
#include "agentloop.h"
#include "turncheckpoint.h"

#include <QFuture>
#include <QJsonObject>
#include <QObject>
#include <QList>
#include <QPair>
#include <QString>

#include <memory>
#include <optional>

namespace AgentConsole {

class ChatModel;
class CircuitBreakerRegistry;
class ToolExecutor;
class ToolRegistry;
class TurnJournal;

// Which model answers. The offline demo model needs no key and no network.
struct ModelOptions
{
    enum class Provider { Offline, OpenAiCompatible };

    Provider provider = Provider::Offline;
    QString baseUrl;   // up to and including /v1, e.g. https://api.deepseek.com/v1
    QString model;     // e.g. deepseek-v4-flash
    QString apiKeyEnv
        = QStringLiteral("AGENT_CONSOLE_API_KEY"); // the key's variable, never the key
    bool stream = true;
    bool fallbackToOffline = true; // primary -> [secondary ->] the offline demo model
    // Sent with every request, e.g. an organisation header. Never logged.
    QList<QPair<QByteArray, QByteArray>> extraHeaders;

    // A second OpenAI-compatible provider asked when the primary fails (optional).
    QString secondaryBaseUrl;
    QString secondaryModel;
    QString secondaryApiKeyEnv = QStringLiteral("AGENT_CONSOLE_SECONDARY_API_KEY");

    bool hasSecondary() const { return !secondaryBaseUrl.isEmpty(); }

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
    QString dataDirectory;  // where the embedded store and the log live
    QString faultPlanFile;  // optional JSON fault plan (docs/FAULTS.md)
    QString userId;         // defaults to the demo staff member of the first tenant
    QString tenantId;
    std::optional<RetryPolicy> toolPolicy; // defaults to RetryPolicy::defaults()
    int toolWorkerThreads = 4;
    ModelOptions model;
    BackendOptions backend;
    // The idempotency ledger: empty for SQLite in the data directory, or postgresql://...
    // when a team shares one ledger.
    QString ledgerSpec;
    // Tool calls run from one model message (DESIGN.md, "Bounds").
    static constexpr int defaultMaxToolCalls = 16;
    static constexpr int maxMaxToolCalls = 256;
    int maxToolCallsPerMessage = defaultMaxToolCalls;

    static QString defaultDataDirectory();
};

// An interrupted turn found at start that is not offered for resumption, and why. Its row
// stays in the journal; nothing of its content is shown.
struct SetAsideTurn
{
    enum class Reason {
        OtherSession, // saved by another staff member or tenant than the running session
        Damaged,      // its checkpoint cannot be read back
    };
    Reason reason = Reason::Damaged;
    QString conversationId;
    QString requestId;

    QString describe() const; // one line for staff, naming the request
};

// The console's parts wired together, the same for the window and agent-cli: the embedded
// store, the fault plan, the support tools, the executor, the offline model and the agent
// loop. start() prepares the store on a worker thread; ready() or failed() follows, on the
// thread that owns the runtime.
class AgentRuntime final : public QObject
{
    Q_OBJECT

public:
    explicit AgentRuntime(const RuntimeOptions &options, QObject *parent = nullptr);
    ~AgentRuntime() override;

    void start();
    bool isReady() const;
    // Switches the model and the tool backend between turns (the settings dialog). The values
    // are checked as the command line checks them; false with a one-line reason otherwise.
    bool applyConnectionSettings(const ModelOptions &model, const BackendOptions &backend,
                                 QString *error);

    const RuntimeOptions &options() const;
    AgentLoop *agentLoop() const;   // valid after ready()
    ToolExecutor *executor() const; // valid after ready()
    const ToolRegistry *tools() const;
    ChatModel *model() const;
    CircuitBreakerRegistry *breakers() const; // one breaker per provider and per backend
    QString storePath() const;
    QString backendSummary() const; // "embedded store" or "REST http://host:port"
    QString faultPlanSummary() const; // one line for the status bar; empty without a plan

    // Where turns are checkpointed: turns.sqlite in the data directory. Valid after ready().
    TurnJournal *journal() const;
    // The turns found interrupted at start (or whose answer failed), oldest first, for
    // AgentLoop::resume(); a turn leaves the list when it finishes or is dismissed. Empty when
    // another console process holds this data directory: the turns are its to resume.
    QList<TurnCheckpoint> interruptedTurns() const;
    // Interrupted turns found at start that are not offered (another session's, or damaged):
    // the window and agent-cli report them.
    QList<SetAsideTurn> setAsideTurns() const;
    // Stops offering a turn for resumption; its record is kept.
    void dismissInterruptedTurn(const QString &conversationId, const QString &requestId);
    // DESIGN.md's counters over every turn of this data directory, with
    // duplicate_business_object_count as last checked (absent while unknown).
    QFuture<QJsonObject> counterTotals() const;
    // Idempotency keys owning more than one ticket in the backend, as last checked: -1 while
    // unknown. Checked at start and after every turn that wrote.
    int duplicateBusinessObjects() const;
    // A duplicate check is running; duplicateBusinessObjectsChecked follows.
    bool isCheckingDuplicates() const;

Q_SIGNALS:
    void ready();
    // A clear, one-line reason (bad fault plan, unwritable data dir, ...); nothing was lost.
    void failed(const QString &reason);
    // The model or the backend changed (applyConnectionSettings).
    void settingsChanged();
    // A duplicate check finished; above 0 is an alert (one operationId, several tickets).
    void duplicateBusinessObjectsChecked(int count);

private:
    class Private;
    std::unique_ptr<Private> d;
};

} // namespace AgentConsole
