#pragma once

#include "../console/redaction.h"
#include "../resilience/toolresult.h"
#include "../turn/turnresult.h"

#include <QDate>
#include <QList>
#include <QString>

namespace AgentConsole {

// A conversation as a case note staff paste into a ticket (docs/EXPORT.md, "Case note"): per
// turn of the staff member's own, the question, what was found, what could not be looked up
// or done, and the ids of the tickets made. A pure function of the turns: no widget, no file.
//
// Language: the window's, as the cards that were on screen say it. The note's own words are
// translated by the translator installed (QCoreApplication::translate, context
// "AgentConsole::CaseNote"; agent-cli and a suite without one get the English source), the
// tools' titles and findings in their ToolLabels context, and the failure table's staff
// sentences in `language` (the window passes its own). The question is quoted as it was asked.
//
// Nothing internal goes in: no result code, request, operation or incident id, URL, message
// of a backend or arguments beyond the ids a call is about; a failure is said by the failure
// table's staff sentence for its code. A turn of a scenario run is not the customer's
// conversation: it is left out, and the note says how many were. The whole text goes through
// `redactor` last.
namespace CaseNote {

// The note of `turns`, dated `date` (the day it is made).
QString text(const QList<TurnResult> &turns, const Redactor &redactor, Language language,
             const QDate &date);
// The turns a note says something of: those that are not a scenario run's.
QList<TurnResult> staffTurns(const QList<TurnResult> &turns);

} // namespace CaseNote

// A conversation's title for a file name: its first question of the staff member's own (the
// first question at all when there is none), redacted, with what a file name cannot hold
// (/ \ : * ? " < > |, '.', control characters) made spaces, and bounded to kMaxTitleLength
// characters at a word's end. "Conversation" (translated) when nothing is left.
QString conversationFileTitle(const QList<TurnResult> &turns, const Redactor &redactor);
// "A1001 mug arrived broken — 2026-12-07.md": the title and the date, with `suffix` ("md",
// "json"). What every export's save dialog proposes.
QString suggestedExportFileName(const QList<TurnResult> &turns, const Redactor &redactor,
                                const QDate &date, const QString &suffix);
constexpr qsizetype kMaxTitleLength = 60;

} // namespace AgentConsole
