#pragma once

#include <QtGlobal>

#include <algorithm>
#include <limits>

namespace AgentConsole::Internal {

// How far a form's field lets staff type past core's bound on its value: any number with as
// many digits as the bound. A value past the bound is then typed whole and refused beside its
// field with core's reason, instead of being cut to the bound without a word.
inline int typedMaximum(double bound)
{
    qint64 most = 9;
    while (most < bound && most <= std::numeric_limits<int>::max() / 10)
        most = most * 10 + 9;
    return int(std::min<qint64>(most, std::numeric_limits<int>::max()));
}

} // namespace AgentConsole::Internal
