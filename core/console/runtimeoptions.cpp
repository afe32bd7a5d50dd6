#include "runtimeoptions.h"

#include <QStandardPaths>

namespace AgentConsole {

QString RuntimeOptions::defaultDataDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

} // namespace AgentConsole
