#pragma once

// Not part of the API: what the end of an attempt means, to the attempt's record, to the
// call's result code and to the dependency's circuit breaker (ToolExecutor).

#include "../attemptrecord.h"
#include "../failurekind.h"
#include "../resultcode.h"
#include "../toolresult.h"

#include <QStringList>

namespace AgentConsole {

class CircuitBreaker;

namespace Internal {

// The record's outcome of an attempt that ended with `kind` (and `result`, when it answered).
AttemptOutcome outcomeFor(FailureKind kind, const ToolResult &result);
// The code a call that failed so ends with. Only the mechanism's codes come from here, so
// their words come from the mechanism's rows of the failure table.
ResultCode::Code codeFor(FailureKind kind);
ToolResult failureFor(ResultCode::Code code, Language language, const QStringList &errors = {});
// Why a TOOL_UNAVAILABLE came without an attempt: written for the model and the chat, so that
// the answer can say the lookup is down rather than that it failed just now.
QString circuitOpenReason(Language language);
// What the model reads of a call an isolated breaker refused: the lead's reason is staff's
// words and stays out of it (the card shows it); the model learns it is unavailable.
QString isolatedReason(Language language);
// What an attempt's end says about the dependency's health. Rejected requests, access denied
// and bugs are about this request or this console, not about the backend, and a cancelled
// attempt says nothing at all: those only give their permission back.
void tellBreaker(CircuitBreaker *breaker, FailureKind kind, qint64 durationMs);

} // namespace Internal
} // namespace AgentConsole
