#pragma once

// The refusals and start failures of the runtime and its services, as the window shows them,
// worded where they are made (docs/TRANSLATIONS.md). Every service keeps the translation
// context these words have always had, AgentConsole::AgentRuntime, so that a zh_CN entry is
// not orphaned by the class that now says it; agent-cli installs no translator and keeps the
// English source. Console-internal: front ends get the words, not this header.
#include <QCoreApplication>

namespace AgentConsole {

struct AgentRuntimeWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::AgentRuntime)
};

} // namespace AgentConsole
