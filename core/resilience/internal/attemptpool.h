#pragma once

// Not part of the API: where a ToolExecutor's attempt bodies run. A QThreadPool of its own, a
// bulkhead per tool (a limited number of bodies in flight, running or abandoned, with a queue
// behind it), and a replacement thread for every body abandoned while still running (up to a
// maximum), so that a body that ignores its cancellation token can only ever hold its own
// tool's share of threads. A body's result is posted back to the executor's thread.
// An asynchronous tool's attempt (ToolOperation::startAttempt) takes a bulkhead place but no
// thread: it is started on the executor's thread and cancelled there.

#include "executorcall.h"

#include <QHash>
#include <QString>

#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>

class QObject;
class QThreadPool;

namespace AgentConsole::Internal {

struct AttemptDelivery;

class AttemptPool final
{
public:
    struct Limits
    {
        int workerThreads = 4;
        int bulkheadPerTool = 2;
        int maxReplacementThreads = 32;
    };
    // Runs on `receiver`'s thread with each body's result, unless the receiver is gone or
    // stopDelivering() was called first.
    using Deliver = std::function<void(const AttemptPtr &attempt, AttemptResult result)>;

    AttemptPool(QObject *receiver, const Limits &limits, Deliver deliver);
    ~AttemptPool();

    void setBulkheadLimit(const QString &toolName, int limit);
    // Runs the attempt's body on a pool thread now, or once its tool's bulkhead has room.
    void submit(const AttemptPtr &attempt);
    // A body returned (on the receiver's thread, before its result is looked at): its place
    // in the bulkhead is free for the next attempt waiting.
    void bodyReturned(const AttemptPtr &attempt, const AttemptResult &result);
    // The executor stopped waiting for the attempt (detached from its call, token raised): a
    // queued one leaves its queue; a running body is abandoned, and its thread replaced.
    void withdraw(const AttemptPtr &attempt);

    int abandonedBodies() const { return m_abandoned; }
    int threadLimit() const;

    // No result is posted after this returns (the executor is going).
    void stopDelivering();
    // Waits up to `ms` for the bodies to return; a pool whose bodies ignore their cancellation
    // is left to the process rather than blocking the thread that destroys the executor.
    bool waitForBodies(int ms);

private:
    struct Bulkhead
    {
        int limit = 2;
        int inFlight = 0; // bodies holding a pool thread or queued in the pool, abandoned included
        std::deque<AttemptPtr> waiting;
    };

    Bulkhead &bulkheadFor(const QString &toolName);
    void dispatch(Bulkhead &bulkhead, const AttemptPtr &attempt);
    // An attempt's end, from any thread, to the receiver's (unless it is gone).
    void post(const std::shared_ptr<AttemptDelivery> &delivery, const AttemptPtr &attempt,
              AttemptResult result);
    void pump(Bulkhead &bulkhead);
    void resizePool();

    Limits m_limits;
    Deliver m_deliver;
    std::shared_ptr<AttemptDelivery> m_delivery;
    std::unique_ptr<QThreadPool> m_pool;
    std::unordered_map<QString, Bulkhead> m_bulkheads;
    QHash<QString, int> m_bulkheadLimits;
    int m_replacements = 0;
    int m_abandoned = 0;
};

} // namespace AgentConsole::Internal
