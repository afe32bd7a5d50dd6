#pragma once

#include <QString>

class QSqlError;

namespace AgentConsole {

// A full disk, told apart from damage and from other failures (DESIGN.md: "A full disk is told
// as a full disk"): at start (the data files' check) and during a turn (a checkpoint that
// cannot be written).

// SQLite's own word for it (SQLITE_FULL, the primary result code of the driver's error).
bool sqliteReportsFullDisk(const QSqlError &error);

// Less room than SQLite needs for its journal (WAL and shared memory) on the disk holding
// `path` (a file or a directory): an I/O error there is a full disk.
bool diskIsFull(const QString &path);

} // namespace AgentConsole
