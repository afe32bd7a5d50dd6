#pragma once

namespace AgentConsole {

// Named places where the crash-injection test kills the process (docs/RELIABILITY.md).
// Inert unless the environment variable AGENT_CONSOLE_KILL_AT holds "name" or "name#n" (the
// n-th time that place is reached, counting from 1). Then, on reaching it, the process writes
// "agent-console: kill point <name>" as one line to standard error and stops the calling
// thread there, so that the test's SIGKILL lands exactly at that point. Should no kill come
// within a minute the process aborts: it must never carry on past a point it announced.
//
// Costs one relaxed atomic load when inert, so probes may stay in release builds.
void killPoint(const char *name);

// The names, in the order one turn reaches them. Writes add their own three.
namespace KillPoints {
inline constexpr const char *WriteClaimed = "write-claimed"; // ledger row PROCESSING
inline constexpr const char *WriteBeforeSend = "write-before-send"; // inside the backend call
inline constexpr const char *WriteCommitted = "write-committed"; // store committed, no answer
inline constexpr const char *WriteAnswered = "write-answered"; // answer in, ledger not
inline constexpr const char *WriteRecorded = "write-recorded"; // ledger row completed
} // namespace KillPoints

} // namespace AgentConsole
