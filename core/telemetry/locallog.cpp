#include "locallog.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutex>

#include <algorithm>
#include <cstdio>

namespace AgentConsole {
namespace {

constexpr qint64 kMaxLogBytes = 4 * 1024 * 1024;

struct LogSink
{
    QMutex mutex;
    QFile file;
    bool toStderr = true;
};

LogSink &sink()
{
    static LogSink instance;
    return instance;
}

const char *levelName(QtMsgType type)
{
    switch (type) {
    case QtDebugMsg: return "debug";
    case QtInfoMsg: return "info";
    case QtWarningMsg: return "warning";
    case QtCriticalMsg: return "critical";
    case QtFatalMsg: return "fatal";
    }
    return "?";
}

void writeMessage(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    const QByteArray line
        = QStringLiteral("%1 %2 %3: %4\n")
              .arg(QDateTime::currentDateTime().toString(Qt::ISODateWithMs),
                  QLatin1String(levelName(type)),
                  QLatin1String(context.category ? context.category : "default"), message)
              .toUtf8();
    LogSink &s = sink();
    QMutexLocker lock(&s.mutex);
    if (s.file.isOpen()) {
        s.file.write(line);
        s.file.flush();
    }
    if (s.toStderr)
        std::fputs(line.constData(), stderr);
}

} // namespace

QString installLocalLog(const QString &dataDirectory, bool alsoToStderr, QString *problem)
{
    const QString directory = QDir(dataDirectory).filePath(QStringLiteral("logs"));
    const QString path = QDir(directory).filePath(QStringLiteral("agent-console.log"));
    const auto report = [&](const QString &what) {
        if (problem)
            *problem = what;
    };
    if (!QDir().mkpath(directory) || !QFileInfo(directory).isDir()) {
        report(QStringLiteral("cannot create the log directory %1; make it a writable "
                              "directory or choose another --data-dir")
                   .arg(QDir::toNativeSeparators(directory)));
    } else if (QFileInfo(path).size() > kMaxLogBytes) {
        QFile::remove(path + QStringLiteral(".1"));
        QFile::rename(path, path + QStringLiteral(".1"));
    }
    LogSink &s = sink();
    bool opened = false;
    {
        QMutexLocker lock(&s.mutex);
        // Without a file every message goes to stderr at least.
        s.file.setFileName(path);
        opened = s.file.open(QIODevice::Append | QIODevice::Text);
        s.toStderr = alsoToStderr || !opened;
    }
    if (!opened && (!problem || problem->isEmpty()))
        report(QStringLiteral("cannot write the local log %1 (%2); make it writable or choose "
                              "another --data-dir")
                   .arg(QDir::toNativeSeparators(path), s.file.errorString()));
    qInstallMessageHandler(writeMessage);
    return path;
}

QHash<QString, QStringList> localLogLinesNaming(const QString &dataDirectory,
                                                const QStringList &needles, int maxLines)
{
    constexpr qsizetype kMaxLineChars = 2000;
    QHash<QString, QStringList> found;
    QList<std::pair<QByteArray, QString>> wanted;
    for (const QString &needle : needles) {
        if (!needle.isEmpty())
            wanted.append({needle.toUtf8(), needle});
    }
    if (wanted.isEmpty() || maxLines <= 0)
        return found;
    const QString path
        = QDir(dataDirectory).filePath(QStringLiteral("logs/agent-console.log"));
    // The rotated log holds the older lines.
    for (const QString &name : {path + QStringLiteral(".1"), path}) {
        QFile file(name);
        if (!file.open(QIODevice::ReadOnly))
            continue;
        const qint64 from = std::max<qint64>(0, file.size() - kMaxLogBytes);
        if (from > 0 && !file.seek(from))
            continue;
        QByteArray tail = file.read(kMaxLogBytes);
        if (from > 0) // a partly read first line is not a line
            tail.remove(0, tail.indexOf('\n') + 1);
        for (const QByteArray &line : tail.split('\n')) {
            for (const auto &[bytes, needle] : std::as_const(wanted)) {
                if (!line.contains(bytes))
                    continue;
                QStringList &lines = found[needle];
                if (lines.size() < maxLines)
                    lines.append(QString::fromUtf8(line).left(kMaxLineChars));
            }
        }
    }
    return found;
}

} // namespace AgentConsole
