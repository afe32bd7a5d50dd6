#pragma once

#include <QByteArray>
#include <QObject>
#include <Qt>

class QDockWidget;
class QMainWindow;
class QWidget;

namespace AgentConsole {

// Keeps the conversation column at least a readable width (#41 §4): when the panels beside it
// would squeeze it below that (a QA layout on a 1024 px screen, a panel made wide, a narrow
// window), the side panels move below the conversation, tabbed together; once the window has
// room for them beside it again, they go back where they were. A panel staff floated is left
// floating, and one they put below themselves stays there.
class ConversationRoom final : public QObject
{
public:
    ConversationRoom(QMainWindow *window, QWidget *conversation);

    // About 64 average characters of the conversation's font and its margins: a line of an
    // answer, the question box's hint whole.
    static int readableWidth(const QWidget *conversation);
    bool panelsMovedBelow() const { return !m_sideBySide.isEmpty(); }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void scheduleCheck();
    void check();
    QList<QDockWidget *> sidePanels(Qt::DockWidgetArea area) const;
    void moveBelow(const QList<QDockWidget *> &panels);
    void moveBack();

    QMainWindow *m_window;
    QWidget *m_conversation;
    QByteArray m_sideBySide; // the window's dock layout before the panels moved below
    int m_widthNeededBeside = 0; // the conversation's width at which they fit beside it again
    bool m_checkScheduled = false;
};

} // namespace AgentConsole
