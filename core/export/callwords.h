#pragma once

#include <QJsonValue>
#include <QString>

#include "../tools/tooldescriptor.h"

namespace AgentConsole {

struct ToolCallRecord;

// How a tool call is put for staff, where core needs the words too (the case note) and the
// window's cards say the same (ui/transcript/toolcalltext.h reads these): from the tool's
// labels (ToolLabels), translated in their context by whatever translator is installed.
namespace CallWords {

// A value as it is written: a string as it is, a number without trailing zeros, anything
// else as compact JSON.
QString value(const QJsonValue &value);
// An enumerated value in the tool's staff words ("Damaged item" for DAMAGED), translated; any
// other value as value() writes it.
QString valueLabel(const ToolLabels::Argument &field, const QJsonValue &value);

// The tool's title in the staff member's language ("Track a shipment" / 查询物流); its name
// for a tool without one.
QString title(const ToolCallRecord &call);
// The ids the call is about, from its labelled string arguments that are short and not
// enumerated (an order, a SKU; never free text): "A1001", "A1001, SKU-200"; empty if none.
QString subject(const ToolCallRecord &call);
// The title with the subject: "Track a shipment (A1001)".
QString titleWithSubject(const ToolCallRecord &call);
// What a successful call found, from the tool's finding template (ToolLabels::finding):
// "In transit · Shanghai Pudong Hub", "T-000001 · Damaged item". A field with a sibling
// "<key>Zh" is said from it when `chinese`. Empty unless the call finished with success and
// the tool has a template. Not shortened.
QString finding(const ToolCallRecord &call, bool chinese);
// The id a successful write made (the result data's ToolLabels::created key): "T-000012";
// empty for anything else.
QString createdId(const ToolCallRecord &call);

} // namespace CallWords
} // namespace AgentConsole
