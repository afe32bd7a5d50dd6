// The console's own thread pools (fileworkpool.h, checkworkpool.h), made on first use.

#include "checkworkpool.h"
#include "fileworkpool.h"

#include <QCoreApplication>
#include <QGlobalStatic>
#include <QThread>
#include <QThreadPool>

#include <algorithm>
#include <mutex>

namespace AgentConsole {

namespace {

void endWithTheApplication();

class WorkPool final : public QThreadPool
{
public:
    explicit WorkPool(const QString &name)
    {
        setObjectName(name);
        // The work is small; two threads keep a slow piece from holding up the next.
        setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        static std::once_flag registered;
        std::call_once(registered, [] { qAddPostRoutine(endWithTheApplication); });
    }
};

Q_GLOBAL_STATIC_WITH_ARGS(WorkPool, filePool, (QStringLiteral("file work")))
Q_GLOBAL_STATIC_WITH_ARGS(WorkPool, checkPool, (QStringLiteral("check work")))

// At the application's end, as Qt does for its own pool: the work still running is waited for
// and the pools' threads end, with whatever they keep per thread (database connections).
void endWithTheApplication()
{
    if (filePool.exists())
        filePool->waitForDone();
    if (checkPool.exists())
        checkPool->waitForDone();
}

} // namespace

QThreadPool *fileWorkPool()
{
    return filePool();
}

QThreadPool *checkWorkPool()
{
    return checkPool();
}

} // namespace AgentConsole
