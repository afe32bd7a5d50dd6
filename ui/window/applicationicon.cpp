#include "applicationicon.h"

#include <QIcon>

namespace AgentConsole {

QIcon applicationIcon()
{
    // An installed theme's copy wins (the package puts the same file in hicolor); the built-in
    // one serves a console started from the build tree.
    return QIcon::fromTheme(QStringLiteral("org.agentconsole.AgentConsole"),
                            QIcon(QStringLiteral(":/icons/org.agentconsole.AgentConsole.svg")));
}

} // namespace AgentConsole
