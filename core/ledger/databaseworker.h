#pragma once

#include <QFuture>
#include <QPromise>
#include <QString>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <type_traits>

class QThread;

namespace AgentConsole::Internal {

// One thread that runs all the SQL of one store, in submission order (as Kaidan's database
// component does): Qt Sql connections must never cross threads, and one thread per store
// keeps that true by construction. run() may be called from any thread.
//
// Its own queue rather than a Qt event loop: a task is picked up without an event
// dispatcher's round, and after each task the thread keeps looking for the next one for a
// short while before it sleeps. Waking a sleeping thread on an idle virtual CPU costs more
// than a commit (docs/PERFORMANCE.md, "ledger_bench"); a ledger's tasks come in pairs and
// bursts (claim, then the answer's record), so the second one usually finds the thread still
// awake. An idle store's thread sleeps.
class DatabaseWorker final
{
public:
    explicit DatabaseWorker(const QString &threadName);
    // Runs every task already submitted, then stops the thread.
    ~DatabaseWorker();
    DatabaseWorker(const DatabaseWorker &) = delete;
    DatabaseWorker &operator=(const DatabaseWorker &) = delete;

    // Queues `task` (a callable returning a value) to the database thread; the future
    // finishes there with its result.
    template <typename Task> auto run(Task task) -> QFuture<std::invoke_result_t<Task>>
    {
        using Result = std::invoke_result_t<Task>;
        // Shared because std::function needs a copyable callable; the promise is only touched
        // on the database thread once posted. Running but never reported started: a started
        // future posts a "started" event to every watcher, one more trip through the caller's
        // loop per operation for a signal nobody reads. Running, result() and
        // waitForFinished() wait for it as before, and finishing clears it; isStarted() and
        // isValid() stay false, so takeResult() (which asserts isValid()) is not for these.
        auto promise = std::make_shared<QPromise<Result>>(
            QFutureInterface<Result>(QFutureInterfaceBase::Running));
        QFuture<Result> future = promise->future();
        post([promise, task = std::move(task)]() mutable {
            promise->addResult(task());
            promise->finish();
        });
        return future;
    }

private:
    void post(std::function<void()> job);
    void serve();
    bool awaitJob(std::unique_lock<std::mutex> &lock);

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::function<void()>> m_jobs; // guarded by m_mutex
    bool m_stopping = false; // guarded by m_mutex
    bool m_asleep = false; // guarded by m_mutex: only then is a notify needed
    std::unique_ptr<QThread> m_thread;
};

} // namespace AgentConsole::Internal
