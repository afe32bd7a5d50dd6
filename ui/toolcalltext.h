#pragma once

#include "consolepalette.h"

#include <QString>
#include <QStringList>

class QJsonObject;

namespace AgentConsole {

struct AttemptRecord;
struct ToolCallRecord;

// The words a tool call card shows. They only translate what core decided (the result code,
// the recorded attempts) into short text for staff; they decide nothing.
namespace ToolCallText {

struct Status
{
    QString text; // "OK", "Not found", "Timed out", "Running…", ...
    Tone tone = Tone::Neutral;
};

Status statusOf(const ToolCallRecord &call);
Status statusOfCode(const QString &resultCode);
// "orderId=A1001, sku=SKU-200"; the raw text when the model's arguments were not JSON.
QString compactArguments(const ToolCallRecord &call);
QString compactArguments(const QJsonObject &arguments);
// "3 attempts · 1.6 s", "1 attempt · 35 ms", "not run" (rejected before any attempt).
QString attemptSummary(const ToolCallRecord &call);
// "#1 timed out after 2000 ms, backoff 200 ms"
QString attemptLine(const AttemptRecord &attempt);
QStringList timeline(const ToolCallRecord &call);
// "640 ms", "1.6 s", "12 s"
QString duration(qint64 milliseconds);

} // namespace ToolCallText
} // namespace AgentConsole
