// The local log (core/telemetry/locallog.h) in a temporary data directory: it stays bounded
// while the process runs, rotating past 4 MiB, an incident's lines are found in either
// file, whoever logs does not wait for the disk, and what was queued is in the file when the
// process ends (normally, or by a fatal message).
#include "core/telemetry/locallog.h"
#include "core/telemetry/logsecrets.h"

#include "sanitizerbuild.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QUrl>
#include <QLoggingCategory>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace AgentConsole;

class tst_LocalLog final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aLineSaysWhenWhatAndWhere();
    void aLongRunKeepsTwoLogsAtMost();
    void aStalledDiskDoesNotHoldTheCaller();
    void whatIsQueuedIsWrittenWhenTheProcessEnds_data();
    void whatIsQueuedIsWrittenWhenTheProcessEnds();
    void aKnownSecretNeverReachesTheFile();
};

namespace {

constexpr qint64 kMaxLogBytes = 4 * 1024 * 1024;

// Logs `bytes` or a little more, as lines of about 1 KiB.
void logAbout(qint64 bytes)
{
    const QString filler(1000, QLatin1Char('x'));
    for (qint64 done = 0; done < bytes; done += 1024)
        qInfo("%s", qPrintable(filler));
}

} // namespace

// A line is made on the log's thread (the caller only queues the message), yet it carries the
// time it was logged, its level and category, and the text as UTF-8.
void tst_LocalLog::aLineSaysWhenWhatAndWhere()
{
    QTemporaryDir data;
    QVERIFY(data.isValid());
    QString problem;
    installLocalLog(data.path(), false, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const auto restore = qScopeGuard([] { qInstallMessageHandler(nullptr); });
    static const QLoggingCategory category("agentconsole.logtest");
    const QDateTime before = QDateTime::currentDateTime().addMSecs(-1);
    qCWarning(category) << "incident inc-format:" << QStringLiteral("订单 A1001");
    const QDateTime after = QDateTime::currentDateTime().addMSecs(1);
    const QStringList lines = localLogLinesNaming(data.path(), {QStringLiteral("inc-format")})
                                  .value(QStringLiteral("inc-format"));
    QCOMPARE(lines.size(), 1);
    const QString line = lines.constFirst();
    const qsizetype space = line.indexOf(QLatin1Char(' '));
    const QDateTime at = QDateTime::fromString(line.left(space), Qt::ISODateWithMs);
    QVERIFY2(at.isValid() && at >= before && at <= after, qPrintable(line));
    QCOMPARE(line.mid(space), QStringLiteral(" warning agentconsole.logtest: incident inc-format: "
                                             "\"订单 A1001\""));
}

// A console left running writes far more than one log's worth: the file is rotated as it
// goes, so at most two logs' worth is ever on disk, and lines on both sides of a rotation
// are still found by their incident id.
void tst_LocalLog::aLongRunKeepsTwoLogsAtMost()
{
    QTemporaryDir data;
    QVERIFY(data.isValid());
    QString problem;
    const QString path = installLocalLog(data.path(), false, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const auto restore = qScopeGuard([] { qInstallMessageHandler(nullptr); });
    const QString older = path + QStringLiteral(".1");

    qWarning("incident inc-before-rotation: the first one");
    logAbout(kMaxLogBytes);
    QTRY_VERIFY(QFileInfo::exists(older)); // the log's writer has reached it
    qWarning("incident inc-after-rotation: the second one");
    // Reading waits for what was logged before.
    const QHash<QString, QStringList> found = localLogLinesNaming(
        data.path(), {QStringLiteral("inc-before-rotation"), QStringLiteral("inc-after-rotation")});
    QCOMPARE(found.value(QStringLiteral("inc-before-rotation")).size(), 1);
    QCOMPARE(found.value(QStringLiteral("inc-after-rotation")).size(), 1);
    QVERIFY(QFileInfo(path).size() < kMaxLogBytes);

    // Three logs' worth more: still two files, each within the bound. The first incident
    // left with the file rotated away.
    logAbout(3 * kMaxLogBytes);
    QVERIFY(localLogLinesNaming(data.path(), {QStringLiteral("inc-before-rotation")}).isEmpty());
    const QStringList logs = QDir(QFileInfo(path).absolutePath()).entryList(QDir::Files);
    QCOMPARE(logs, (QStringList{QStringLiteral("agent-console.log"),
                                QStringLiteral("agent-console.log.1")}));
    QVERIFY(QFileInfo(path).size() <= kMaxLogBytes);
    QVERIFY(QFileInfo(older).size() <= kMaxLogBytes);
    QVERIFY(QFileInfo(older).size() > kMaxLogBytes - 2048);
}

// The log's file is a pipe nobody reads yet: a write blocks once its 64 KiB are full, as a
// write to a stalled disk would. Whoever logs (the GUI thread, in the console) only queues its
// line, so 256 KiB of lines are logged at once; they reach the file, in order, once it is read.
void tst_LocalLog::aStalledDiskDoesNotHoldTheCaller()
{
    QTemporaryDir data;
    QVERIFY(data.isValid());
    QVERIFY(QDir(data.path()).mkpath(QStringLiteral("logs")));
    const QByteArray fifo = QDir(data.path()).filePath(QStringLiteral("logs/agent-console.log"))
                                .toLocal8Bit();
    QCOMPARE(::mkfifo(fifo.constData(), 0600), 0);
    const int reader = ::open(fifo.constData(), O_RDONLY | O_NONBLOCK);
    QVERIFY(reader >= 0);
    QString problem;
    installLocalLog(data.path(), false, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));

    QByteArray read;
    const auto readWhatIsThere = [&] {
        char buffer[65536];
        for (ssize_t n; (n = ::read(reader, buffer, sizeof buffer)) > 0;)
            read.append(buffer, n);
    };
    std::atomic<bool> logged = false;
    std::thread caller([&] {
        qWarning("stall: first line");
        logAbout(256 * 1024);
        qWarning("stall: last line");
        logged = true;
    });
    // Whatever happens, the caller is let go and the log leaves the pipe before it closes.
    const auto cleanup = qScopeGuard([&] {
        while (!logged)
            readWhatIsThere();
        caller.join();
        QTemporaryDir elsewhere;
        installLocalLog(elsewhere.path(), false);
        qInstallMessageHandler(nullptr);
        ::close(reader);
    });
    QTRY_VERIFY_WITH_TIMEOUT(logged, 10000);
    QTRY_VERIFY_WITH_TIMEOUT((readWhatIsThere(), read.contains("stall: last line")), 10000);
    QVERIFY(read.indexOf("stall: first line") < read.indexOf("stall: last line"));
    QVERIFY(read.size() > 256 * 1024);
}

namespace {

constexpr int kChildLines = 2000;

// The child of whatIsQueuedIsWrittenWhenTheProcessEnds: logs and ends at once, most of its
// lines still queued for the writer (a batch waits 20 ms).
int logAndEnd(const QByteArray &mode, const QString &dataDirectory)
{
    installLocalLog(dataDirectory, false);
    for (int i = 1; i <= kChildLines; ++i)
        qInfo("child line %d", i);
    if (mode == "--child-fatal")
        qFatal("child last words");
    return 0;
}

} // namespace

void tst_LocalLog::whatIsQueuedIsWrittenWhenTheProcessEnds_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("returning from main") << QStringLiteral("--child-exit");
    QTest::newRow("a fatal message") << QStringLiteral("--child-fatal");
}

void tst_LocalLog::whatIsQueuedIsWrittenWhenTheProcessEnds()
{
    if constexpr (Testing::threadSanitized)
        QSKIP(Testing::childProcessUnderTsan);
    QFETCH(QString, mode);
    QTemporaryDir data;
    QVERIFY(data.isValid());
    QProcess child;
    child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    child.start(QCoreApplication::applicationFilePath(), {mode, data.path()});
    QVERIFY(child.waitForFinished(60000));
    if (mode == QLatin1String("--child-exit")) {
        QCOMPARE(child.exitStatus(), QProcess::NormalExit);
        QCOMPARE(child.exitCode(), 0);
    } else {
        QCOMPARE(child.exitStatus(), QProcess::CrashExit); // qFatal aborts
    }
    QFile log(QDir(data.path()).filePath(QStringLiteral("logs/agent-console.log")));
    QVERIFY(log.open(QIODevice::ReadOnly));
    const QByteArray text = log.readAll();
    QCOMPARE(text.count("child line "), kChildLines);
    QVERIFY(text.contains(QByteArray("child line ") + QByteArray::number(kChildLines) + '\n'));
    if (mode == QLatin1String("--child-fatal"))
        QVERIFY(text.contains("fatal default: child last words"));
}

// Whoever logs a secret the console knows (a server echoing its token in an error, a library
// printing a header), as it is or as JSON or a URL escape it, the file has "[redacted]" in its
// place. Too short a value is not looked for: it would take words out of every line.
void tst_LocalLog::aKnownSecretNeverReachesTheFile()
{
    QTemporaryDir data;
    QVERIFY(data.isValid());
    QString problem;
    installLocalLog(data.path(), false, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const auto restore = qScopeGuard([] { qInstallMessageHandler(nullptr); });
    const QString key = QStringLiteral("sk-live-4f9a2b7c1d");
    const QString token = QStringLiteral("tok/with\"quote+and=padding==");
    LogSecrets::add(key);
    LogSecrets::add(QStringLiteral("Bearer ") + token);
    LogSecrets::add(QStringLiteral("abc"));
    QString inJson = token;
    inJson.replace(QLatin1Char('"'), QStringLiteral("\\\""));
    qWarning().noquote() << "inc-secret-1 server said: invalid key" << key;
    qWarning().noquote() << "inc-secret-2 echoed: {\"token\":\"" + inJson + "\"}";
    qWarning().noquote() << "inc-secret-3 url: http://127.0.0.1/cb?token="
                                + QString::fromLatin1(QUrl::toPercentEncoding(token));
    qWarning().noquote() << "inc-secret-4 a word: abc";
    QStringList needles;
    for (int i = 1; i <= 4; ++i)
        needles.append(QStringLiteral("inc-secret-%1").arg(i));
    const auto lines = localLogLinesNaming(data.path(), needles);
    QCOMPARE(lines.size(), 4);
    for (int i = 1; i <= 3; ++i) {
        const QString line = lines.value(needles.at(i - 1)).value(0);
        QVERIFY2(line.contains(QStringLiteral("[redacted]")), qPrintable(line));
    }
    QVERIFY(lines.value(needles.at(3)).value(0).endsWith(QStringLiteral("abc")));
    QDirIterator files(data.path(), QDir::Files, QDirIterator::Subdirectories);
    while (files.hasNext()) {
        QFile file(files.next());
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        QVERIFY2(!bytes.contains(key.toUtf8()), qPrintable(file.fileName()));
        QVERIFY2(!bytes.contains("quote+and=padding"), qPrintable(file.fileName()));
        QVERIFY2(!bytes.contains("quote%2Band%3Dpadding"), qPrintable(file.fileName()));
    }
}

int main(int argc, char *argv[])
{
    if (argc == 3
        && (qstrcmp(argv[1], "--child-exit") == 0 || qstrcmp(argv[1], "--child-fatal") == 0))
        return logAndEnd(argv[1], QString::fromLocal8Bit(argv[2]));
    QCoreApplication app(argc, argv);
    tst_LocalLog test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_locallog.moc"
