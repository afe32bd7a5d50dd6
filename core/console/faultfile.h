#pragma once

#include "../async/await.h" // how its futures are taken, from ui/ too
#include "../async/fileread.h"
#include "../faults/faultplan.h"

#include <QFuture>

namespace AgentConsole {

// Reads and checks a fault file (FaultPlan::fromFile) on the console's file pool
// (fileWorkPool()): the file is one the staff member named, and the GUI thread reads no file.
QFuture<FileRead<FaultPlan>> readFaultFile(const QString &path, const KnownTools &tools);

} // namespace AgentConsole
