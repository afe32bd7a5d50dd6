#pragma once

#include <QDialog>
#include <QList>
#include <QString>

class QMainWindow;
class QTreeWidget;

namespace AgentConsole {

// Help › Keyboard shortcuts: every shortcut of a main window, read from the window's own
// actions (by menu, in menu order) and buttons when the dialog is made, so that the list
// never goes stale when an action or its shortcut changes.
class ShortcutsDialog final : public QDialog
{
    Q_OBJECT

public:
    struct Entry
    {
        QString group; // the menu, or "Window" for an action or button outside the menus
        QString command; // the action's text without its mnemonic
        QString shortcut; // every key sequence, in the platform's words
    };

    explicit ShortcutsDialog(QMainWindow *window, QWidget *parent = nullptr);

    static QList<Entry> shortcutsOf(const QMainWindow *window);
    QTreeWidget *list() const { return m_list; }

private:
    QTreeWidget *m_list = nullptr;
};

// Adds the Help menu with "Keyboard shortcuts" (F1), which opens the dialog on the window.
void addHelpMenu(QMainWindow *window);

} // namespace AgentConsole
