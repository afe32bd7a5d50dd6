// The window's paint waits on nothing but its own work. Qt 6.4's raster engine splits a paint's
// larger blends (from 96 rows on) across QThreadPool::globalInstance() and the GUI thread waits
// for the pieces. So the console reads and writes its files on a pool of its own
// (fileWorkPool()), and a file stuck on a slow disk never holds up a paint; and the transcript's
// scroll bar, repainted at every growth of the conversation, paints in bands that Qt keeps on
// the GUI thread (on a busy machine the pool's threads wait for a core).
#include "core/async/fileworkpool.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/faultfile.h"
#include "core/console/mcpconfigfile.h"
#include "core/scenarios/scenariofile.h"
#include "core/turn/agentloop.h"
#include "core/turn/turnresult.h"
#include "ui/common/groovecachingstyle.h"
#include "ui/export/conversationexporter.h"
#include "ui/window/consolewindow.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QPainter>
#include <QPixmap>
#include <QScrollBar>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

#include <atomic>
#include <memory>
#include <thread>

using namespace AgentConsole;

namespace {

constexpr int kWaitMs = 20000;

// Every thread of a pool held by a task that waits until release() (or the end of the hold).
// The tasks share their semaphores with the hold, so a task still leaving after the hold is
// gone touches nothing freed.
class PoolHold final
{
public:
    explicit PoolHold(QThreadPool *pool)
        : m_threads(pool->maxThreadCount())
    {
        for (int i = 0; i < m_threads; ++i) {
            pool->start([state = m_state] {
                state->started.release();
                state->letGo.acquire();
            });
        }
    }
    ~PoolHold() { release(); }

    // True once every thread of the pool is held.
    bool held(int timeoutMs) { return m_state->started.tryAcquire(m_threads, timeoutMs); }
    // Thread-safe; once.
    void release()
    {
        if (!m_state->released.exchange(true))
            m_state->letGo.release(m_threads);
    }

private:
    struct State
    {
        QSemaphore started;
        QSemaphore letGo;
        std::atomic<bool> released{false};
    };
    const int m_threads;
    const std::shared_ptr<State> m_state = std::make_shared<State>();
};

// A widget whose paint blends a translucent colour over 900 rows: Qt splits that fill across
// its global pool (as it does a pixmap drawn under a clip, a scroll bar's groove say).
class LargeTranslucentFill final : public QWidget
{
public:
    LargeTranslucentFill() { resize(1200, 900); }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter painter(this);
        painter.fillRect(rect(), QColor(0x2e, 0x6b, 0xc6, 0x80));
    }
};

// Grabs `widget` while `hold` holds a pool; a watchdog lets the pool go after `boundMs`.
// Whether the grab had to wait for the watchdog.
bool grabWaitedForThePool(QWidget &widget, PoolHold &hold, int boundMs)
{
    QSemaphore grabbed;
    std::atomic<bool> watchdogLetGo{false};
    std::thread watchdog([&] {
        if (!grabbed.tryAcquire(1, boundMs)) {
            watchdogLetGo = true;
            hold.release();
        }
    });
    const QPixmap shot = widget.grab();
    grabbed.release();
    watchdog.join();
    if (shot.isNull())
        qWarning("the grab is empty");
    return watchdogLetGo;
}

} // namespace

class tst_PaintAndFiles : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void qtsPaintWaitsOnItsGlobalPool();
    void aPaintNeverWaitsOnTheConsolesFileWork();
    void theTranscriptsScrollBarPaintsWithoutQtsPool();
    void fileWorkGoesOnWhileQtsPoolIsHeld();
};

void tst_PaintAndFiles::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
}

// What this suite stands on, shown on the Qt it runs with: a large paint waits for Qt's
// global pool. If a Qt no longer does, the console's own pool is still right, but this suite
// no longer shows why.
void tst_PaintAndFiles::qtsPaintWaitsOnItsGlobalPool()
{
    LargeTranslucentFill picture;
    PoolHold qtPool(QThreadPool::globalInstance());
    QVERIFY(qtPool.held(kWaitMs));
    QVERIFY2(grabWaitedForThePool(picture, qtPool, 250),
             "the paint did not wait for Qt's global pool");
}

// The disk is slow: every thread of the console's file pool waits on it. A paint goes on.
void tst_PaintAndFiles::aPaintNeverWaitsOnTheConsolesFileWork()
{
    LargeTranslucentFill picture;
    PoolHold files(fileWorkPool());
    QVERIFY(files.held(kWaitMs));
    QVERIFY2(!grabWaitedForThePool(picture, files, kWaitMs),
             "the paint waited for the console's file work");
}

// A transcript-high scroll bar as the transcript keeps it (cacheScrollBarGroove()) paints with
// Qt's pool held; Fusion's own bar of the same size waits for the pool.
void tst_PaintAndFiles::theTranscriptsScrollBarPaintsWithoutQtsPool()
{
    if (QApplication::style()->name().compare(QLatin1String("fusion"), Qt::CaseInsensitive))
        QSKIP("the bar is drawn in bands only under Fusion");
    const auto setUp = [](QScrollBar &bar) {
        bar.setRange(0, 20000);
        bar.setPageStep(8000); // a long slider: a blend of its own over many rows
        bar.setValue(6000);
        bar.resize(16, 800);
    };
    QScrollBar plain;
    setUp(plain);
    QScrollBar kept;
    cacheScrollBarGroove(&kept);
    setUp(kept);
    kept.grab(); // its groove drawn once, as the transcript's is long before a storm
    PoolHold qtPool(QThreadPool::globalInstance());
    QVERIFY(qtPool.held(kWaitMs));
    QVERIFY2(!grabWaitedForThePool(kept, qtPool, kWaitMs),
             "the transcript's scroll bar waited for Qt's global pool");
    QVERIFY2(grabWaitedForThePool(plain, qtPool, 250),
             "Fusion's own bar did not wait for Qt's global pool");
}

// Qt's pool is busy with a paint's pieces (here: held). The console starts, reads a fault file,
// a scenario and mcp.json, and writes an export all the same.
void tst_PaintAndFiles::fileWorkGoesOnWhileQtsPoolIsHeld()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    PoolHold qtPool(QThreadPool::globalInstance());
    QVERIFY(qtPool.held(kWaitMs));

    // The start reads and makes the data directory.
    RuntimeOptions options;
    options.dataDirectory = dir.filePath(QStringLiteral("data"));
    AgentRuntime runtime(options);
    ConsoleWindow window(&runtime); // not shown: nothing of it is painted while Qt's pool is held
    QSignalSpy ready(&runtime, &AgentRuntime::ready);
    QSignalSpy failed(&runtime, &AgentRuntime::failed);
    runtime.start();
    QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty() || !failed.isEmpty(), kWaitMs);
    QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
    // It made the directory first: the console id is kept for the next start.
    QVERIFY(QFile::exists(QDir(options.dataDirectory).filePath(QStringLiteral("console-id"))));

    const QString tool = runtime.faults()->knownTools().names.value(0);
    QVERIFY(!tool.isEmpty());
    const QString faultPath = dir.filePath(QStringLiteral("faults.json"));
    {
        QFile file(faultPath);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QStringLiteral(R"({"tools": {"%1": {"hang": true}}})").arg(tool).toUtf8());
    }
    const QFuture<FileRead<FaultPlan>> faults
        = readFaultFile(faultPath, runtime.faults()->knownTools());
    QTRY_VERIFY_WITH_TIMEOUT(faults.isFinished(), kWaitMs);
    QVERIFY2(faults.result().value, qPrintable(faults.result().error));

    const QString scenarioPath = dir.filePath(QStringLiteral("scenario.json"));
    QVERIFY(QFile::copy(QStringLiteral(":/agentconsole/scenarios/all-good.json"), scenarioPath));
    const QFuture<FileRead<Scenario>> scenario
        = readScenarioFile(scenarioPath, runtime.faults()->knownTools());
    QTRY_VERIFY_WITH_TIMEOUT(scenario.isFinished(), kWaitMs);
    QVERIFY2(scenario.result().value, qPrintable(scenario.result().error));

    McpConfigFile mcpConfig(dir.filePath(QStringLiteral("mcp.json")), nullptr);
    QSignalSpy loaded(&mcpConfig, &McpConfigFile::loaded);
    mcpConfig.load();
    QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, kWaitMs);
    QCOMPARE(loaded.first().at(1).toBool(), false); // no file yet: read and said so
    QSignalSpy saved(&mcpConfig, &McpConfigFile::saved);
    QVERIFY(mcpConfig.save(QStringLiteral(R"({"mcpServers": {}})")));
    QTRY_COMPARE_WITH_TIMEOUT(saved.size(), 1, kWaitMs);

    // An export of a turn the window has seen (hidden: it listens all the same).
    QSignalSpy turnFinished(runtime.agentLoop(), &AgentLoop::turnFinished);
    runtime.agentLoop()->ask(QStringLiteral("Where is order A1001?"));
    QTRY_COMPARE_WITH_TIMEOUT(turnFinished.size(), 1, kWaitMs);
    QSignalSpy exported(window.exporter(), &ConversationExporter::exported);
    QSignalSpy exportFailed(window.exporter(), &ConversationExporter::failed);
    const QString exportPath = dir.filePath(QStringLiteral("export.json"));
    window.exporter()->exportConversation(exportPath);
    QTRY_VERIFY_WITH_TIMEOUT(!exported.isEmpty() || !exportFailed.isEmpty(), kWaitMs);
    QVERIFY2(exportFailed.isEmpty(), qPrintable(exportFailed.value(0).value(1).toString()));
    QVERIFY(QFile::exists(exportPath));
}

QTEST_MAIN(tst_PaintAndFiles)
#include "tst_paintandfiles.moc"
