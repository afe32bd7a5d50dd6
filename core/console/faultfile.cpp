#include "faultfile.h"

#include "../async/fileworkpool.h"

#include <QtConcurrent/QtConcurrentRun>

namespace AgentConsole {

QFuture<FileRead<FaultPlan>> readFaultFile(const QString &path, const KnownTools &tools)
{
    return QtConcurrent::run(fileWorkPool(), [path, tools] {
        FileRead<FaultPlan> read;
        read.value = FaultPlan::fromFile(path, &read.error, tools);
        return read;
    });
}

} // namespace AgentConsole
