#include "databaseworker.h"

namespace AgentConsole::Internal {

DatabaseWorker::DatabaseWorker(const QString &threadName)
    : m_thread(std::make_unique<QThread>())
    , m_context(std::make_unique<QObject>())
{
    m_thread->setObjectName(threadName);
    m_context->moveToThread(m_thread.get());
    m_thread->start();
}

DatabaseWorker::~DatabaseWorker()
{
    // quit() is queued behind every task submitted so far, so they all run first; quitting
    // from outside could drop tasks still in the queue.
    QThread *thread = m_thread.get();
    QMetaObject::invokeMethod(m_context.get(), [thread] { thread->quit(); },
                              Qt::QueuedConnection);
    m_thread->wait();
}

} // namespace AgentConsole::Internal
