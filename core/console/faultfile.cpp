#include "faultfile.h"

#include <QtConcurrent/QtConcurrentRun>

namespace AgentConsole {

QFuture<FileRead<FaultPlan>> readFaultFile(const QString &path, const KnownTools &tools)
{
    return QtConcurrent::run([path, tools] {
        FileRead<FaultPlan> read;
        read.value = FaultPlan::fromFile(path, &read.error, tools);
        return read;
    });
}

} // namespace AgentConsole
