#pragma once

#include <QString>

namespace AgentConsole {

struct RetryPolicy;

// Values core keeps in its own (wire or log) spelling, put in the staff member's words and
// language for the window. The wire names stay as they are everywhere else: JSON, exports,
// the ledger, the log. Kept apart from the widgets so that they can share them.
namespace StaffWords {

// "3 attempts × 2 s, backoff 200 ms ×2 ≤ 1 s; worst case 6.6 s" (RetryPolicy::describe()
// stays the log's).
// A duration as the cards say it: "850 ms", "2.5 s", "14 s".
QString duration(qint64 milliseconds);
QString policy(const RetryPolicy &policy);
// A breaker's dependency: "orders:embedded" reads "Orders · embedded store", "model:offline"
// "Model · offline demo"; a part this console has no word for stays as it is.
QString dependency(const QString &dependency);
// A latency histogram bucket: "≤ 10 ms", "> 5 s".
QString latencyBucket(int bucket);
// A shipped scenario's title and summary, translated where the catalogue has them
// (ui/scenariowords.cpp); a scenario from a file keeps its own words.
QString scenarioTitle(const QString &title);
QString scenarioSummary(const QString &summary);
// A shipped fault plan's description, translated where the catalogue has it
// (ui/faults/faultplanwords.cpp); a plan of the team's own keeps its words.
QString faultPlanDescription(const QString &description);

} // namespace StaffWords
} // namespace AgentConsole
