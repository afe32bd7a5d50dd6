#pragma once

// Starts a runtime and waits for its answer without blocking the event loop (the start runs
// on worker threads and reports to it). Header-only, for the suites that run a real runtime.
#include "core/console/agentruntime.h"

#include <QSignalSpy>
#include <QTest>

namespace AgentConsole::Testing {

// True once `runtime` is ready; false, with its reason as a warning, when it failed or said
// nothing within `timeoutMs`.
inline bool startAndWait(AgentRuntime &runtime, int timeoutMs = 20000)
{
    QSignalSpy ready(&runtime, &AgentRuntime::ready);
    QSignalSpy failed(&runtime, &AgentRuntime::failed);
    runtime.start();
    if (!QTest::qWaitFor([&] { return !ready.isEmpty() || !failed.isEmpty(); }, timeoutMs)
        || ready.isEmpty()) {
        qWarning("runtime not ready: %s",
                 failed.isEmpty() ? "no signal" : qPrintable(failed.first().first().toString()));
        return false;
    }
    return true;
}

} // namespace AgentConsole::Testing
