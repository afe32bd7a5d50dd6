#include "fileworkpool.h"

#include "workpool.h"

namespace AgentConsole {

namespace {

void endWithTheApplication();

// Files are few and small; two threads keep a slow one from holding up the next.
Q_GLOBAL_STATIC_WITH_ARGS(Internal::WorkPool, pool,
                          (QStringLiteral("file work"), endWithTheApplication))

void endWithTheApplication()
{
    Internal::WorkPool::waitAtExit(pool);
}

} // namespace

QThreadPool *fileWorkPool()
{
    return pool();
}

} // namespace AgentConsole
