// A scenario file (docs/SCENARIOS.md) as a tester writes it: Scenario::fromJson, checked
// against the real tools' names, then everything the runner reads of a scenario it accepted.
// Properties: a refused file says why in one line naming a key; an accepted one is within its
// bounds (turns, question length, calls, time) and names only known kill points and tools.

#include "fuzzsupport.h"

#include "core/turn/agentloop.h"
#include "core/scenarios/scenario.h"

using namespace AgentConsole;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Fuzz::ensureApplication();
    static const KnownTools tools = ScenarioCatalogue::supportTools();
    const QByteArray json = Fuzz::bytesOf(data, size);

    QString error;
    const std::optional<Scenario> scenario = Scenario::fromJson(json, &error, tools);
    FUZZ_CHECK(scenario.has_value() == error.isEmpty());
    if (!scenario) {
        FUZZ_CHECK(error.startsWith(QStringLiteral("scenario: ")));
        FUZZ_CHECK(!error.contains(QLatin1Char('\n')) || error.contains(QStringLiteral("JSON")));
        return 0;
    }
    FUZZ_CHECK(!scenario->name.isEmpty() && !scenario->title.isEmpty());
    FUZZ_CHECK(!scenario->turns.isEmpty() && scenario->turns.size() <= Scenario::maxTurns);
    for (auto it = scenario->policies.cbegin(); it != scenario->policies.cend(); ++it) {
        FUZZ_CHECK(tools.names.contains(it.key()));
        FUZZ_CHECK(!it.value().problem().has_value());
    }
    for (const ScenarioTurn &turn : scenario->turns) {
        FUZZ_CHECK(
            !turn.question.isEmpty() && turn.question.size() <= AgentLoop::maxQuestionLength);
        FUZZ_CHECK(turn.requestId.isEmpty() || AgentLoop::isValidRequestId(turn.requestId));
        FUZZ_CHECK(turn.cancelAfterMs <= Scenario::maxTurnMs);
        FUZZ_CHECK(turn.resume || !turn.crashAt.isEmpty());
        if (!turn.resume)
            continue;
        FUZZ_CHECK(turn.expect.maxMs >= 1 && turn.expect.maxMs <= Scenario::maxTurnMs);
        FUZZ_CHECK(turn.expect.calls.size() <= Scenario::maxCallsPerTurn);
        for (const ScenarioCallExpectation &call : turn.expect.calls) {
            FUZZ_CHECK(call.maxAttempts < 0 || call.minAttempts <= call.maxAttempts);
            (void)call.describe();
        }
    }
    (void)scenario->hasCrashTurn();
    (void)scenario->faults.summary();
    return 0;
}
