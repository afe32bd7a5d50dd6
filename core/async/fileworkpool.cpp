#include "fileworkpool.h"

#include <QThread>
#include <QThreadPool>

#include <algorithm>

namespace AgentConsole {

namespace {

class FileWorkPool final : public QThreadPool
{
public:
    FileWorkPool()
    {
        setObjectName(QStringLiteral("file work"));
        // Files are few and small; two threads keep a slow one from holding up the next.
        setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
    }
};

Q_GLOBAL_STATIC(FileWorkPool, pool)

} // namespace

QThreadPool *fileWorkPool()
{
    return pool();
}

} // namespace AgentConsole
