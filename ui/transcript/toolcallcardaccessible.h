#pragma once

class QWidget;

namespace AgentConsole::Internal {

// Tool cards tell assistive technology what they are: a button (role Button) that expands to
// show the attempts, with an expanded or collapsed state and press/toggle actions. The card's
// accessible name (tool and outcome) is the card's own.
// Installs the accessibility factory for ToolCallCard once; later calls do nothing.
void installToolCallCardAccessibility();
// Tells assistive technology that the card was expanded or collapsed.
void notifyToolCallCardExpanded(QWidget *card);

} // namespace AgentConsole::Internal
