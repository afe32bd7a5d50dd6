#pragma once

#include "scenario.h"
#include "../turn/turnresult.h"

#include <QList>
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

namespace AgentConsole {

class AgentRuntime;

// How a scenario's run compared with what it expects.
struct ScenarioVerdict
{
    QString scenario;
    bool matched = false;
    // One line per thing that differed, naming the turn and the call, e.g. "turn 1, call 2
    // queryLogistics: expected TOOL_TIMEOUT after 3 attempts, got OK after 1".
    QStringList differences;
    // What happened besides the turns' results, e.g. "turn 1: agent-cli (pid 4242) reached
    // the kill point write-committed and was killed (SIGKILL); resumed here".
    QStringList notes;
    QList<TurnResult> turns; // in the scenario's order; a turn that never ran is left out
    qint64 elapsedMs = 0;
    // What the run left as it found it, e.g. "the faults and policies in force before the
    // scenario were restored".
    QString restored;

    QJsonObject toJson() const; // agent-cli --scenario --json's verdict object
};

// Runs one scenario on a runtime, the same for the window and agent-cli: sets its faults and
// policies (remembering the runtime's), asks each turn in a fresh conversation, answers the
// confirmations itself, cancels when a turn says so, compares every turn with what it
// expects, restores the faults and policies, and emits finished() once. A crash turn runs in
// a child agent-cli on the same data directory (the runtime lends it its lock), killed at
// the turn's kill point, then resumed here (AgentLoop::resume). Never blocks.
class ScenarioRunner final : public QObject
{
    Q_OBJECT

public:
    // `runtime` must outlive the runner.
    ScenarioRunner(AgentRuntime *runtime, QObject *parent = nullptr);
    ~ScenarioRunner() override; // kills a child still running; restores faults and policies

    // The agent-cli a crash turn starts; by default agent-cli beside the running executable
    // (or in the build tree's app/agent-cli/).
    void setCliPath(const QString &path);
    QString cliPath() const;
    // How long a crash turn's child may take to reach its kill point (default 30 s).
    void setChildTimeoutMs(int ms);

    // False, with the reason, when a scenario or a turn is running or the runtime is not
    // ready; otherwise the run has started (finished() follows, from the event loop).
    bool start(const Scenario &scenario, QString *error);
    bool isRunning() const;
    // The conversation the run set aside and carries on when it ends (the staff member's);
    // empty when none runs.
    QString setAsideConversation() const;
    // Stops the run: the running turn is cancelled, a child killed; finished() follows with
    // matched false.
    void cancel();

Q_SIGNALS:
    void turnStarted(int turnIndex, const QString &question);
    void turnFinished(int turnIndex, const AgentConsole::TurnResult &result);
    void finished(const AgentConsole::ScenarioVerdict &verdict);

private:
    class Private;
    std::unique_ptr<Private> d;
};

// The differences between one turn's result and its expectation, each starting with
// "turn N" (1-based); empty when it matched. `writeTools` are the tools whose calls hold
// tickets.
QStringList scenarioTurnDifferences(int turnNumber, const ScenarioExpectation &expect,
    const TurnResult &result, const QStringList &writeTools);

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::ScenarioVerdict)
