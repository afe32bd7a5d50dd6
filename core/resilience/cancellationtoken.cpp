#include "cancellationtoken.h"

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace AgentConsole {

struct CancellationToken::State
{
    std::atomic<bool> cancelled{false};
    std::mutex mutex;
    std::condition_variable changed;
};

CancellationToken::CancellationToken()
    : d(std::make_shared<State>())
{
}

void CancellationToken::cancel() const
{
    {
        std::lock_guard lock(d->mutex);
        if (d->cancelled.exchange(true))
            return;
    }
    d->changed.notify_all();
}

bool CancellationToken::isCancelled() const
{
    return d->cancelled.load(std::memory_order_acquire);
}

bool CancellationToken::waitForCancellation(std::chrono::milliseconds timeout) const
{
    std::unique_lock lock(d->mutex);
    return d->changed.wait_for(lock, timeout, [this] { return d->cancelled.load(); });
}

void CancellationToken::waitUntilCancelled() const
{
    std::unique_lock lock(d->mutex);
    d->changed.wait(lock, [this] { return d->cancelled.load(); });
}

} // namespace AgentConsole
