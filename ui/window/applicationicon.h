#pragma once

class QIcon;

namespace AgentConsole {

// The console's icon: the desktop entry's SVG (resources/desktop), built into this library as
// a Qt resource so that the window shows it without an installed icon theme.
QIcon applicationIcon();

} // namespace AgentConsole
