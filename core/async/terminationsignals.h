#pragma once

#include <QList>

#include <functional>
#include <memory>

class QSocketNotifier;

namespace AgentConsole {

// The two signals that end a session from outside: a terminal's Ctrl+C and a `kill` or a
// desktop session's logout.
enum class TerminationSignal { Interrupt /* SIGINT */, Terminate /* SIGTERM */ };

// Takes `which` signals over from their default (ending the process): each one that arrives
// becomes a call of `handler` on the thread's event loop, once per signal. The handler only
// writes the signal's number to a pipe (async-signal-safe); the notifier returned reads it
// and calls `handler`. Keep it alive while the loop runs; null if the pipe could not be made
// (the signals then keep their default). One call per process: the pipe is the process's.
std::unique_ptr<QSocketNotifier> onTerminationSignals(
    const QList<TerminationSignal> &which, std::function<void(TerminationSignal)> handler);

// SIGTERM and SIGINT end the application's event loop (QCoreApplication::quit) instead of the
// process, so that what follows exec() runs: the window's MCP servers get their goodbye, a
// temporary data directory is removed. A desktop session's logout, `kill` and Ctrl+C all
// send one of them (the window, support-sim).
std::unique_ptr<QSocketNotifier> quitOnTerminationSignals();

} // namespace AgentConsole
