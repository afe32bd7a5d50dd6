#include "scenariofile.h"

#include "../async/fileworkpool.h"

#include <QtConcurrent/QtConcurrentRun>

namespace AgentConsole {

QFuture<FileRead<Scenario>> readScenarioFile(const QString &path, const KnownTools &tools)
{
    return QtConcurrent::run(fileWorkPool(), [path, tools] {
        FileRead<Scenario> read;
        read.value = Scenario::fromFile(path, &read.error, tools);
        return read;
    });
}

} // namespace AgentConsole
