#pragma once

class QAbstractButton;

namespace AgentConsole {

// Enter and Return press `button` while it has the focus, as Space does. A button that is not
// a dialog's default ignores them, and the key then reaches its parent (a card that opens or
// closes on Enter) instead of pressing what the staff member is looking at.
void pressOnEnter(QAbstractButton *button);

} // namespace AgentConsole
