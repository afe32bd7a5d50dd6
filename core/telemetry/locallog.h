#pragma once

#include <QString>

namespace AgentConsole {

// Routes qDebug/qWarning/... of the whole process into a rotating file in the data directory,
// besides stderr. Call once from main(); returns the log file's path.
QString installLocalLog(const QString &dataDirectory, bool alsoToStderr);

} // namespace AgentConsole
