// The console as a desktop citizen, offscreen over a real runtime: its icon is the desktop
// entry's SVG, Help › Keyboard shortcuts lists every shortcut read from the window's own
// actions (so a new or changed one shows up), and assistive technology sees the tool cards as
// buttons that expand and the main controls by name.
#include "consoletestsupport.h"

#include "ui/diagnostics/diagnosticsdock.h"
#include "ui/history/historysidebar.h"
#include "ui/window/applicationicon.h"
#include "ui/window/shortcutsdialog.h"

#include <QAccessible>
#include <QIcon>
#include <QImage>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QStandardPaths>
#include <QToolButton>
#include <QTreeWidget>

using namespace AgentConsole;
using namespace AgentConsole::UiTest;

namespace {

// Command -> shortcut, as the dialog shows them.
QMap<QString, QString> rowsOf(const ShortcutsDialog *dialog)
{
    QMap<QString, QString> rows;
    const QTreeWidget *list = dialog->list();
    for (int g = 0; g < list->topLevelItemCount(); ++g) {
        const QTreeWidgetItem *group = list->topLevelItem(g);
        for (int i = 0; i < group->childCount(); ++i)
            rows.insert(group->child(i)->text(0), group->child(i)->text(1));
    }
    return rows;
}

QString plain(QString text)
{
    return text.remove(QLatin1Char('&'));
}

ShortcutsDialog *openShortcuts(ConsoleWindow *window)
{
    QTest::keySequence(window, QKeySequence(QKeySequence::HelpContents));
    ShortcutsDialog *shown = nullptr;
    (void)QTest::qWaitFor([&] {
        for (ShortcutsDialog *dialog : window->findChildren<ShortcutsDialog *>()) {
            if (dialog->isVisible())
                shown = dialog;
        }
        return shown != nullptr;
    });
    return shown;
}

} // namespace

class tst_DesktopIntegration final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void theIconIsTheDesktopEntrysSvg();
    void helpListsEveryShortcutOfTheWindow();
    void aNewOrChangedShortcutIsListedAtOnce();
    void toolCardsAreButtonsThatExpand();
    void everyNoticeClosesAndTheShortcutsAreListed();
    void theMainControlsHaveNames();
};

void tst_DesktopIntegration::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    registerTypes();
}

void tst_DesktopIntegration::theIconIsTheDesktopEntrysSvg()
{
    QVERIFY(QFile::exists(QStringLiteral(":/icons/org.agentconsole.AgentConsole.svg")));
    const QIcon icon = applicationIcon();
    QVERIFY(!icon.isNull());
    // Drawn at any size (Qt's SVG plugin): the bubble's top is white, the corner clear.
    for (int size : {16, 48, 256}) {
        const QImage image = icon.pixmap(size, size).toImage();
        QCOMPARE(image.width(), size);
        QCOMPARE(qAlpha(image.pixel(0, 0)), 0);
        if (size >= 48)
            QVERIFY(QColor(image.pixel(size / 2, size / 4)).lightness() > 240);
    }
    // For people to look at, at the size a dock shows it.
    const QDir shots(screenshotDirectory());
    QVERIFY(shots.mkpath(QStringLiteral(".")));
    QVERIFY(icon.pixmap(128, 128).save(shots.filePath(QStringLiteral("desktop-icon.png"))));
}

void tst_DesktopIntegration::helpListsEveryShortcutOfTheWindow()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    // Help is the last menu.
    const QList<QAction *> menus = window->menuBar()->actions();
    QVERIFY(!menus.isEmpty());
    QCOMPARE(menus.last()->menu()->objectName(), QStringLiteral("helpMenu"));

    ShortcutsDialog *dialog = openShortcuts(window);
    QVERIFY(dialog);
    const QMap<QString, QString> rows = rowsOf(dialog);
    int withShortcut = 0;
    for (const QAction *action : window->findChildren<QAction *>()) {
        if (action->shortcut().isEmpty() || action->menu())
            continue;
        ++withShortcut;
        QVERIFY2(rows.contains(plain(action->text())), qPrintable(action->text()));
        QCOMPARE(rows.value(plain(action->text())),
            action->shortcut().toString(QKeySequence::NativeText));
    }
    // New conversation, the fault panel, the policies, the scenarios, the shortcuts (Quit's
    // standard key is the platform's: none on offscreen).
    QVERIFY2(withShortcut >= 5, qPrintable(QStringList(rows.keys()).join(QLatin1Char('|'))));
    QCOMPARE(rows.value(QStringLiteral("Keyboard shortcuts")), QStringLiteral("F1"));
    QCOMPARE(rows.value(QStringLiteral("New conversation")),
        QKeySequence(QKeySequence::New).toString(QKeySequence::NativeText));
    QCOMPARE(rows.value(QStringLiteral("Cancel")), QStringLiteral("Esc"));
    QVERIFY(!saveScreenshot(dialog, QStringLiteral("desktop-shortcuts.png")).isEmpty());
    dialog->close();
}

void tst_DesktopIntegration::aNewOrChangedShortcutIsListedAtOnce()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    QAction *added = window->menuBar()->actions().first()->menu()->addAction(
        QStringLiteral("&Brand new command"));
    added->setShortcut(QKeySequence(QStringLiteral("Ctrl+Alt+K")));
    QAction *quit = nullptr;
    for (QAction *action : window->findChildren<QAction *>()) {
        if (action->menuRole() == QAction::QuitRole)
            quit = action;
    }
    QVERIFY(quit);
    quit->setShortcut(QKeySequence(QStringLiteral("Ctrl+Alt+Q")));

    ShortcutsDialog *dialog = openShortcuts(window);
    QVERIFY(dialog);
    const QMap<QString, QString> rows = rowsOf(dialog);
    QCOMPARE(rows.value(QStringLiteral("Brand new command")),
        QKeySequence(QStringLiteral("Ctrl+Alt+K")).toString(QKeySequence::NativeText));
    QCOMPARE(rows.value(plain(quit->text())),
        QKeySequence(QStringLiteral("Ctrl+Alt+Q")).toString(QKeySequence::NativeText));
    dialog->close();
}

void tst_DesktopIntegration::toolCardsAreButtonsThatExpand()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    bool ok = false;
    const TurnResult turn = askAndWait(*console, QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    ToolCallCard *card = cardNamed(
        console->transcript()->toolCallCards(turn.requestId), QStringLiteral("queryLogistics"));
    QVERIFY(card);
    QAccessibleInterface *accessible = QAccessible::queryAccessibleInterface(card);
    QVERIFY(accessible);
    QCOMPARE(accessible->role(), QAccessible::Button);
    const QString name = accessible->text(QAccessible::Name);
    // Its title in staff words, what it found and how it went (#41 §3).
    QVERIFY2(name.contains(QStringLiteral("Track a shipment"))
                 && name.contains(card->findingText()) && name.contains(card->statusText()),
        qPrintable(name));
    QVERIFY(!card->findingText().isEmpty());
    QVERIFY(accessible->state().expandable);
    QVERIFY(accessible->state().collapsed);
    QVERIFY(!accessible->state().expanded);

    // Pressed by assistive technology, as by a click: it expands, and says so.
    QAccessibleActionInterface *actions = accessible->actionInterface();
    QVERIFY(actions);
    QVERIFY(actions->actionNames().contains(QAccessibleActionInterface::pressAction()));
    actions->doAction(QAccessibleActionInterface::pressAction());
    QVERIFY(card->isExpanded());
    QVERIFY(accessible->state().expanded);
    QVERIFY(!accessible->state().collapsed);
    // A click collapses it again; the state follows the card, not the last action.
    QTest::mouseClick(card, Qt::LeftButton, {}, QPoint(8, 8));
    QVERIFY(!card->isExpanded());
    QVERIFY(accessible->state().collapsed);
}

void tst_DesktopIntegration::theMainControlsHaveNames()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    const struct
    {
        QWidget *widget;
        QAccessible::Role role;
        QString name;
    } controls[] = {
        {window->questionInput(), QAccessible::EditableText, QStringLiteral("Question")},
        {window->sendButton(), QAccessible::Button, QStringLiteral("Send")},
        {window->cancelButton(), QAccessible::Button, QStringLiteral("Cancel")},
        {window->transcript(), QAccessible::NoRole, QStringLiteral("Conversation")},
    };
    for (const auto &control : controls) {
        QAccessibleInterface *accessible = QAccessible::queryAccessibleInterface(control.widget);
        QVERIFY(accessible);
        QCOMPARE(accessible->text(QAccessible::Name), control.name);
        if (control.role != QAccessible::NoRole)
            QCOMPARE(accessible->role(), control.role);
    }
}

// #41 §5 and §6: a notice closes with its own button and goes with the conversation it was
// about; the shortcuts staff need are on the actions F1 lists.
void tst_DesktopIntegration::everyNoticeClosesAndTheShortcutsAreListed()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    ConsoleWindow *window = console->window.get();
    NoticeBanner *banner = window->noticeBanner();
    banner->showNotice(QStringLiteral("The export was not opened"), QStringLiteral("detail"),
                       Tone::Danger);
    QVERIFY(!banner->isHidden());
    QVERIFY(!banner->closeButton()->isHidden());
    QTest::mouseClick(banner->closeButton(), Qt::LeftButton);
    QVERIFY(banner->isHidden());
    banner->showNotice(QStringLiteral("The export was not opened"), {}, Tone::Danger);
    QTest::keySequence(window, QKeySequence::New); // a new conversation
    QTRY_VERIFY(banner->isHidden());

    const QStringList names{QStringLiteral("searchHistoryAction"),
                            QStringLiteral("confirmWaitingAction"),
                            QStringLiteral("declineWaitingAction"),
                            QStringLiteral("exportConversationAction"),
                            QStringLiteral("connectionSettingsAction"),
                            QStringLiteral("diagnosticsAction"),
                            QStringLiteral("historyAction"),
                            QStringLiteral("mcpServersAction"),
                            QStringLiteral("staffLayoutAction"),
                            QStringLiteral("qaLayoutAction")};
    for (const QString &name : names) {
        auto *action = window->findChild<QAction *>(name);
        QVERIFY2(action && !action->shortcut().isEmpty(), qPrintable(name));
    }
    // The search shortcut puts the cursor in History's search box.
    QTest::keySequence(window, QKeySequence::Find);
    QTRY_VERIFY(window->historySidebar()->searchBox()->hasFocus());
    // The QA layout shows the instruments; the staff layout puts them away.
    QTest::keySequence(window, QKeySequence(QStringLiteral("Ctrl+Shift+2")));
    QTRY_VERIFY(window->diagnosticsDock()->isVisible());
    QTest::keySequence(window, QKeySequence(QStringLiteral("Ctrl+Shift+1")));
    QTRY_VERIFY(!window->diagnosticsDock()->isVisible());
}

QTEST_MAIN(tst_DesktopIntegration)
#include "tst_desktopintegration.moc"
