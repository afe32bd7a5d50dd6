#include "attemptpool.h"

#include "../../telemetry/logging.h"

#include <QMutex>
#include <QThreadPool>

#include <exception>
#include <utility>

namespace AgentConsole::Internal {

// Lets pool threads post a finished attempt back without racing the executor's destruction.
struct AttemptDelivery
{
    QMutex mutex;
    QObject *receiver = nullptr;
};

AttemptPool::AttemptPool(QObject *receiver, const Limits &limits, Deliver deliver)
    : m_limits(limits)
    , m_deliver(std::move(deliver))
    , m_delivery(std::make_shared<AttemptDelivery>())
    , m_pool(std::make_unique<QThreadPool>())
{
    m_delivery->receiver = receiver;
    m_pool->setObjectName(QStringLiteral("ToolPool"));
    m_pool->setMaxThreadCount(limits.workerThreads);
}

AttemptPool::~AttemptPool() = default;

void AttemptPool::setBulkheadLimit(const QString &toolName, int limit)
{
    m_bulkheadLimits.insert(toolName, std::max(1, limit));
    auto it = m_bulkheads.find(toolName);
    if (it != m_bulkheads.end()) {
        it->second.limit = std::max(1, limit);
        pump(it->second);
    }
}

AttemptPool::Bulkhead &AttemptPool::bulkheadFor(const QString &toolName)
{
    auto it = m_bulkheads.find(toolName);
    if (it == m_bulkheads.end()) {
        Bulkhead bulkhead;
        bulkhead.limit = m_bulkheadLimits.value(toolName, std::max(1, m_limits.bulkheadPerTool));
        it = m_bulkheads.emplace(toolName, std::move(bulkhead)).first;
    }
    return it->second;
}

void AttemptPool::submit(const AttemptPtr &attempt)
{
    Bulkhead &bulkhead = bulkheadFor(attempt->toolName);
    if (bulkhead.inFlight < bulkhead.limit && bulkhead.waiting.empty())
        dispatch(bulkhead, attempt);
    else
        bulkhead.waiting.push_back(attempt);
}

void AttemptPool::post(const std::shared_ptr<AttemptDelivery> &delivery, const AttemptPtr &attempt,
                       AttemptResult result)
{
    QMutexLocker lock(&delivery->mutex);
    // The receiver owns this pool: a post that reaches it finds the pool still there, and
    // one still queued when it goes is dropped with it.
    if (QObject *receiver = delivery->receiver) {
        QMetaObject::invokeMethod(
            receiver,
            [this, attempt, result = std::move(result)]() mutable {
                m_deliver(attempt, std::move(result));
            },
            Qt::QueuedConnection);
    }
}

void AttemptPool::dispatch(Bulkhead &bulkhead, const AttemptPtr &attempt)
{
    ++bulkhead.inFlight;
    attempt->dispatched = true;
    ExecutorCall *call = attempt->call;
    std::shared_ptr<const ToolOperation> tool = call->tool;
    const QJsonObject arguments = call->arguments;
    const TrustedContext context = call->context;
    std::shared_ptr<AttemptDelivery> delivery = m_delivery;
    AttemptContext attemptContext{attempt->index,       attempt->token,
                                  call->idempotencyKey, call->mayHaveRun || attempt->index > 1,
                                  call->traceId,        attempt->deadline};

    if (tool->isAsynchronous()) {
        // Started here and now, on this thread; its end is posted back like a body's.
        attempt->asynchronous = true;
        attempt->state.store(Attempt::Running);
        auto done = [this, attempt, delivery](AttemptResult result) {
            post(delivery, attempt, std::move(result));
        };
        try {
            attempt->cancel = tool->startAttempt(arguments, context, attemptContext, done);
        } catch (const std::exception &error) {
            AttemptResult failed;
            failed.failure = FailureKind::Unexpected;
            failed.logDetail = QString::fromLocal8Bit(error.what());
            done(std::move(failed));
        }
        return;
    }

    m_pool->start([this, attempt, tool, arguments, context, delivery,
                   attemptContext = std::move(attemptContext)] {
        AttemptResult result;
        int expected = Attempt::Queued;
        if (!attempt->state.compare_exchange_strong(expected, Attempt::Running)) {
            result.failure = FailureKind::Cancelled;
        } else {
            try {
                result = tool->attempt(arguments, context, attemptContext);
            } catch (const std::exception &error) {
                result.failure = FailureKind::Unexpected;
                result.logDetail = QString::fromLocal8Bit(error.what());
            } catch (...) {
                result.failure = FailureKind::Unexpected;
                result.logDetail = QStringLiteral("non-standard exception");
            }
        }
        post(delivery, attempt, std::move(result));
    });
}

void AttemptPool::pump(Bulkhead &bulkhead)
{
    while (bulkhead.inFlight < bulkhead.limit && !bulkhead.waiting.empty()) {
        AttemptPtr next = std::move(bulkhead.waiting.front());
        bulkhead.waiting.pop_front();
        if (next->call && !next->token.isCancelled())
            dispatch(bulkhead, next);
    }
}

void AttemptPool::bodyReturned(const AttemptPtr &attempt, const AttemptResult &result)
{
    Bulkhead &bulkhead = bulkheadFor(attempt->toolName);
    --bulkhead.inFlight;
    if (attempt->replaced) {
        --m_replacements;
        resizePool();
    }
    if (!attempt->call) {
        --m_abandoned;
        if (result.failure == FailureKind::Unexpected)
            qCWarning(lcResilience).noquote()
                << "abandoned attempt of" << attempt->toolName
                << "ended with an unexpected error:" << result.logDetail;
    }
    pump(bulkhead);
}

void AttemptPool::withdraw(const AttemptPtr &attempt)
{
    if (!attempt->dispatched) {
        Bulkhead &bulkhead = bulkheadFor(attempt->toolName);
        auto &queue = bulkhead.waiting;
        // Queued attempts time out in about the order they were queued, so the one to remove
        // is near the front, where erasing from a deque is cheap (erase-remove would move
        // the whole queue on every timeout).
        const auto it = std::find(queue.begin(), queue.end(), attempt);
        if (it != queue.end())
            queue.erase(it);
        return;
    }
    ++m_abandoned;
    if (attempt->asynchronous) {
        // It holds no thread: it is told to stop, and keeps its bulkhead place until it ends.
        if (const std::function<void()> cancel = std::exchange(attempt->cancel, {}))
            cancel();
        return;
    }
    // Only a body that is actually running holds a thread worth replacing; one still queued in
    // the pool is marked skipped here and returns at once when it gets a thread.
    int expected = Attempt::Queued;
    if (!attempt->state.compare_exchange_strong(expected, Attempt::Skipped)
        && m_replacements < m_limits.maxReplacementThreads) {
        attempt->replaced = true;
        ++m_replacements;
        resizePool();
    }
}

void AttemptPool::resizePool()
{
    m_pool->setMaxThreadCount(m_limits.workerThreads + m_replacements);
}

int AttemptPool::threadLimit() const
{
    return m_pool->maxThreadCount();
}

void AttemptPool::stopDelivering()
{
    QMutexLocker lock(&m_delivery->mutex);
    m_delivery->receiver = nullptr;
}

bool AttemptPool::waitForBodies(int ms)
{
    if (m_pool->waitForDone(ms))
        return true;
    qCWarning(lcResilience) << "tool bodies ignored cancellation at shutdown;"
                            << "leaving their pool to the process";
    static_cast<void>(m_pool.release());
    return false;
}

} // namespace AgentConsole::Internal
