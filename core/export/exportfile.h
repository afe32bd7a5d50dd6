#pragma once

#include "../async/fileread.h"
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
// never on the caller's thread: an export holds up
// to kMaxTurns turns (a 1,000-turn one is ~4 MB, about half a second to redact and write:
// docs/PERFORMANCE.md, "Files the staff member names") and the disk may be slow or far away.
//
// Reads the local log of `dataDirectory` for the turns' incidents (readIncidentLogs), then
// writes `report` to `path` (ConversationExport::writeTo). `report` is the pool's own copy.
QFuture<ExportWritten> writeExportFile(QThreadPool *pool, ConversationExport report,
                                       const QString &path, const QString &dataDirectory);
// ConversationExport::fromFile.
QFuture<FileRead<ConversationExport>> readExportFile(QThreadPool *pool, const QString &path);

} // namespace AgentConsole
