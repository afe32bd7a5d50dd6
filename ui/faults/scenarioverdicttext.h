#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace AgentConsole {

namespace ResultCode {
enum class Code : quint16;
}
class AgentLoop;
struct Scenario;
struct ScenarioDifference;
struct ScenarioVerdict;

// The words the Scenarios panel and menu show of a scenario and of its run, in the staff
// member's language: the failure-table rows it shows in the cards' words (ToolCallText), what
// differed in staff words rather than the file's wire names, and what the run put back. What
// differed as the file spells it stays for testers, in the verdict's tooltip (testerLines);
// the rows a scenario shows are in its file and docs/SCENARIOS.md. They only put what core
// decided into words; they decide nothing.
namespace ScenarioVerdictText {

// The scenario's summary and, on a line of its own, the rows it shows in the cards' words:
// "… \nShows: Access denied, OK" (each word once).
QString description(const Scenario &scenario);
// The rows it shows in the cards' words, each once: "Access denied, OK".
QString coveredRows(const QList<ResultCode::Code> &codes);

// One difference in staff words, e.g. "Turn 1, call 2 (Track a shipment (A1001)): expected
// “Timed out” after 3 attempts, got “OK” after 1 attempt". `loop` names a tool that was
// expected but not called (FaultPanel::toolLabel).
QString difference(const ScenarioDifference &difference, const AgentLoop *loop);
// The run's differences as the scenario file spells them, for testers (the verdict's
// tooltip); empty when there were none.
QString testerLines(const ScenarioVerdict &verdict);
// What the run put back; empty when it changed nothing.
QString restored(const ScenarioVerdict &verdict);
// "1.2 s", "640 ms"
QString elapsed(qint64 ms);

} // namespace ScenarioVerdictText
} // namespace AgentConsole
