#pragma once

// Not part of the API: the console's own thread pools (fileworkpool.h, checkworkpool.h).

#include <QCoreApplication>
#include <QGlobalStatic>
#include <QThread>
#include <QThreadPool>

#include <algorithm>

namespace AgentConsole::Internal {

class WorkPool final : public QThreadPool
{
public:
    // `atExit` waits for the pool at the application's end (waitAtExit); registered here so
    // that the pool registers it once, when first used.
    WorkPool(const QString &name, void (*atExit)())
    {
        setObjectName(name);
        setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        qAddPostRoutine(atExit);
    }

    // At the application's end, as Qt does for its own pool: the work still running is
    // waited for and the pool's threads end, with whatever they keep per thread (database
    // connections).
    template <typename GlobalStatic>
    static void waitAtExit(GlobalStatic &pool)
    {
        if (pool.exists())
            pool->waitForDone();
    }
};

} // namespace AgentConsole::Internal
