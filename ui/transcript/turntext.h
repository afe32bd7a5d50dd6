#pragma once

#include "ui/common/consolepalette.h"

#include "core/turn/turnresult.h"

#include <QCoreApplication>
#include <QString>

#include <utility>

namespace AgentConsole {

struct TranscriptTurn;
struct ToolCallRecord;
struct TurnResult;

namespace Internal {

// The words of a turn, in TranscriptView's context wherever they are built (lupdate reads
// TurnText::tr, and QCoreApplication::translate("AgentConsole::TranscriptView", ...) at run time).
// They only put what core decided into words for staff; they decide nothing.
struct TurnText
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::TranscriptView)
};

// Attempts of the layers that retried, and the fallback if there was one: a turn that went
// through on the first try needs no such detail. "model: 8 attempts · fallback ×2 · tools: 4
// attempts"
QString layerAttempts(const TurnResult &result);
// Where an interrupted turn had stopped, in the staff member's words (not the stage names
// the journal keeps).
QString stoppedWhere(const QString &stageName);
// "Resumed: stopped while looking things up"; empty for a turn never interrupted.
QString resumedFor(const TranscriptTurn &turn);
// The calls the bound on calls per message refused, as one line; empty when there were none.
QString notRunFor(const TranscriptTurn &turn);
// "Agent · deepseek-chat" once the turn knows which model answered.
QString speakerFor(const TranscriptTurn &turn);
// A turn's outcome in the chip's words: "Answered", "Partly answered", "Not answered",
// "Failed".
QString outcomeWords(TurnOutcome outcome);
// The chip follows the turn's outcome: green only when everything asked was answered.
std::pair<QString, Tone> statusFor(const TurnResult &result);
// "1.2 s · 3 tool calls · tools: 5 attempts · incident …"
QString footerFor(const TurnResult &result);
// Whether the model has the turn's call `index` (any of its calls for -1) waiting for the
// staff member's answer: such a card is shown at once, opening and closing alike.
bool awaitsConfirmation(const TranscriptTurn &turn, int index = -1);
// "Try again" of a turn that could not look everything up: a new question asking only what
// failed ("Try again: Track a shipment A1001; Check stock SKU-200"), in the window's language;
// a write is never in it. Empty when nothing failed that may be asked again.
QString retryQuestionFor(const TurnResult &result);
// One failed call's part of it ("Track a shipment A1001"): empty for a write, a success or a
// not-found. A failed card's own Try again asks TurnText::tr("Try again: %1") of it.
QString retryAskFor(const ToolCallRecord &call);
// The answer a finished turn shows: the model's, or a sentence saying why there is none.
QString finalAnswer(const TurnResult &result, const QString &streamed);

} // namespace Internal
} // namespace AgentConsole
