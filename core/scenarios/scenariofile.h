#pragma once

#include "../async/await.h" // how its futures are taken, from ui/ too
#include "../async/fileread.h"
#include "scenario.h"

#include <QFuture>

namespace AgentConsole {

// Reads and checks a scenario file (Scenario::fromFile) on the console's file pool
// (fileWorkPool()): the file is one the staff member named, and the GUI thread reads no file.
QFuture<FileRead<Scenario>> readScenarioFile(const QString &path, const KnownTools &tools);

} // namespace AgentConsole
