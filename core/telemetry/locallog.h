#pragma once

#include <QString>

namespace AgentConsole {

// Routes qDebug/qWarning/... of the whole process into a rotating file in the data directory,
// besides stderr. Call once from main(); returns the log file's path. When the log cannot be
// written, *problem (if given) gets one line naming the path, and messages go to stderr only.
QString installLocalLog(const QString &dataDirectory, bool alsoToStderr,
                        QString *problem = nullptr);

} // namespace AgentConsole
