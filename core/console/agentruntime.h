#pragma once

#include "../async/await.h" // how the runtime's futures are taken (counterTotals())
#include "../turn/agentloop.h"
#include "../turn/interruptedturns.h"
#include "mcpquestion.h"
#include "redaction.h"
#include "runtimeoptions.h"
#include "runtimestatus.h"
#include "../turn/toollatencystats.h"
#include "../turn/turncheckpoint.h"

#include <QFuture>
#include <QJsonObject>
#include <QObject>
#include <QList>
#include <QString>

#include <functional>
#include <memory>

namespace AgentConsole {

class ChatModel;
class CircuitBreakerRegistry;
struct DependencyState;
class SecretStore;
class FaultPlan;
struct KnownTools;
class ToolExecutor;
class ToolRegistry;
class TurnJournal;
namespace Mcp {
class ServerSet;
}

// The console's parts wired together, the same for the window and agent-cli: the embedded
// store, the fault plan, the support tools, the executor, the offline model and the agent
// loop (the composition root). start() runs RuntimeStartup (the store prepared on a worker
// thread, the ledger and the journal opened, the interrupted turns read); ready() or failed()
// follows, on the thread that owns the runtime. The duplicate-ticket check runs in
// DuplicateTicketMonitor, the interrupted turns are kept in InterruptedTurns.
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
    // The key is read as at start: its variable when set (then the switch is done on return),
    // else the keychain (secretStore()), asynchronously: isApplyingSettings() holds until
    // settingsChanged() says the new model is in place. A later call supersedes one pending.
    bool applyConnectionSettings(const ModelOptions &model, const BackendOptions &backend,
                                 QString *error);
    bool isApplyingSettings() const;
    // Where the API key is kept when its variable is not set (RuntimeOptions::secrets, else
    // the OS keychain); the settings dialog stores a key there.
    std::shared_ptr<SecretStore> secretStore() const;

    const RuntimeOptions &options() const;
    AgentLoop *agentLoop() const;   // valid after ready()
    ToolExecutor *executor() const; // valid after ready()
    const ToolRegistry *tools() const;
    ChatModel *model() const;
    CircuitBreakerRegistry *breakers() const; // one breaker per provider and per backend
    // What failing dependencies have left (dependencystate.h); a default DependencyState
    // given back is a fresh start's: every breaker new, no model out of the chain.
    DependencyState dependencyState() const;
    void restoreDependencyState(const DependencyState &state);
    QString storePath() const;
    QString backendSummary() const; // "embedded store" or "REST http://host:port"
    // One line for the status bar; empty without a plan. In the log's English, or in the
    // window's language with `translated` (FaultPlan::SummaryWords::Staff).
    QString faultPlanSummary(bool translated = false) const;

    // Faults (docs/FAULTS.md): the plan in force. Replaced while the console runs (the fault
    // panel, a scenario); every tool attempt and model call reads it as it starts, so a change
    // applies to the next one without a restart. The plan starts as --faults gave it.
    // Its "sim" section goes to support-sim when the backend is REST and the section changed
    // (PUT /sim/faults, or POST /sim/faults/reset once it is gone), asynchronously:
    // simFaultsApplied() or faultsRefused() follows.
    FaultPlan faultPlan() const;
    // The tools a plan may name, and which of them write (for FaultPlan::fromJson).
    KnownTools knownTools() const;
    void setFaultPlan(const FaultPlan &plan);
    void clearFaults();
    bool hasActiveFaults() const;
    // A "sim" section is on its way to support-sim: a scenario that asks now may meet the
    // sim's old faults. At start, ready() waits for the sim's answer instead.
    bool isSendingSimFaults() const;

    // Retry policies per tool (DESIGN.md, "Retry boundaries"): the default (--policy, or
    // RetryPolicy::defaults()) unless the window or a scenario set one for the tool. A change
    // applies from the tool's next call; calls already running keep theirs.
    RetryPolicy defaultToolPolicy() const;
    // The seed of the default tool policy's jitter (RuntimeOptions::jitterSeed). A scenario
    // runs on a fixed one, so that its waits are the same on every console, and puts the
    // console's back when it ends.
    std::uint64_t jitterSeed() const;
    void setJitterSeed(std::uint64_t seed);
    RetryPolicy toolPolicy(const QString &toolName) const;
    // Refused with the reason (RetryPolicy::problem()) when a value is out of range, or the
    // tool is unknown; the tool's policy is then unchanged.
    bool setToolPolicy(const QString &toolName, const RetryPolicy &policy, QString *error);
    void resetToolPolicy(const QString &toolName);
    void resetToolPolicies();
    // The tools whose policy differs from the default, in registry order: flagged in the
    // window like an active fault.
    QStringList toolsWithCustomPolicy() const;
    // What a turn starting now runs under, as it is kept with the turn (TurnResult::
    // conditions): the fault plan in force (active, its one line in the log's words, the plan)
    // and the retry policies (the default's and each custom one's describe()).
    QJsonObject conditionsNow() const;
    // The model, the breakers that are not closed and the tool policy with its worst case, as
    // the window shows them; statusChanged() says when to read it again.
    RuntimeStatus status() const;
    // What an export must not carry: the API keys in use (from the environment or the OS
    // keychain), inside a Redactor that never hands them back (docs/EXPORT.md).
    Redactor exportRedactor() const;
    // Closes the dependency's breaker with an empty window (the diagnostics dock's Reset);
    // false when there is no breaker of that name. statusChanged() follows.
    bool resetBreaker(const QString &dependency);
    // How long each tool's calls took, over every turn this runtime ran (not stored);
    // toolLatencyChanged() says when it grew.
    const ToolLatencyStats &toolLatency() const;

    // The MCP servers of mcp.json (docs/MCP.md), started after ready(); null without one.
    // Their tools join tools() as each server lists them (toolsChanged()); mcpSettled() once
    // every server's first start has ended (at once when there are none).
    const Mcp::ServerSet *mcpServers() const;
    // Before the process ends: every MCP server is ended as the specification asks (calls in
    // flight told notifications/cancelled; a stdio server's stdin closed, then SIGTERM, then
    // SIGKILL), within `timeoutMs`; then `done`, unless `context` goes first.
    void closeMcpServers(int timeoutMs, QObject *context, std::function<void()> done);
    // Staff's policies for MCP tools over their annotations (Settings › MCP tool policies),
    // "<server>/<tool>" = "read" | "idempotent-write" | "confirm"; a tool without one runs as
    // its annotations say. Set while the console runs, from each tool's next call: refused
    // (false, with the reason) while a question is being answered, or for a word that is
    // not a policy. Validation and every attempt's deadline stay whatever is chosen.
    // status() shows who decided each tool's policy; toolsChanged() and statusChanged() follow.
    QMap<QString, QString> mcpToolPolicies() const;
    bool setMcpToolPolicies(const QMap<QString, QString> &policies, QString *error = nullptr);

    // MCP servers that need sign-in (docs/MCP.md): how the front end opens the authorization
    // address for staff (the system browser in the window, the terminal in agent-cli); set
    // before start(). Without one, a sign-in fails as "the browser could not be opened".
    void setBrowserOpener(std::function<bool(const QUrl &url)> opener);
    // Staff sign in to a server (its browser page opens), sign out (the token is forgotten,
    // also in the keychain), or cancel a sign-in under way. False when no server of that name
    // signs in. statusChanged() follows each step (McpServerStatus::signIn); a server that
    // waited for the sign-in starts as soon as it succeeds.
    bool signInToMcpServer(const QString &server);
    bool signOutOfMcpServer(const QString &server);
    bool cancelMcpSignIn(const QString &server);

    // MCP servers' questions to staff (elicitation, form mode): mcpQuestionAsked() when a
    // server asks, with an id to answer by. Nothing connected to it: the question is declined
    // at once (nobody can answer). Accept's content has the defaults applied and is checked
    // against the question: false, with the field in `problem`, when it does not fit (nothing
    // is sent). False also for an id that has ended. mcpQuestionEnded() follows once per id.
    // The wait counts against the tool call's attempt timeout, which nothing extends: when
    // the call ends first the question is withdrawn (the server is answered "cancel").
    bool answerMcpQuestion(const QString &id, McpAnswer action, const QJsonObject &content = {},
                           McpAnswerProblem *problem = nullptr);

    // Where turns are checkpointed: turns.sqlite in the data directory. Valid after ready().
    TurnJournal *journal() const;
    // The turns found interrupted at start (or whose answer failed), oldest first, for
    // AgentLoop::resume(); a turn leaves the list when it finishes or is dismissed. Empty when
    // another console process holds this data directory: the turns are its to resume.
    QList<TurnCheckpoint> interruptedTurns() const;
    // Interrupted turns found at start that are not offered (another session's, or damaged):
    // the window and agent-cli report them.
    QList<SetAsideTurn> setAsideTurns() const;
    // A scenario's crash turn (ScenarioRunner) runs in a child agent-cli on this data
    // directory: the runtime, idle, releases its console.lock so that the child may take it,
    // and rescanInterruptedTurns() takes it back once the child is gone. Refused (false, with
    // the reason) while a turn runs or before ready(). Nothing else may ask meanwhile.
    bool lendDataDirectory(QString *error);
    bool isDataDirectoryLent() const;
    // Takes the data directory back when it was lent, then reads the interrupted turns from
    // the journal again (a child's turn killed half-way is then offered like one found at
    // start); interruptedTurnsRescanned() follows, with an empty error on success.
    void rescanInterruptedTurns();
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
    void toolsChanged();
    void mcpSettled();
    void ready();
    // A clear, one-line reason (bad fault plan, unwritable data dir, ...); nothing was lost.
    void failed(const QString &reason);
    // The model or the backend changed (applyConnectionSettings).
    void settingsChanged();
    // status() changed: a breaker opened, half-opened or closed, or the settings changed.
    void statusChanged();
    // The fault plan in force changed (setFaultPlan, clearFaults).
    void faultsChanged();
    // support-sim took the plan's "sim" section (or its reset), at start or after a change.
    void simFaultsApplied();
    // Part of the plan could not be put in force: support-sim did not answer or refused the
    // "sim" section, or the backend is not REST. One line for staff, no URL; details are in
    // the local log. The rest of the plan is in force.
    void faultsRefused(const QString &reason);
    // A tool's retry policy changed (setToolPolicy, resetToolPolicies).
    void policiesChanged();
    // rescanInterruptedTurns() finished: `error` is empty, or says why the lock could not be
    // taken back (the turns were then not read).
    void interruptedTurnsRescanned(const QString &error);
    // A turn finished and its calls were counted in toolLatency().
    void toolLatencyChanged();
    // A duplicate check finished; above 0 is an alert (one operationId, several tickets).
    void duplicateBusinessObjectsChecked(int count);
    // An MCP server asks staff a question (answerMcpQuestion); `question.operationId` and
    // `toolTitle` name the tool call it belongs to, when known.
    void mcpQuestionAsked(const QString &id, const AgentConsole::McpQuestion &question);
    void mcpQuestionEnded(const QString &id, AgentConsole::McpQuestionEnd how);

private:
    class Private;
    std::unique_ptr<Private> d;
};

} // namespace AgentConsole
