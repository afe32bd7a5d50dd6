#include "scenarioverdicttext.h"

#include "faultpanel.h"

#include "ui/common/staffwords.h"
#include "ui/diagnostics/diagnosticsdock.h"
#include "ui/transcript/toolcalltext.h"
#include "ui/transcript/turntext.h"

#include "core/export/callwords.h"
#include "core/scenarios/scenario.h"
#include "core/scenarios/scenariorunner.h"

#include <QCoreApplication>

namespace AgentConsole::ScenarioVerdictText {

namespace {

// The panel's context: the words are the panel's, wherever they are put together.
struct Words
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::ScenarioPanel)
};

// A result code in the cards' words ("Timed out", "Not found"), quoted.
QString quoted(const ToolCallText::Status &status)
{
    return Words::tr("“%1”").arg(status.text);
}

// What a call was expected to end with: "“Timed out” after 3 attempts", "“OK” after 1 to 3
// attempts", "“Invalid” before any attempt", or the word alone when attempts are not checked.
QString expectedEnd(const ScenarioCallExpectation &want)
{
    const QString word = quoted(ToolCallText::statusOfCode(want.code));
    const int low = want.minAttempts;
    const int high = want.maxAttempts;
    if (low < 0 && high < 0)
        return word;
    if (low == high) {
        return low == 0 ? Words::tr("%1 before any attempt").arg(word)
                        : Words::tr("%1 after %n attempt(s)", nullptr, low).arg(word);
    }
    if (high < 0)
        return Words::tr("%1 after at least %n attempt(s)", nullptr, low).arg(word);
    if (low <= 0)
        return Words::tr("%1 after at most %n attempt(s)", nullptr, high).arg(word);
    return Words::tr("%1 after %2 to %3 attempts").arg(word).arg(low).arg(high);
}

// What a call ended with: "“OK” after 1 attempt", "“Unavailable” before any attempt".
QString gotEnd(const ToolCallRecord &call)
{
    const QString word = quoted(ToolCallText::statusOfResult(call.result));
    const int attempts = call.attemptsMade();
    return attempts == 0 ? Words::tr("%1 before any attempt").arg(word)
                         : Words::tr("%1 after %n attempt(s)", nullptr, attempts).arg(word);
}

// "Track a shipment (A1001): “Not found”"
QString madeCall(const ToolCallRecord &call)
{
    return Words::tr("%1: %2").arg(CallWords::titleWithSubject(call),
                                   quoted(ToolCallText::statusOfResult(call.result)));
}

QString statusWord(TurnStatus status)
{
    switch (status) {
    case TurnStatus::Completed:
        return Words::tr("finished");
    case TurnStatus::Failed:
        return Words::tr("failed");
    case TurnStatus::Cancelled:
        break;
    }
    return Words::tr("cancelled");
}

QString counterWords(const QString &name)
{
    const std::optional<Metrics::Counter> counter = Metrics::counterFromName(name);
    return counter ? DiagnosticsDock::counterWords(*counter) : name;
}

} // namespace

QString coveredRows(const QList<ResultCode::Code> &codes)
{
    QStringList words;
    for (const ResultCode::Code code : codes) {
        const QString word = ToolCallText::statusOfCode(code).text;
        if (!words.contains(word))
            words.append(word);
    }
    return words.join(Words::tr(", "));
}

QString description(const Scenario &scenario)
{
    QString text = StaffWords::scenarioSummary(scenario.summary);
    if (!scenario.covers.isEmpty())
        text += QLatin1Char('\n') + Words::tr("Shows: %1").arg(coveredRows(scenario.covers));
    return text;
}

QString difference(const ScenarioDifference &d, const AgentLoop *loop)
{
    using Kind = ScenarioDifference::Kind;
    switch (d.kind) {
    case Kind::Call:
        if (d.expected.tool == d.got.name) {
            return Words::tr("Turn %1, call %2 (%3): expected %4, got %5")
                .arg(d.turn)
                .arg(d.call)
                .arg(CallWords::titleWithSubject(d.got), expectedEnd(d.expected), gotEnd(d.got));
        }
        return Words::tr("Turn %1, call %2: expected %3 to end %4; %5 was called instead and "
                         "ended %6")
            .arg(d.turn)
            .arg(d.call)
            .arg(FaultPanel::toolLabel(loop, d.expected.tool), expectedEnd(d.expected),
                 CallWords::titleWithSubject(d.got), gotEnd(d.got));
    case Kind::CallCount: {
        QString text = Words::tr("Turn %1: expected %n tool call(s), got %2", nullptr,
                                 int(d.expectedValue))
                           .arg(d.turn)
                           .arg(d.gotValue);
        QStringList extra;
        for (const ToolCallRecord &call : d.extra)
            extra.append(madeCall(call));
        if (!extra.isEmpty())
            text += Words::tr(" (also %1)").arg(extra.join(Words::tr("; ")));
        return text;
    }
    case Kind::Outcome:
        return Words::tr("Turn %1: expected it to end “%2”; it ended “%3”")
            .arg(d.turn)
            .arg(Internal::outcomeWords(d.expectedOutcome), Internal::outcomeWords(d.gotOutcome));
    case Kind::Status:
        return Words::tr("Turn %1: expected it to be %2; it was %3")
            .arg(d.turn)
            .arg(statusWord(d.expectedStatus), statusWord(d.gotStatus));
    case Kind::Time:
        return Words::tr("Turn %1 took %2; the scenario allows at most %3")
            .arg(d.turn)
            .arg(ToolCallText::duration(d.gotValue), ToolCallText::duration(d.expectedValue));
    case Kind::Counter:
        return Words::tr("Turn %1, “%2”: expected %3, got %4")
            .arg(d.turn)
            .arg(counterWords(d.counter))
            .arg(d.expectedValue)
            .arg(d.gotValue);
    case Kind::Tickets:
        return Words::tr("Turn %1: expected %n ticket(s), got %2", nullptr, int(d.expectedValue))
            .arg(d.turn)
            .arg(d.gotValue);
    case Kind::TurnNotRun:
        return Words::tr("Turn %1 could not run to its end: %2").arg(d.turn).arg(d.reason);
    case Kind::Duplicates:
        return Words::tr("The backend now holds %n request(s) with more than one ticket", nullptr,
                         int(d.gotValue));
    case Kind::Cancelled:
        break;
    }
    return Words::tr("The run was stopped before its end");
}

QString testerLines(const ScenarioVerdict &verdict)
{
    if (verdict.differences.isEmpty())
        return {};
    return Words::tr("For testers, as the scenario file spells them:\n%1")
        .arg(verdict.differenceLines().join(QLatin1Char('\n')));
}

QString restored(const ScenarioVerdict &verdict)
{
    // Core says in English (for agent-cli's JSON) that the run put back what it found
    // (ScenarioRunner's restore()); the panel says the same in the staff member's language.
    if (verdict.restored.isEmpty())
        return {};
    return Words::tr("The faults, retry policies, circuit breakers and model fallback chain "
                     "in force before the scenario were put back, and your conversation "
                     "carries on where it was.");
}

QString elapsed(qint64 ms)
{
    if (ms < 1000)
        return Words::tr("%1 ms").arg(ms);
    return Words::tr("%1 s").arg(double(ms) / 1000.0, 0, 'f', 1);
}

} // namespace AgentConsole::ScenarioVerdictText
