#pragma once

// What every bench prints on its first line, so that a figure is never read without the machine
// and the load it was measured under (docs/PERFORMANCE.md: figures with date, machine, load).

#include <QByteArray>
#include <QDateTime>
#include <QFile>
#include <QString>
#include <QSysInfo>
#include <QThread>

namespace AgentConsole::Bench {

// /proc/loadavg's three averages (1, 5, 15 minutes), or "?" where there is none.
inline QString loadAverage()
{
    QFile file(QStringLiteral("/proc/loadavg"));
    if (!file.open(QIODevice::ReadOnly))
        return QStringLiteral("?");
    return QString::fromLatin1(file.readAll()).section(QLatin1Char(' '), 0, 2);
}

// The 1-minute load average alone, or -1.
inline double loadAverage1()
{
    bool ok = false;
    const double value = loadAverage().section(QLatin1Char(' '), 0, 0).toDouble(&ok);
    return ok ? value : -1;
}

// "2026-12-07 11:40, Qt 6.4.2, Debian GNU/Linux 12 (bookworm), 2 logical CPUs, load average
// 1.77 1.49 1.75"
inline QByteArray hostLine()
{
    return QStringLiteral("%1, Qt %2, %3, %4 logical CPUs, load average %5")
        .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")),
             QString::fromLatin1(qVersion()), QSysInfo::prettyProductName())
        .arg(QThread::idealThreadCount())
        .arg(loadAverage())
        .toUtf8();
}

} // namespace AgentConsole::Bench
