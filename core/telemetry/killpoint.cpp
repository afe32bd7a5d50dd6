#include "killpoint.h"

#include <QAtomicInteger>
#include <QByteArray>
#include <QMutex>
#include <QThread>

#include <cstdio>
#include <cstdlib>

namespace AgentConsole {
namespace {

struct KillTarget
{
    QByteArray name;
    int occurrence = 1;
    int reached = 0;
};

// 0: not read yet, 1: inert, 2: armed.
QAtomicInteger<int> g_state;
QMutex g_mutex;
KillTarget g_target;

bool armed()
{
    int state = g_state.loadRelaxed();
    if (state != 0)
        return state == 2;
    const QMutexLocker locker(&g_mutex);
    state = g_state.loadAcquire();
    if (state != 0)
        return state == 2;
    const QByteArray spec = qgetenv("AGENT_CONSOLE_KILL_AT");
    if (!spec.isEmpty()) {
        const qsizetype hash = spec.indexOf('#');
        g_target.name = hash < 0 ? spec : spec.left(hash);
        g_target.occurrence = hash < 0 ? 1 : std::max(1, spec.mid(hash + 1).toInt());
    }
    g_state.storeRelease(spec.isEmpty() ? 1 : 2);
    return !spec.isEmpty();
}

} // namespace

void killPoint(const char *name)
{
    if (!armed())
        return;
    {
        const QMutexLocker locker(&g_mutex);
        if (g_target.name != name || ++g_target.reached != g_target.occurrence)
            return;
    }
    std::fprintf(stderr, "agent-console: kill point %s\n", name);
    std::fflush(stderr);
    // Wait for the test's SIGKILL here; the rest of the process may go on meanwhile, which is
    // what a real crash at this instant would have cut short anyway.
    for (int second = 0; second < 60; ++second)
        QThread::sleep(1);
    std::abort();
}

} // namespace AgentConsole
