// The first window on a small screen at 150% scaling (CMake runs this suite on the offscreen
// platform with one 1366 x 768 screen, smallscreen.json, and QT_SCALE_FACTOR=1.5: 910 x 512
// logical pixels; Qt 6.4's offscreen platform takes a screen size only from a config file):
// the whole window, the question box and Send included, is on the screen. The title names the
// staff member and the tenant, and keeps the fault marks.
#include "screenshots.h"

#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/faults/faultplan.h"
#include "ui/window/consolewindow.h"
#include "ui/transcript/questioninput.h"

#include <QPushButton>
#include <QScreen>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole;

class tst_WindowFit final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void questionBoxIsOnAScaledSmallScreen();
    void titleNamesStaffAndTenant();
};

void tst_WindowFit::questionBoxIsOnAScaledSmallScreen()
{
    QScreen *screen = QGuiApplication::primaryScreen();
    QVERIFY(screen);
    QCOMPARE(screen->devicePixelRatio(), 1.5);
    const QRect available = screen->availableGeometry();
    QVERIFY2(available.height() < 560, "the suite runs on a small, scaled screen");

    QTemporaryDir dir;
    RuntimeOptions options;
    options.dataDirectory = dir.path();
    AgentRuntime runtime(options);
    ConsoleWindow window(&runtime); // as agent-console makes its first window
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy ready(&runtime, &AgentRuntime::ready);
    runtime.start();
    QVERIFY(ready.wait(20000));
    for (int pass = 0; pass < 16; ++pass)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);

    QVERIFY2(available.contains(window.frameGeometry()),
             qPrintable(QStringLiteral("window %1x%2 at %3,%4; screen %5x%6")
                            .arg(window.frameGeometry().width())
                            .arg(window.frameGeometry().height())
                            .arg(window.frameGeometry().x())
                            .arg(window.frameGeometry().y())
                            .arg(available.width())
                            .arg(available.height())));
    for (QWidget *widget : std::initializer_list<QWidget *>{window.questionInput(),
                                                            window.sendButton()}) {
        QVERIFY(widget->isVisible());
        const QRect global(widget->mapToGlobal(QPoint(0, 0)), widget->size());
        QVERIFY2(available.contains(global),
                 qPrintable(QStringLiteral("%1 at %2,%3 %4x%5 is off the screen")
                                .arg(widget->objectName())
                                .arg(global.x())
                                .arg(global.y())
                                .arg(global.width())
                                .arg(global.height())));
        QVERIFY(widget->height() >= widget->fontMetrics().height()); // a line shows, at least
    }
    QVERIFY(!Testing::saveScreenshot(&window, QStringLiteral("window-150-percent.png")).isEmpty());
}

void tst_WindowFit::titleNamesStaffAndTenant()
{
    QTemporaryDir dir;
    RuntimeOptions options;
    options.dataDirectory = dir.path();
    options.userId = QStringLiteral("u-2001");
    options.tenantId = QStringLiteral("t-globex");
    AgentRuntime runtime(options);
    ConsoleWindow window(&runtime);
    window.show();
    QSignalSpy ready(&runtime, &AgentRuntime::ready);
    runtime.start();
    QVERIFY(ready.wait(20000));
    const QString title = window.windowTitle();
    // Who is asking, never the product's name: the window system adds that once.
    QVERIFY2(!title.contains(QStringLiteral("Agent Console")), qPrintable(title));
    QVERIFY2(title.contains(QStringLiteral("(u-2001)")), qPrintable(title));
    QVERIFY2(title.endsWith(QStringLiteral("\u00b7 t-globex")), qPrintable(title));

    // The fault marks stay, after who is asking.
    QString error;
    const auto plan = FaultPlan::fromJson(
        QByteArray(R"({"tools":{"queryLogistics":{"hang":true}}})"), &error,
        runtime.faults()->knownTools());
    QVERIFY2(plan, qPrintable(error));
    runtime.faults()->setPlan(*plan);
    QTRY_VERIFY(window.windowTitle().endsWith(QStringLiteral("\u2014 FAULTS ACTIVE")));
    QVERIFY(window.windowTitle().contains(QStringLiteral("t-globex")));
}

QTEST_MAIN(tst_WindowFit)
#include "tst_windowfit.moc"
