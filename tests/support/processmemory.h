#pragma once

// Resident memory of a process as Linux reports it in /proc/<pid>/status, for the suites that
// assert memory stays bounded. Header-only, so that suites linking only the model layer can
// use it too.

#include "sanitizerbuild.h"

#include <QByteArray>
#include <QFile>
#include <QString>

namespace AgentConsole::Testing {

// A memory bound of the normal build (in KiB) as it holds for this build. Under ASan a
// process's resident set is not its own: redzones and size classes make a small block take up
// to four times its size (a 16-byte string header takes 48 to 64 bytes), freed blocks wait in
// a quarantine of up to 256 MiB before their memory is reused, and shadow memory adds an eighth
// of it all. So there a bound is four times as large plus the quarantine: still well below the
// unbounded growth the bounds guard against (one 400 MB line took 1.4 GB before them). It holds
// for the tests' children (agent-cli) too, as they share the build. Measured under ASan
// (clang 14): agent-cli's peak with 3,000 or 60,000 tool calls 540 to over 656 MiB.
inline qint64 memoryBoundKiB(qint64 normalBuildKiB)
{
    constexpr qint64 quarantineKiB = 256 * 1024;
    return addressSanitized ? 4 * normalBuildKiB + quarantineKiB : normalBuildKiB;
}

// A "<field>: <n> kB" line of /proc/<pid>/status (this process when pid is 0), in KiB; -1
// when unknown.
inline qint64 processStatusKiB(const char *field, qint64 pid = 0)
{
    QFile status(pid == 0 ? QStringLiteral("/proc/self/status")
                          : QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith(field))
            return line.mid(qstrlen(field)).trimmed().split(' ').value(0).toLongLong();
    }
    return -1;
}

// The peak resident set so far (VmHWM), in KiB.
inline qint64 peakResidentKiB(qint64 pid = 0)
{
    return processStatusKiB("VmHWM:", pid);
}

// The resident set now (VmRSS), in KiB.
inline qint64 residentKiB(qint64 pid = 0)
{
    return processStatusKiB("VmRSS:", pid);
}

// Resets this process's peak to its current size where the kernel allows (writing 5 to
// clear_refs), so that a measurement starts from now.
inline void resetPeakResident()
{
    QFile clearRefs(QStringLiteral("/proc/self/clear_refs"));
    if (clearRefs.open(QIODevice::WriteOnly))
        clearRefs.write("5");
}

} // namespace AgentConsole::Testing
