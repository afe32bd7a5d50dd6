// The local log (core/telemetry/locallog.h) in a temporary data directory: it stays bounded
// while the process runs, rotating past 4 MiB, and an incident's lines are found in either
// file.
#include "core/telemetry/locallog.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole;

class tst_LocalLog final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aLongRunKeepsTwoLogsAtMost();
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
    QVERIFY(QFileInfo::exists(older));
    qWarning("incident inc-after-rotation: the second one");
    const QHash<QString, QStringList> found = localLogLinesNaming(
        data.path(), {QStringLiteral("inc-before-rotation"), QStringLiteral("inc-after-rotation")});
    QCOMPARE(found.value(QStringLiteral("inc-before-rotation")).size(), 1);
    QCOMPARE(found.value(QStringLiteral("inc-after-rotation")).size(), 1);
    QVERIFY(QFileInfo(path).size() < kMaxLogBytes);

    // Three logs' worth more: still two files, each within the bound.
    logAbout(3 * kMaxLogBytes);
    const QStringList logs = QDir(QFileInfo(path).absolutePath()).entryList(QDir::Files);
    QCOMPARE(logs, (QStringList{QStringLiteral("agent-console.log"),
                                QStringLiteral("agent-console.log.1")}));
    QVERIFY(QFileInfo(path).size() <= kMaxLogBytes);
    QVERIFY(QFileInfo(older).size() <= kMaxLogBytes);
    QVERIFY(QFileInfo(older).size() > kMaxLogBytes - 2048);
    QVERIFY(localLogLinesNaming(data.path(), {QStringLiteral("inc-before-rotation")}).isEmpty());
}

QTEST_GUILESS_MAIN(tst_LocalLog)
#include "tst_locallog.moc"
