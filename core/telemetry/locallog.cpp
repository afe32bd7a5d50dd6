#include "locallog.h"

#include "logsecrets.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QRecursiveMutex>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <thread>
#include <vector>

namespace AgentConsole {
namespace {

constexpr qint64 kMaxLogBytes = 4 * 1024 * 1024;
// Lines waiting for the writer. Past this a caller waits for the disk, as every caller did
// before the writer had its own thread: nothing is dropped, and only a disk that stalls under
// a flood of lines can hold the window.
constexpr qint64 kMaxQueuedBytes = 4 * 1024 * 1024;
// How long a flush (an export reading the log, a fatal message) waits for the writer.
constexpr auto kFlushWait = std::chrono::seconds(5);
// Lines logged within this time of the first one are written as one batch (sooner when a
// flush is waited for or 64 KiB are waiting): a fault storm logs a line per attempt, and a
// writer woken for each would take a core from the GUI thread as often.
constexpr auto kBatchWindow = std::chrono::milliseconds(20);
constexpr qint64 kBatchBytes = 64 * 1024;

// The file and what is known about it. Touched by the writer thread, and by a caller only
// while no writer runs (before the first install, after exit began). Recursive because a
// warning of QFile's own while writing comes back through the message handler.
struct LogFile
{
    QRecursiveMutex mutex;
    QFile file;
    qint64 written = 0; // the file's size, counted rather than asked of the disk at each line
    bool toStderr = true;
};

// A message as logged, made into its line by whoever writes it: the caller only reads the
// clock and keeps the text (shared, not copied), and the writer thread formats the time and
// the line and converts it to UTF-8, which took the GUI thread a few microseconds a line
// during a fault storm.
struct LogRecord
{
    qint64 atMs = 0; // when it was logged, since the epoch
    QtMsgType type = QtDebugMsg;
    QByteArray category;
    QString message;

    // What it holds in memory while it waits, roughly its line's size or more: for the bound.
    qint64 queuedBytes() const { return 64 + category.size() + message.size() * 2; }
};

// The lines on their way to the file: the message handler only queues them (the GUI thread
// logs every attempt of a fault storm, and a write can wait on the disk), one thread writes
// them in order, a batch at a time.
struct LogQueue
{
    std::mutex mutex;
    std::condition_variable wake; // a line is queued, or stop
    std::condition_variable progress; // a batch is written
    std::vector<LogRecord> lines;
    qint64 bytes = 0;
    quint64 queued = 0; // lines queued since start
    quint64 written = 0; // of those, lines written
    bool running = false; // a writer takes lines; when false, their callers write them
    bool stopping = false;
    bool flushWanted = false; // someone waits for the lines queued so far
    std::thread::id writerId;
    std::thread writer;
};

struct LogSink
{
    LogFile file;
    LogQueue queue;
};

LogSink &sink()
{
    static LogSink instance;
    return instance;
}

const char *levelName(QtMsgType type)
{
    switch (type) {
    case QtDebugMsg:
        return "debug";
    case QtInfoMsg:
        return "info";
    case QtWarningMsg:
        return "warning";
    case QtCriticalMsg:
        return "critical";
    case QtFatalMsg:
        return "fatal";
    }
    return "?";
}

// The log as it was becomes agent-console.log.1 (the one before it is dropped) and a new one
// starts: a console left running for weeks keeps at most two logs' worth on disk. Called with
// the file's mutex held.
void rotate(LogFile &f)
{
    const QString path = f.file.fileName();
    f.file.close();
    QFile::remove(path + QStringLiteral(".1"));
    const bool renamed = QFile::rename(path, path + QStringLiteral(".1"));
    f.file.setFileName(path);
    if (!f.file.open(QIODevice::Append | QIODevice::Text))
        f.toStderr = true; // nothing is lost: stderr has it
    // A log that could not be renamed grows on and is tried again a log's worth later, not
    // at every line.
    f.written = renamed ? f.file.size() : 0;
}

// The local time as Qt::ISODateWithMs writes it ("2026-12-06T02:10:00.123"), through the C
// library: the writer also drains the queue at exit, after Qt's global statics (its calendars
// and time zones among them) may be gone.
QByteArray localTimeText(qint64 atMs)
{
    const std::time_t seconds = std::time_t(atMs / 1000);
    std::tm parts{};
    char text[40] = {};
    if (!localtime_r(&seconds, &parts))
        return QByteArray::number(atMs);
    const std::size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &parts);
    std::snprintf(text + length, sizeof text - length, ".%03d", int(atMs % 1000));
    return QByteArray(text);
}

// Made of bytes only, for the same reason: nothing here may need Qt's statics at exit.
QByteArray lineOf(const LogRecord &record)
{
    // Redacted here, where every line is written, whoever logged it (logsecrets.h).
    const QByteArray message = LogSecrets::redact(record.message).toUtf8();
    QByteArray line;
    line.reserve(48 + record.category.size() + message.size());
    line.append(localTimeText(record.atMs))
        .append(' ')
        .append(levelName(record.type))
        .append(' ')
        .append(record.category.isEmpty() ? QByteArrayView("default")
                                          : QByteArrayView(record.category))
        .append(": ")
        .append(message)
        .append('\n');
    return line;
}

void writeLines(LogFile &f, const std::vector<LogRecord> &records)
{
    QMutexLocker lock(&f.mutex);
    for (const LogRecord &record : records) {
        const QByteArray line = lineOf(record);
        if (f.file.isOpen()) {
            // Rotated before the line that would take it past the bound: a log holds at most
            // kMaxLogBytes, all of which localLogLinesNaming() reads.
            if (f.written > 0 && f.written + line.size() > kMaxLogBytes)
                rotate(f);
            f.file.write(line);
            f.written += line.size();
        }
        if (f.toStderr)
            std::fputs(line.constData(), stderr);
    }
    if (f.file.isOpen())
        f.file.flush();
}

void serve(LogSink &s)
{
    std::vector<LogRecord> batch;
    std::unique_lock lock(s.queue.mutex);
    for (;;) {
        s.queue.wake.wait(lock, [&] { return !s.queue.lines.empty() || s.queue.stopping; });
        if (s.queue.lines.empty()) {
            // Stopping, and everything is written: from now on each caller writes its line.
            s.queue.running = false;
            s.queue.writerId = {};
            s.queue.progress.notify_all();
            return;
        }
        s.queue.wake.wait_for(lock, kBatchWindow, [&] {
            return s.queue.stopping || s.queue.flushWanted || s.queue.bytes >= kBatchBytes;
        });
        s.queue.flushWanted = false;
        batch.swap(s.queue.lines);
        s.queue.bytes = 0;
        const quint64 upTo = s.queue.queued;
        lock.unlock();
        s.queue.progress.notify_all(); // room for a caller held at the bound
        writeLines(s.file, batch);
        batch.clear();
        lock.lock();
        s.queue.written = upTo;
        s.queue.progress.notify_all();
    }
}

// Queues a line for the writer, waiting for room past the bound (except on the writer's own
// thread: a warning QFile gives while writing must not wait for the writer). False when no
// writer runs: then the caller writes the line itself.
bool enqueue(LogSink &s, LogRecord &record)
{
    const qint64 size = record.queuedBytes();
    std::unique_lock lock(s.queue.mutex);
    if (std::this_thread::get_id() != s.queue.writerId) {
        s.queue.progress.wait(lock, [&] {
            return !s.queue.running || s.queue.lines.empty()
                || s.queue.bytes + size <= kMaxQueuedBytes;
        });
    }
    if (!s.queue.running)
        return false;
    // The writer needs waking only for a batch's first line, or to end a batch grown large.
    const bool first = s.queue.lines.empty();
    s.queue.bytes += size;
    s.queue.lines.push_back(std::move(record));
    ++s.queue.queued;
    const bool wake = first || s.queue.bytes >= kBatchBytes;
    lock.unlock();
    if (wake)
        s.queue.wake.notify_one();
    return true;
}

// Waits (at most kFlushWait) until every line queued before the call is in the file.
void flush(LogSink &s)
{
    std::unique_lock lock(s.queue.mutex);
    if (!s.queue.running || std::this_thread::get_id() == s.queue.writerId)
        return;
    const quint64 target = s.queue.queued;
    if (s.queue.written >= target)
        return;
    s.queue.flushWanted = true;
    s.queue.wake.notify_one();
    s.queue.progress.wait_for(lock, kFlushWait,
                              [&] { return s.queue.written >= target || !s.queue.running; });
}

// Writes what is queued and ends the writer; later lines are written by their caller. Runs at
// exit, so that no line logged before it is lost.
void stopWriter()
{
    LogSink &s = sink();
    std::thread writer;
    {
        std::lock_guard lock(s.queue.mutex);
        if (!s.queue.running)
            return;
        s.queue.stopping = true;
        writer = std::move(s.queue.writer);
    }
    s.queue.wake.notify_one();
    writer.join();
    std::lock_guard lock(s.queue.mutex);
    s.queue.stopping = false;
}

void startWriter()
{
    LogSink &s = sink();
    std::lock_guard lock(s.queue.mutex);
    if (s.queue.running)
        return;
    s.queue.running = true;
    s.queue.writer = std::thread([&s] { serve(s); });
    s.queue.writerId = s.queue.writer.get_id();
    static const bool stopsAtExit = std::atexit(stopWriter) == 0;
    Q_UNUSED(stopsAtExit);
}

void writeMessage(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    LogRecord record{QDateTime::currentMSecsSinceEpoch(), type,
                     QByteArray(context.category ? context.category : ""), message};
    LogSink &s = sink();
    if (!enqueue(s, record)) {
        writeLines(s.file, {std::move(record)});
        return;
    }
    // Qt aborts the process after a fatal message: it and everything before it are written
    // first.
    if (type == QtFatalMsg)
        flush(s);
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
    flush(s); // a log installed before keeps the lines logged before this call
    bool opened = false;
    {
        QMutexLocker lock(&s.file.mutex);
        // Without a file every message goes to stderr at least.
        s.file.file.close();
        s.file.file.setFileName(path);
        opened = s.file.file.open(QIODevice::Append | QIODevice::Text);
        s.file.written = opened ? s.file.file.size() : 0;
        s.file.toStderr = alsoToStderr || !opened;
    }
    startWriter();
    if (!opened && (!problem || problem->isEmpty()))
        report(QStringLiteral("cannot write the local log %1 (%2); make it writable or choose "
                              "another --data-dir")
                   .arg(QDir::toNativeSeparators(path), s.file.file.errorString()));
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
    flush(sink()); // an incident logged just before the export is in the file
    const QString path = QDir(dataDirectory).filePath(QStringLiteral("logs/agent-console.log"));
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
