#pragma once

#include <chrono>
#include <memory>

namespace AgentConsole {

// A flag shared between the executor (which raises it when an attempt times out, the caller
// cancels or the call's deadline passes) and a tool body on a pool thread (which polls it or
// waits on it). Copies share one state; raising it is idempotent and thread-safe.
class CancellationToken final
{
public:
    CancellationToken();

    void cancel() const;
    bool isCancelled() const;

    // Blocks the calling pool thread for at most `timeout`; returns true as soon as the token
    // is cancelled. This is how a tool body waits on a slow downstream without ignoring
    // cancellation. Never call it on the GUI thread.
    bool waitForCancellation(std::chrono::milliseconds timeout) const;
    // Blocks until cancelled: a hung downstream that still honours cancellation.
    void waitUntilCancelled() const;

private:
    struct State;
    std::shared_ptr<State> d;
};

} // namespace AgentConsole
