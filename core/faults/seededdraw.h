#pragma once

#include <QByteArray>

#include <initializer_list>

namespace AgentConsole {

// A number uniform in [0, 1) that depends only on the seed and the parts (tool or route, call
// key, attempt or request number): fault plans draw their random failures this way rather
// than from a shared generator, so the same plan fails the same calls in every run, whatever
// order parallel calls ran in. Used by core's fault plans and by support-sim.
double seededUnitDraw(quint64 seed, std::initializer_list<QByteArray> parts);

} // namespace AgentConsole
