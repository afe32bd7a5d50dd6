#pragma once

class QThreadPool;

namespace AgentConsole {

// Where the console reads and writes its own files off the GUI thread (fault plans, scenarios,
// mcp.json, exports, the data directory at start): a pool of its own, never Qt's global one.
// Qt 6.4's raster engine splits a paint's larger fills and image copies (from 96 rows on)
// across QThreadPool::globalInstance() and the GUI thread waits for the pieces, so a file
// read waiting on a slow disk there would hold up the window's next paint for as long.
// Its threads end with the application (the work still running waited for, as Qt waits for
// its own pool); idle ones expire before, as any pool's do.
QThreadPool *fileWorkPool();

} // namespace AgentConsole
