#pragma once

#include "../async/await.h" // how its futures are taken, from ui/ too
#include "../async/fileread.h"
#include "casenote.h"
#include "conversationexport.h"

#include <QFuture>
#include <QString>

class QThreadPool;

namespace AgentConsole {

// What writing an export answered: written, or the one-line reason naming the file.
struct ExportWritten
{
    bool written = false;
    QString error;
};

// The file work of an export, on `pool` (null: the console's file pool, fileWorkPool()) and
// never on the caller's thread: an export holds up to kMaxTurns turns, and a long day's
// conversation takes long enough to redact and write to freeze the window (docs/
// PERFORMANCE.md, "Exports and files"); the disk may be slow or far away too.
//
// Reads the local log of `dataDirectory` for the turns' incidents (readIncidentLogs), then
// writes `report` to `path` (ConversationExport::writeTo). `report` is the pool's own copy.
QFuture<ExportWritten> writeExportFile(QThreadPool *pool, ConversationExport report,
                                       const QString &path, const QString &dataDirectory);
// ConversationExport::fromFile.
QFuture<FileRead<ConversationExport>> readExportFile(QThreadPool *pool, const QString &path);

// What Open export… found at a path. Only a JSON export opens: the Markdown bug report is
// rendered from it and keeps too little of it (no result data, no labels, no conditions) to
// be read back honestly. A path named .md/.markdown, or whose text starts as the bug report
// does, is told as such (`markdown`), with the JSON export of the same name beside it when
// there is one (`jsonBeside`, "A1001 … — 2026-12-07.json" for "… .md"), and not parsed.
struct ExportOpened
{
    FileRead<ConversationExport> read;
    bool markdown = false;
    QString jsonBeside; // empty: none
};
QFuture<ExportOpened> openExportFile(QThreadPool *pool, const QString &path);

// The case note of `turns` (CaseNote::text), made on `pool` (null: the file pool): a long
// conversation's note is redacted off the GUI thread.
QFuture<QString> caseNoteText(QThreadPool *pool, QList<TurnResult> turns, Redactor redactor,
                              Language language, QDate date);
// The same, written to `path` atomically (QSaveFile), whatever its extension: the note is
// plain text that reads as Markdown too. Refuses a directory.
QFuture<ExportWritten> writeCaseNoteFile(QThreadPool *pool, QList<TurnResult> turns,
                                         Redactor redactor, Language language, QDate date,
                                         const QString &path);

} // namespace AgentConsole
