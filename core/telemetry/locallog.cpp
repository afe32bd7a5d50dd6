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
    qint64 written = 0; // the file's size, counted rather than asked of the disk at each line
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

// The log as it was becomes agent-console.log.1 (the one before it is dropped) and a new one
// starts: a console left running for weeks keeps at most two logs' worth on disk. Called with
// the sink's mutex held.
void rotate(LogSink &s)
{
    const QString path = s.file.fileName();
    s.file.close();
    QFile::remove(path + QStringLiteral(".1"));
    const bool renamed = QFile::rename(path, path + QStringLiteral(".1"));
    s.file.setFileName(path);
    if (!s.file.open(QIODevice::Append | QIODevice::Text))
        s.toStderr = true; // nothing is lost: stderr has it
    // A log that could not be renamed grows on and is tried again a log's worth later, not
    // at every line.
    s.written = renamed ? s.file.size() : 0;
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
        // Rotated before the line that would take it past the bound: a log holds at most
        // kMaxLogBytes, all of which localLogLinesNaming() reads.
        if (s.written > 0 && s.written + line.size() > kMaxLogBytes)
            rotate(s);
        s.file.write(line);
        s.file.flush();
        s.written += line.size();
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
        s.written = opened ? s.file.size() : 0;
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
