#include "databaseworker.h"

#include <QThread>

#include <chrono>
#include <thread>

namespace AgentConsole::Internal {

namespace {

// How long the thread keeps looking for the next task before it sleeps. Long enough for a
// caller woken by one answer to send the next request (a claim's answer, then the record);
// short enough that an idle store costs nothing measurable.
constexpr auto StayAwake = std::chrono::microseconds(250);

} // namespace

DatabaseWorker::DatabaseWorker(const QString &threadName)
    : m_thread(QThread::create([this] { serve(); }))
{
    m_thread->setObjectName(threadName);
    m_thread->start();
}

DatabaseWorker::~DatabaseWorker()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true; // served after every task submitted so far
    }
    m_wake.notify_one();
    m_thread->wait();
}

void DatabaseWorker::post(std::function<void()> job)
{
    bool asleep;
    {
        std::lock_guard lock(m_mutex);
        m_jobs.push_back(std::move(job));
        asleep = m_asleep;
    }
    if (asleep)
        m_wake.notify_one();
}

// Waits for a job with `lock` held; false once stopping and the queue is empty.
bool DatabaseWorker::awaitJob(std::unique_lock<std::mutex> &lock)
{
    if (m_jobs.empty() && !m_stopping) {
        // Stay awake for a moment: yielding, so that a caller on this core runs first.
        const auto until = std::chrono::steady_clock::now() + StayAwake;
        while (m_jobs.empty() && !m_stopping && std::chrono::steady_clock::now() < until) {
            lock.unlock();
            std::this_thread::yield();
            lock.lock();
        }
    }
    m_asleep = true;
    m_wake.wait(lock, [this] { return !m_jobs.empty() || m_stopping; });
    m_asleep = false;
    return !m_jobs.empty();
}

void DatabaseWorker::serve()
{
    std::unique_lock lock(m_mutex);
    while (awaitJob(lock)) {
        std::function<void()> job = std::move(m_jobs.front());
        m_jobs.pop_front();
        lock.unlock();
        job();
        job = nullptr; // its captures (a connection, a promise) go on this thread
        lock.lock();
    }
}

} // namespace AgentConsole::Internal
