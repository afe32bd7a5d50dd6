#pragma once

#include <memory>

class QSocketNotifier;

namespace AgentConsole {

// SIGTERM and SIGINT end the application's event loop (QCoreApplication::quit) instead of the
// process, so that what follows exec() runs: the window's MCP servers get their goodbye, a
// temporary data directory is removed. A desktop session's logout, `kill` and Ctrl+C all
// send one of them. The handler only writes a byte to a pipe (async-signal-safe); the
// notifier it returns turns that into the quit on the GUI thread. Keep it alive while the
// loop runs; null if the pipe could not be made (the signals then end the process as before).
std::unique_ptr<QSocketNotifier> quitOnTerminationSignals();

} // namespace AgentConsole
