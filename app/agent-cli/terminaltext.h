#pragma once

#include <QString>
#include <QStringView>

namespace AgentConsole {

// Text from outside (a model's answer, its tool arguments) made safe to print on a terminal:
// escape and control sequences (CSI, OSC, DCS and the rest, in their 7- and 8-bit forms),
// other control characters but newline and tab, and the bidirectional overrides that make
// text read differently from what it is, are removed. A model must not be able to clear the
// staff member's screen, retitle the window, or write a hyperlink that hides its target.
QString terminalSafe(QStringView text);

} // namespace AgentConsole
