// The keyboard in the window (#41 §4, §5): every Tab stop is something seen, in reading order,
// with a ring around it in both palettes; and the conversation keeps a readable width however
// many panels are open, at 1024×700 and 1600×1000.
#include "consolefixture.h"
#include "screenshots.h"

#include "ui/common/consolepalette.h"
#include "ui/common/keyboardfocusring.h"
#include "ui/diagnostics/diagnosticsdock.h"
#include "ui/window/consolelanguage.h"
#include "ui/window/conversationroom.h"

#include <QApplication>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QImage>
#include <QPushButton>
#include <QStyleFactory>
#include <QTest>
#include <QToolButton>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

QRect rectIn(const QWidget *widget, const QWidget *window)
{
    return {widget->mapTo(window, QPoint(0, 0)), widget->size()};
}

QString describe(const QWidget *widget)
{
    return widget ? QStringLiteral("%1 '%2'").arg(QLatin1String(widget->metaObject()->className()),
                                                widget->objectName())
                  : QStringLiteral("nothing");
}

// Pixels of `colour` (within a small tolerance) in the band `width` pixels wide just outside
// `inner`, and the band's size.
std::pair<int, int> ringPixels(const QImage &image, const QRect &inner, int width,
                               const QColor &colour)
{
    const QRect outer = inner.adjusted(-width, -width, width, width);
    int matching = 0;
    int band = 0;
    for (int y = outer.top(); y <= outer.bottom(); ++y) {
        for (int x = outer.left(); x <= outer.right(); ++x) {
            if (inner.contains(x, y) || !image.rect().contains(x, y))
                continue;
            ++band;
            const QColor pixel = image.pixelColor(x, y);
            if (std::abs(pixel.red() - colour.red()) < 40
                && std::abs(pixel.green() - colour.green()) < 40
                && std::abs(pixel.blue() - colour.blue()) < 40)
                ++matching;
        }
    }
    return {matching, band};
}

QPalette darkPalette()
{
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
    dark.setColor(QPalette::WindowText, QColor(0xee, 0xee, 0xee));
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    dark.setColor(QPalette::Text, QColor(0xee, 0xee, 0xee));
    dark.setColor(QPalette::Button, QColor(0x3a, 0x3a, 0x3a));
    dark.setColor(QPalette::ButtonText, QColor(0xee, 0xee, 0xee));
    dark.setColor(QPalette::Highlight, QColor(0x3d, 0xae, 0xe9));
    dark.setColor(QPalette::HighlightedText, Qt::black);
    return dark;
}

} // namespace

class tst_KeyboardFocus : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup();
    void everyTabStopIsSeenInReadingOrder_data();
    void everyTabStopIsSeenInReadingOrder();
    void theRingIsSeenInBothPalettes_data();
    void theRingIsSeenInBothPalettes();
    void theConversationKeepsAReadableWidth_data();
    void theConversationKeepsAReadableWidth();
    void panelsGoBackBesideWhenThereIsRoom();

private:
    std::unique_ptr<ConsoleFixture> m_console;
};

void tst_KeyboardFocus::cleanup()
{
    m_console.reset();
    ConsoleLanguage::install(QStringLiteral("en"));
}

void tst_KeyboardFocus::everyTabStopIsSeenInReadingOrder_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("question");
    QTest::newRow("en") << "en" << "Where is order A1001? Is SKU-300 in stock?";
    QTest::newRow("zh_CN") << "zh_CN" << "订单 A1001 到哪里了？SKU-300 有货吗？";
}

// Tab from the question box round the window and back, then Shift+Tab the other way: each
// stop is on screen, has a ring, and the stops go down the History column, then down the
// conversation, then to the question box.
void tst_KeyboardFocus::everyTabStopIsSeenInReadingOrder()
{
    QFETCH(QString, language);
    QFETCH(QString, question);
    ConsoleLanguage::install(language);
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    ConsoleWindow *window = m_console->window.get();
    window->resize(1024, 700);
    bool ok = false;
    m_console->askAndWait(question, &ok);
    QVERIFY(ok);
    QApplication::setActiveWindow(window);
    QVERIFY(QTest::qWaitForWindowActive(window));
    const KeyboardFocusRing *ring = KeyboardFocusRing::forApplication();
    const QRect windowRect = window->rect();
    const int conversationLeft = rectIn(window->centralWidget(), window).left();

    for (const bool backwards : {false, true}) {
        window->questionInput()->setFocus(Qt::OtherFocusReason);
        QList<QWidget *> stops;
        for (int step = 0; step < 40; ++step) {
            QTest::keyClick(QApplication::focusWidget(), backwards ? Qt::Key_Backtab : Qt::Key_Tab,
                            backwards ? Qt::ShiftModifier : Qt::NoModifier);
            QWidget *now = QApplication::focusWidget();
            QVERIFY(now);
            if (now == window->questionInput())
                break;
            stops.append(now);
            const QRect where = rectIn(now, window);
            QVERIFY2(now->isVisible() && windowRect.contains(where),
                     qPrintable(describe(now) + QStringLiteral(" is not on screen")));
            const bool ownRing = now->property(KeyboardFocusRing::kOwnFocusRing).toBool();
            QVERIFY2(ownRing || ring->ringedWidget() == now,
                     qPrintable(QStringLiteral("no ring around ") + describe(now)));
        }
        QVERIFY2(stops.size() >= 6, qPrintable(QString::number(stops.size())));
        if (backwards)
            std::reverse(stops.begin(), stops.end());
        // Reading order: the left column top to bottom, then the conversation top to bottom.
        for (qsizetype i = 1; i < stops.size(); ++i) {
            const QRect before = rectIn(stops.at(i - 1), window);
            const QRect after = rectIn(stops.at(i), window);
            const bool beforeLeft = before.left() < conversationLeft;
            const bool afterLeft = after.left() < conversationLeft;
            const bool inOrder = (beforeLeft && !afterLeft)
                || (beforeLeft == afterLeft
                    && (after.top() > before.top()
                        || (after.top() >= before.top() - 2 && after.left() > before.left())
                        || before.contains(after.topLeft())));
            QVERIFY2(inOrder, qPrintable(describe(stops.at(i - 1)) + QStringLiteral(" → ")
                                         + describe(stops.at(i))));
        }
    }
    // A click puts no ring: it is for the keyboard.
    auto *search = window->findChild<QWidget *>(QStringLiteral("historySearch"));
    QVERIFY(search);
    QTest::mouseClick(search, Qt::LeftButton);
    QCOMPARE(QApplication::focusWidget(), search);
    QCOMPARE(ring->ringedWidget(), nullptr);
}

void tst_KeyboardFocus::theRingIsSeenInBothPalettes_data()
{
    QTest::addColumn<bool>("dark");
    QTest::newRow("light") << false;
    QTest::newRow("dark") << true;
}

void tst_KeyboardFocus::theRingIsSeenInBothPalettes()
{
    QFETCH(bool, dark);
    QWidget window;
    if (dark)
        window.setPalette(darkPalette());
    QVERIFY(Internal::isDarkPalette(window.palette()) == dark);
    auto *layout = new QHBoxLayout(&window);
    layout->setContentsMargins(12, 12, 12, 12);
    auto *first = new QPushButton(QStringLiteral("First"));
    auto *push = new QPushButton(QStringLiteral("Create ticket"));
    auto *flat = new QToolButton;
    flat->setText(QStringLiteral("Copy"));
    flat->setAutoRaise(true);
    flat->setFocusPolicy(Qt::TabFocus);
    layout->addWidget(first);
    layout->addWidget(push);
    layout->addWidget(flat);
    KeyboardFocusRing::forApplication();
    window.show();
    QApplication::setActiveWindow(&window);
    QVERIFY(QTest::qWaitForWindowActive(&window));
    first->setFocus(Qt::OtherFocusReason);
    const QColor highlight = window.palette().color(QPalette::Active, QPalette::Highlight);
    for (QWidget *target : {static_cast<QWidget *>(push), static_cast<QWidget *>(flat)}) {
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QCOMPARE(QApplication::focusWidget(), target);
        QCOMPARE(KeyboardFocusRing::forApplication()->ringedWidget(), target);
        const QImage shot = window.grab().toImage();
        const auto [matching, band] = ringPixels(shot, target->geometry(), 2, highlight);
        // Most of the two-pixel band round the button is the highlight (the corners are round).
        QVERIFY2(matching * 10 >= band * 8,
                 qPrintable(QStringLiteral("%1 of %2 ring pixels around %3")
                                .arg(matching).arg(band).arg(describe(target))));
        const auto [before, ignored] = ringPixels(shot, first->geometry(), 2, highlight);
        QVERIFY2(before * 10 < band, qPrintable(QString::number(before))); // the ring moved on
    }
}

void tst_KeyboardFocus::theConversationKeepsAReadableWidth_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QSize>("size");
    QTest::addColumn<bool>("below"); // whether the panels have to go below the conversation
    QTest::newRow("en 1024x700") << "en" << QSize(1024, 700) << true;
    QTest::newRow("en 1600x1000") << "en" << QSize(1600, 1000) << false;
    QTest::newRow("zh_CN 1024x700") << "zh_CN" << QSize(1024, 700) << true;
    QTest::newRow("zh_CN 1600x1000") << "zh_CN" << QSize(1600, 1000) << false;
}

// The QA layout (History, Diagnostics, Faults and Scenarios open, the panel in front made as
// wide as its content): the conversation stays readable.
void tst_KeyboardFocus::theConversationKeepsAReadableWidth()
{
    QFETCH(QString, language);
    QFETCH(QSize, size);
    QFETCH(bool, below);
    ConsoleLanguage::install(language);
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    ConsoleWindow *window = m_console->window.get();
    window->resize(size);
    QWidget *conversation = window->centralWidget();
    const int readable = ConversationRoom::readableWidth(conversation);
    auto *qa = window->findChild<QAction *>(QStringLiteral("qaLayoutAction"));
    QVERIFY(qa);
    qa->trigger();
    QTRY_VERIFY(window->diagnosticsDock()->isVisible());
    QTRY_VERIFY2(conversation->width() >= readable,
                 qPrintable(QStringLiteral("%1 px, readable %2").arg(conversation->width())
                                .arg(readable)));
    const Qt::DockWidgetArea where = window->dockWidgetArea(window->diagnosticsDock());
    QCOMPARE(where, below ? Qt::BottomDockWidgetArea : Qt::RightDockWidgetArea);
    // The question box's hint is whole.
    const QString hint = window->questionInput()->placeholderText();
    QVERIFY(window->questionInput()->fontMetrics().horizontalAdvance(hint)
            < window->questionInput()->viewport()->width());
    const QString tag = QStringLiteral("%1-%2x%3").arg(language).arg(size.width())
                            .arg(size.height());
    QVERIFY(!saveScreenshot(window, QStringLiteral("qa-layout-%1.png").arg(tag)).isEmpty());
}

void tst_KeyboardFocus::panelsGoBackBesideWhenThereIsRoom()
{
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    ConsoleWindow *window = m_console->window.get();
    window->resize(1024, 700);
    window->findChild<QAction *>(QStringLiteral("qaLayoutAction"))->trigger();
    QTRY_COMPARE(window->dockWidgetArea(window->diagnosticsDock()), Qt::BottomDockWidgetArea);
    window->resize(1600, 1000);
    QTRY_COMPARE(window->dockWidgetArea(window->diagnosticsDock()), Qt::RightDockWidgetArea);
    QVERIFY(window->diagnosticsDock()->isVisible());
    QVERIFY(window->centralWidget()->width()
            >= ConversationRoom::readableWidth(window->centralWidget()));
    // History stayed on the left all along.
    auto *history = window->findChild<QDockWidget *>(QStringLiteral("historySidebar"));
    QVERIFY(history);
    QCOMPARE(window->dockWidgetArea(history), Qt::LeftDockWidgetArea);
}

QTEST_MAIN(tst_KeyboardFocus)
#include "tst_keyboardfocus.moc"
