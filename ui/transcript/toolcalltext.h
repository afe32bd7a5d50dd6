#pragma once

#include "ui/common/consolepalette.h"

#include <QList>
#include <QString>
#include <QStringList>

class QDateTime;
class QJsonObject;

namespace AgentConsole {

struct AttemptRecord;
struct ToolCallRecord;
struct ToolResult;
namespace ResultCode {
enum class Code : quint16;
}

// The words a tool call card shows. They only translate what core decided (the result code,
// the recorded attempts) into short text for staff; they decide nothing.
namespace ToolCallText {

struct Status
{
    QString text; // "OK", "Not found", "Timed out", "Running…", ...
    Tone tone = Tone::Neutral;
};

Status statusOf(const ToolCallRecord &call);
// A result's word and tone: its code's label and severity in the failure table; a code nobody
// here recognises shows its name as it was given.
Status statusOfResult(const ToolResult &result);
Status statusOfCode(ResultCode::Code code);
// "orderId=A1001, sku=SKU-200"; the raw text when the model's arguments were not JSON.
QString compactArguments(const ToolCallRecord &call);
QString compactArguments(const QJsonObject &arguments);
// "3 attempts · 1.6 s", "1 attempt · 35 ms", "not run" (rejected before any attempt),
// "not attempted · circuit open". Counts only attempts that were made.
QString attemptSummary(const ToolCallRecord &call);
// "#1 timed out after 2000 ms, backoff 200 ms". An attempt that ended the call is worded by
// the call's result code (an unknown write outcome is never "nothing matched"), and a
// breaker's refusal says the cool-down it had left.
QString attemptLine(const AttemptRecord &attempt, const ToolCallRecord &call);
QStringList timeline(const ToolCallRecord &call);
// One attempt in a word or two and its tone, for the painted timeline's bars: "timeout",
// "ok", "not found", "cancelled". The tone is the failure table's severity of the code the
// outcome stands for (toneOf), so that a bar and a chip of the same result agree.
Status attemptStatus(const AttemptRecord &attempt, const ToolCallRecord &call);
// "640 ms", "1.6 s", "12 s"
QString duration(qint64 milliseconds);

// The words come from the tool's labels (ToolLabels), translated here; a tool without its
// own words gets general ones.
// What a successful call found, from the tool's finding template (ToolLabels::finding), in
// the window's language: "In transit · Shanghai Pudong Hub", "Out of stock · 0 available",
// "T-000001 · Damaged item". Empty while the call runs, when it failed, or when the tool
// has no template. Never coloured: a finding is neither good nor bad news.
QString findingText(const ToolCallRecord &call);
// One line staff can paste: "Track a shipment (A1001): In transit · Shanghai Pudong Hub", or
// the call's outcome when it found nothing.
QString staffLine(const ToolCallRecord &call);

// The tool's title in the staff member's language ("Track a shipment" / 查询物流); its name
// for a tool without one.
QString toolTitle(const ToolCallRecord &call);
// The confirmation panel of a write tool. "Confirm: create an after-sales ticket"
QString confirmationTitle(const ToolCallRecord &call);
// The approving button: "Create ticket", or "Confirm" for a tool without its own word.
QString confirmActionText(const ToolCallRecord &call);
// "Order" for orderId, "Category", "Description"; keys the tool does not label as they are.
QString argumentLabel(const ToolCallRecord &call, const QString &key);

struct ArgumentRow
{
    QString label; // "Order"
    QString value; // the exact value, never shortened
};
// Every argument the tool will run with, in full: the fields the tool labels first, in its
// order (order, SKU, category, description), then the rest.
QList<ArgumentRow> argumentRows(const ToolCallRecord &call);

// What a write's check found before staff confirm it (ToolCallRecord::priorWrites), for its
// confirmation panel. Empty texts when the write has no check.
struct PriorWritesText
{
    // "A1001 already has a “Damaged item” ticket T-000001, created 2 min ago by you."
    QString duplicate;
    // "This order's tickets: checking…", "This order's tickets: none", "This order's
    // tickets could not be checked (Unavailable)", "This order's tickets:"
    QString heading;
    // One line per earlier write: "T-000001 · Damaged item · 2 min ago, by you"
    QStringList lines;
};
PriorWritesText priorWritesText(const ToolCallRecord &call, const QDateTime &now);
// "just now", "2 min ago", "3 h ago", "2 days ago"; empty for an invalid time.
QString ageText(const QDateTime &then, const QDateTime &now);

// How an MCP tool's calls run, in staff words: "read", "idempotent write", "confirm first"
// (from the plain "read", "idempotent-write", "write" core reports).
QString policyWord(const QString &policy);
// The card's line about who chose the call's policy, when it was not the console itself:
// "Policy set by staff: confirm first (annotations said: read)", or, where the server's hints
// took a safeguard away, "Policy from the server's annotations (hints, not verified): read".
// Empty otherwise. The tooltip says what still applies whatever the policy.
QString policyNote(const ToolCallRecord &call);
// An MCP server's question during the call: "Waiting for your answer to the question from
// files", then how it ended; empty when no server asked.
QString questionNote(const ToolCallRecord &call);
QString policyNoteToolTip(const ToolCallRecord &call);
// What annotations relaxing a safeguard mean, in one line (the card, the dock, the dialog).
QString hintsWarning();

} // namespace ToolCallText
} // namespace AgentConsole
