#pragma once

#include <QString>
#include <QStringList>

namespace AgentConsole {

// Routes qDebug/qWarning/... of the whole process into a rotating file in the data directory,
// besides stderr. Call once from main(); returns the log file's path. When the log cannot be
// written, *problem (if given) gets one line naming the path, and messages go to stderr only.
QString installLocalLog(const QString &dataDirectory, bool alsoToStderr,
                        QString *problem = nullptr);

// The local log's lines that name `needle` (an incident id), oldest first: from the log of the
// data directory and the one rotated before it, reading at most their last 4 MiB each. At most
// `maxLines` lines, each cut to 2,000 characters. Empty when there is no log to read. For an
// export, which redacts them like everything else it writes.
QStringList localLogLinesNaming(const QString &dataDirectory, const QString &needle,
                                int maxLines = 40);

} // namespace AgentConsole
