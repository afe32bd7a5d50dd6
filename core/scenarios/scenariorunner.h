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

// One thing that differed in a run, kept as data so that each reader words it its own way:
// `line` for testers, agent-cli and the log (tool names, result codes and outcomes as the
// scenario file spells them), the window in staff words (ui/faults/scenarioverdicttext.h).
struct ScenarioDifference
{
    Q_GADGET

public:
    enum class Kind {
        Call, // a call ended otherwise than expected: `expected`, `got`
        CallCount, // another number of calls: expectedValue, gotValue, `extra`
        Outcome, // expectedOutcome, gotOutcome
        Status, // expectedStatus, gotStatus
        Time, // the turn took gotValue ms, more than expectedValue
        Counter, // `counter` (DESIGN.md's name): expectedValue, gotValue
        Tickets, // expectedValue, gotValue
        TurnNotRun, // the turn could not be asked, run or resumed: `reason`
        Duplicates, // the backend holds gotValue idempotency keys with more than one ticket
        Cancelled, // the run was stopped before its end
    };
    Q_ENUM(Kind)

    Kind kind = Kind::TurnNotRun;
    int turn = 0; // 1-based; 0 for the run as a whole
    int call = 0; // Call: 1-based, in the turn's order
    ScenarioCallExpectation expected; // Call
    ToolCallRecord got; // Call: the call as it was made
    QList<ToolCallRecord> extra; // CallCount: the calls made beyond those expected
    qint64 expectedValue = 0;
    qint64 gotValue = 0;
    QString counter;
    TurnOutcome expectedOutcome = TurnOutcome::Answered;
    TurnOutcome gotOutcome = TurnOutcome::Answered;
    TurnStatus expectedStatus = TurnStatus::Completed;
    TurnStatus gotStatus = TurnStatus::Completed;
    QString reason; // TurnNotRun: why, worded where it was found
    // The tester's line, e.g. "turn 1, call 2 queryLogistics: expected TOOL_TIMEOUT after 3
    // attempts, got OK after 1": in English for agent-cli, in the window's language there.
    QString line;
};

// How a scenario's run compared with what it expects.
struct ScenarioVerdict
{
    QString scenario;
    bool matched = false;
    // One per thing that differed, in the order found (turn by turn, then the run's own).
    QList<ScenarioDifference> differences;
    // What happened besides the turns' results, e.g. "turn 1: agent-cli (pid 4242) reached
    // the kill point write-committed and was killed (SIGKILL); resumed here".
    QStringList notes;
    QList<TurnResult> turns; // in the scenario's order; a turn that never ran is left out
    qint64 elapsedMs = 0;
    // What the run put back as it found it (English, for agent-cli and the log): the faults,
    // the retry policies, the circuit breakers and the model chain, and the staff member's
    // conversation. Empty when the run never changed anything.
    QString restored;

    // The differences' lines (ScenarioDifference::line), in order.
    QStringList differenceLines() const;
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

    // The language the turns' questions are asked in (ScenarioTurn::questionIn): the window
    // passes its own, so that a Chinese window's run reads Chinese all through; English by
    // default. Taken at start().
    void setLanguage(Language language);
    Language language() const;

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

// The differences between one turn's result and its expectation, each about turn
// `turnNumber` (1-based); empty when it matched. `writeTools` are the tools whose calls hold
// tickets.
QList<ScenarioDifference> scenarioTurnDifferences(int turnNumber,
                                                  const ScenarioExpectation &expect,
                                                  const TurnResult &result,
                                                  const QStringList &writeTools);

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::ScenarioVerdict)
