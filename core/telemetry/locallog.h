#pragma once

#include <QHash>
#include <QString>
#include <QStringList>

namespace AgentConsole {

// Routes qDebug/qWarning/... of the whole process into a rotating file in the data directory,
// besides stderr. Call once from main(); returns the log file's path. Past 4 MiB, at the start
// or while the console runs, the file becomes agent-console.log.1 (replacing the one before)
// and a new one begins. When the log cannot be written, *problem (if given) gets one line
// naming the path, and messages go to stderr only. A message is only queued where it is
// logged: one thread of the log's own writes the lines, in order and within 20 ms, so the GUI
// thread never waits for the disk (unless 4 MiB of lines are waiting); what is queued is
// written at exit and before a fatal message ends the process (a killed one loses those
// 20 ms). Called again, it moves the log to another data directory.
QString installLocalLog(const QString &dataDirectory, bool alsoToStderr,
                        QString *problem = nullptr);

// The local log's lines that name each of `needles` (incident ids), oldest first: from the log
// of the data directory and the one rotated before it, read once, at most their last 4 MiB
// each. At most `maxLines` lines per needle, each cut to 2,000 characters; a needle no line
// names has no entry. For an export, which redacts them like everything else it writes. Waits
// (a few seconds at most) for the lines logged before the call to reach the file: call it off
// the GUI thread.
QHash<QString, QStringList> localLogLinesNaming(const QString &dataDirectory,
                                                const QStringList &needles, int maxLines = 40);

} // namespace AgentConsole
