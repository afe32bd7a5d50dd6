#pragma once

class QThreadPool;

namespace AgentConsole {

// Where what came from outside is read and checked off the GUI thread when its cost grows
// with its size: a model's tool arguments parsed and validated against the tool's schema
// (DESIGN.md, "Threading rules"). A pool of its own: neither Qt's global one (its painting
// waits on it) nor the file pool (a slow disk must not hold up a turn's tool calls). Its
// threads end with the application, the work still running waited for.
QThreadPool *checkWorkPool();

} // namespace AgentConsole
