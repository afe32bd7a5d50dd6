#include "fileworkpool.h"

#include <QCoreApplication>
#include <QThread>
#include <QThreadPool>

#include <algorithm>

namespace AgentConsole {

namespace {

void endWithTheApplication();

class FileWorkPool final : public QThreadPool
{
public:
    FileWorkPool()
    {
        setObjectName(QStringLiteral("file work"));
        // Files are few and small; two threads keep a slow one from holding up the next.
        setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        qAddPostRoutine(endWithTheApplication);
    }
};

Q_GLOBAL_STATIC(FileWorkPool, pool)

// At the application's end, as Qt does for its own pool: the work still running is waited for
// and the pool's threads end, with whatever they keep per thread (database connections).
void endWithTheApplication()
{
    if (pool.exists())
        pool->waitForDone();
}

} // namespace

QThreadPool *fileWorkPool()
{
    return pool();
}

} // namespace AgentConsole
