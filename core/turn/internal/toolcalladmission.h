#pragma once

#include "../../resilience/toolresult.h"

#include <QJsonObject>
#include <QString>

namespace AgentConsole {

class AgentTool;
struct TrustedContext;

namespace Internal {

// What a planned tool call becomes before anything of it runs: refused at once (the model
// named no real tool, its arguments are not a JSON object, are nested deeper or hold more
// values than the bounds, or the tool rejects them: so that nobody is asked to confirm a
// write that could not run anyway), run as a lookup, run as a write, or held for the staff
// member's confirmation. Thread-safe: it runs on the check pool, off the GUI thread. A write
// confirmed before an interruption (the same arguments) or an idempotent one (the ledger guards it
// unconfirmed) runs without asking.
struct ToolCallAdmission
{
    enum class Verdict { Refused, Lookup, Write, AskStaff };

    Verdict verdict = Verdict::Refused;
    ToolResult refusal; // when Refused
    QJsonObject arguments; // otherwise: the arguments as parsed
};

ToolCallAdmission admitToolCall(const AgentTool *tool, const QString &rawArguments,
                                const TrustedContext &context, bool confirmedBefore,
                                int maxArgumentDepth);

} // namespace Internal
} // namespace AgentConsole
