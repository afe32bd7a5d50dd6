#include "checkworkpool.h"

#include "workpool.h"

namespace AgentConsole {

namespace {

void endWithTheApplication();

Q_GLOBAL_STATIC_WITH_ARGS(Internal::WorkPool, pool,
                          (QStringLiteral("check work"), endWithTheApplication))

void endWithTheApplication()
{
    Internal::WorkPool::waitAtExit(pool);
}

} // namespace

QThreadPool *checkWorkPool()
{
    return pool();
}

} // namespace AgentConsole
