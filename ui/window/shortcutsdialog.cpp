#include "shortcutsdialog.h"

#include <QAbstractButton>
#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSet>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace AgentConsole {

namespace {

QString withoutMnemonic(QString text)
{
    // "&&" is a literal ampersand; a single "&" marks the mnemonic. A translation that has
    // no letter of its own carries it in brackets ("对话(&C)"): they go with it.
    static const QRegularExpression bracketed(QStringLiteral(R"(\s*\(&[^&]\))"));
    text.remove(bracketed);
    text.replace(QStringLiteral("&&"), QStringLiteral("\x01"));
    text.remove(QLatin1Char('&'));
    text.replace(QLatin1Char('\x01'), QLatin1Char('&'));
    return text;
}

QString keysOf(const QList<QKeySequence> &sequences)
{
    QStringList keys;
    for (const QKeySequence &sequence : sequences) {
        if (!sequence.isEmpty())
            keys.append(sequence.toString(QKeySequence::NativeText));
    }
    return keys.join(QStringLiteral(", "));
}

void collectMenu(const QMenu *menu, const QString &group, QList<ShortcutsDialog::Entry> *entries,
                 QSet<const QAction *> *seen)
{
    for (QAction *action : menu->actions()) {
        if (action->isSeparator() || seen->contains(action))
            continue;
        seen->insert(action);
        if (const QMenu *submenu = action->menu()) {
            collectMenu(submenu, group + QStringLiteral(" › ") + withoutMnemonic(submenu->title()),
                        entries, seen);
            continue;
        }
        const QString keys = keysOf(action->shortcuts());
        if (!keys.isEmpty())
            entries->append({group, withoutMnemonic(action->text()), keys});
    }
}

} // namespace

QList<ShortcutsDialog::Entry> ShortcutsDialog::shortcutsOf(const QMainWindow *window)
{
    QList<Entry> entries;
    QSet<const QAction *> seen;
    for (QAction *top : window->menuBar()->actions()) {
        if (const QMenu *menu = top->menu()) {
            seen.insert(top);
            collectMenu(menu, withoutMnemonic(menu->title()), &entries, &seen);
        }
    }
    // Actions outside the menus (added to the window or a widget) and buttons with a key.
    const QString windowGroup = tr("Window");
    for (const QAction *action : window->findChildren<QAction *>()) {
        if (seen.contains(action) || action->isSeparator() || action->menu())
            continue;
        const QString keys = keysOf(action->shortcuts());
        if (!keys.isEmpty())
            entries.append({windowGroup, withoutMnemonic(action->text()), keys});
    }
    for (const QAbstractButton *button : window->findChildren<QAbstractButton *>()) {
        // A button's Alt+letter is underlined on the button itself; only a key of its own
        // (Esc for Cancel) is worth a row.
        const QKeySequence key = button->shortcut();
        if (key.isEmpty() || key == QKeySequence::mnemonic(button->text()))
            continue;
        entries.append({windowGroup, withoutMnemonic(button->text()), keysOf({key})});
    }
    return entries;
}

ShortcutsDialog::ShortcutsDialog(QMainWindow *window, QWidget *parent)
    : QDialog(parent)
{
    Q_ASSERT(window);
    setWindowTitle(tr("Keyboard shortcuts"));
    setObjectName(QStringLiteral("shortcutsDialog"));

    m_list = new QTreeWidget(this);
    m_list->setObjectName(QStringLiteral("shortcutsList"));
    m_list->setAccessibleName(tr("Keyboard shortcuts"));
    m_list->setColumnCount(2);
    m_list->setHeaderLabels({tr("Command"), tr("Shortcut")});
    m_list->setRootIsDecorated(false);
    m_list->setSelectionMode(QAbstractItemView::NoSelection);
    m_list->setUniformRowHeights(true);

    QTreeWidgetItem *group = nullptr;
    for (const Entry &entry : shortcutsOf(window)) {
        if (!group || group->text(0) != entry.group) {
            group = new QTreeWidgetItem(m_list, {entry.group});
            QFont bold = group->font(0);
            bold.setBold(true);
            group->setFont(0, bold);
            group->setFirstColumnSpanned(true);
        }
        new QTreeWidgetItem(group, {entry.command, entry.shortcut});
    }
    m_list->expandAll();
    m_list->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_list->header()->setStretchLastSection(true);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_list);
    layout->addWidget(buttons);
    const QFontMetrics metrics = fontMetrics();
    resize(metrics.averageCharWidth() * 64, metrics.height() * 24);
}

void addHelpMenu(QMainWindow *window)
{
    QMenu *help = window->menuBar()->addMenu(ShortcutsDialog::tr("&Help"));
    help->setObjectName(QStringLiteral("helpMenu"));
    QAction *shortcuts = help->addAction(ShortcutsDialog::tr("&Keyboard shortcuts"));
    shortcuts->setObjectName(QStringLiteral("keyboardShortcutsAction"));
    shortcuts->setShortcut(QKeySequence::HelpContents);
    QObject::connect(shortcuts, &QAction::triggered, window, [window] {
        // Made anew each time, from the actions as they are now.
        auto *dialog = new ShortcutsDialog(window, window);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->open();
    });
}

} // namespace AgentConsole
