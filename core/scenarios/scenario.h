#pragma once

#include "../faults/faultplan.h"
#include "../resilience/retrypolicy.h"
#include "../turn/turnresult.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>

namespace AgentConsole {

// What one tool call of a turn must end with (docs/SCENARIOS.md). Attempts are the attempts
// made (ToolCallRecord::attemptsMade()); -1 leaves a bound unchecked.
struct ScenarioCallExpectation
{
    QString tool;
    ResultCode::Code code = ResultCode::Code::Ok; // written by its wire name: "TOOL_TIMEOUT"
    int minAttempts = -1;
    int maxAttempts = -1;

    // "TOOL_TIMEOUT after 3 attempts", "OK after 1 to 3 attempts", "OK".
    QString describe() const;
};

// What a turn must come to. Only what the file names is checked, but `outcome` and `maxMs`
// always are: a scenario says how the turn ends and how long it may take.
struct ScenarioExpectation
{
    bool checksCalls = false; // "calls" given: exactly these calls, in this order
    QList<ScenarioCallExpectation> calls;
    TurnOutcome outcome = TurnOutcome::Answered;
    std::optional<TurnStatus> status;
    qint64 maxMs = 0;
    QMap<QString, int> counters; // DESIGN.md's counter names -> value in this turn
    std::optional<int> tickets; // tickets the turn's writes hold (see docs/SCENARIOS.md)
};

struct ScenarioTurn
{
    QString question;
    // The same question in Chinese ("questionZh"), asked when the run's language is Chinese
    // (ScenarioRunner::setLanguage): it must make the same tool calls with the same arguments'
    // meaning, so that one `expect` holds for both. Empty: the English question is asked.
    QString questionZh;
    QString requestId; // empty: the loop makes one
    bool approve = true; // the answer to every confirmation of this turn
    qint64 cancelAfterMs = -1; // >= 0: the turn is cancelled this long after it started
    // A kill point (core/telemetry/killpoint.h), "name" or "name#n": the turn runs in a child
    // agent-cli on the same data directory, killed there, then resumed here.
    QString crashAt;
    // With crashAt: carry the killed turn on here (AgentLoop::resume). When false the turn is
    // left interrupted and only reaching the kill point is checked; it takes no "expect".
    bool resume = true;
    // Asked with no staff member in the session (no userId, no tenantId): CONTEXT_MISSING.
    bool withoutStaff = false;
    ScenarioExpectation expect;

    // The question asked in `language`: questionZh in Chinese when there is one.
    QString questionIn(Language language) const;
};

// A scenario of the catalogue (docs/SCENARIOS.md): faults and policies to set, turns to ask
// and what each must come to. Parsed strictly: an unknown key, a wrong type or a value out of
// range is refused with one line that names the key.
struct Scenario
{
    static constexpr qint64 maxFileBytes = 256 * 1024;
    static constexpr int maxTurns = 16;
    static constexpr int maxCallsPerTurn = 32;
    static constexpr qint64 maxTurnMs = 600'000;

    QString name; // the file's stem: [a-z0-9-]
    QString title; // a few words for a menu
    QString summary; // one sentence of what it shows
    QString file; // where it was read from (":/agentconsole/scenarios/..." when built in)
    QList<ResultCode::Code> covers; // failure-table rows the scenario shows
    FaultPlan faults;
    QJsonObject faultsJson; // the plan as written: handed to a crash turn's child process
    QMap<QString, RetryPolicy> policies; // per tool, from RetryPolicy::defaults()
    QList<ScenarioTurn> turns;

    // `fileStem` names the scenario when the JSON has no "name" (and must then agree with it).
    // The seed of the default policy's jitter while a scenario runs (ToolPolicies::
    // setJitterSeed): fixed, so that a scenario waits the same on every console and run.
    static constexpr std::uint64_t jitterSeed = 0x5eed;

    static std::optional<Scenario> fromJson(const QByteArray &json, QString *error,
                                            const KnownTools &tools, const QString &fileStem = {});
    // A regular file of at most maxFileBytes (anything else is refused before it is read).
    static std::optional<Scenario> fromFile(const QString &path, QString *error,
                                            const KnownTools &tools);

    bool hasCrashTurn() const;
    // Every turn has its question in Chinese too: the run asks the same in either language.
    bool isBilingual() const;
};

// The scenarios shipped in resources/scenarios/ (embedded), sorted by name.
class ScenarioCatalogue final
{
public:
    // The support tools, as the runtime registers them: what built-in scenarios may name.
    static KnownTools supportTools();
    // Every shipped scenario that parses; `problems` (may be null) gets one line for each
    // that does not (a scenario using a fault key this build does not know).
    static QList<Scenario> builtIn(QStringList *problems = nullptr,
                                   const KnownTools &tools = supportTools());
    // A shipped scenario by name, or a file when `nameOrFile` names one (a path with a '/',
    // or ending in ".json"). Nothing, with the reason, otherwise.
    static std::optional<Scenario> find(const QString &nameOrFile, QString *error,
                                        const KnownTools &tools = supportTools());
};

} // namespace AgentConsole
