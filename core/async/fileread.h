#pragma once

#include <QString>

#include <optional>

namespace AgentConsole {

// What a file read off the GUI thread gave: its value, or the one-line reason (naming the
// file) why there is none. The shape of every file a staff member names and the console
// reads on a pool thread (fault plans, scenarios, exports).
template <typename T> struct FileRead
{
    std::optional<T> value;
    QString error;
};

} // namespace AgentConsole
