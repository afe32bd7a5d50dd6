#pragma once

#include <QFuture>
#include <QObject>
#include <QPromise>
#include <QString>
#include <QThread>

#include <memory>
#include <type_traits>

namespace AgentConsole::Internal {

// One thread that runs all the SQL of one store, in submission order (as Kaidan's database
// component does): Qt Sql connections must never cross threads, and one thread per store
// keeps that true by construction. run() may be called from any thread.
class DatabaseWorker final
{
public:
    explicit DatabaseWorker(const QString &threadName);
    // Runs every task already submitted, then stops the thread.
    ~DatabaseWorker();
    DatabaseWorker(const DatabaseWorker &) = delete;
    DatabaseWorker &operator=(const DatabaseWorker &) = delete;

    // Queues `task` (a copyable callable returning a value) to the database thread; the
    // future finishes there with its result.
    template<typename Task>
    auto run(Task task) -> QFuture<std::invoke_result_t<Task>>
    {
        using Result = std::invoke_result_t<Task>;
        // Shared because the queued functor must be copyable; the promise is only touched on
        // the database thread after start().
        auto promise = std::make_shared<QPromise<Result>>();
        QFuture<Result> future = promise->future();
        promise->start();
        QMetaObject::invokeMethod(
            m_context.get(),
            [promise, task = std::move(task)] {
                promise->addResult(task());
                promise->finish();
            },
            Qt::QueuedConnection);
        return future;
    }

private:
    std::unique_ptr<QThread> m_thread;
    // Lives on m_thread: queued functors run in its thread. Destroyed after the thread ended.
    std::unique_ptr<QObject> m_context;
};

} // namespace AgentConsole::Internal
