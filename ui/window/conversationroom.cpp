#include "conversationroom.h"

#include <QDockWidget>
#include <QEvent>
#include <QMainWindow>
#include <QTimer>

namespace AgentConsole {

ConversationRoom::ConversationRoom(QMainWindow *window, QWidget *conversation)
    : QObject(window)
    , m_window(window)
    , m_conversation(conversation)
{
    // Every cause (the window resized, a panel shown, moved or widened) ends in the
    // conversation's own resize.
    conversation->installEventFilter(this);
}

int ConversationRoom::readableWidth(const QWidget *conversation)
{
    constexpr int kCharacters = 64;
    constexpr int kMargins = 2 * 20 + 16; // the column's side margins and its scroll bar
    return conversation->fontMetrics().averageCharWidth() * kCharacters + kMargins;
}

bool ConversationRoom::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_conversation && event->type() == QEvent::Resize)
        scheduleCheck();
    return QObject::eventFilter(watched, event);
}

// After the main window's layout has settled: a resize arrives in the middle of it, and
// moving docks there would start another.
void ConversationRoom::scheduleCheck()
{
    if (m_checkScheduled)
        return;
    m_checkScheduled = true;
    QTimer::singleShot(0, this, [this] {
        m_checkScheduled = false;
        check();
    });
}

void ConversationRoom::check()
{
    if (!m_window->isVisible())
        return;
    const int width = m_conversation->width();
    if (width < readableWidth(m_conversation)) {
        // The instruments on the right go first; History, on the left, only if that is not
        // enough (a narrow window).
        QList<QDockWidget *> panels = sidePanels(Qt::RightDockWidgetArea);
        if (panels.isEmpty())
            panels = sidePanels(Qt::LeftDockWidgetArea);
        if (!panels.isEmpty())
            moveBelow(panels);
    } else if (panelsMovedBelow() && width >= m_widthNeededBeside) {
        moveBack();
    }
}

QList<QDockWidget *> ConversationRoom::sidePanels(Qt::DockWidgetArea area) const
{
    QList<QDockWidget *> panels;
    for (QDockWidget *dock : m_window->findChildren<QDockWidget *>(Qt::FindDirectChildrenOnly)) {
        if (dock->isVisible() && !dock->isFloating() && m_window->dockWidgetArea(dock) == area)
            panels.append(dock);
    }
    return panels;
}

void ConversationRoom::moveBelow(const QList<QDockWidget *> &panels)
{
    if (!panelsMovedBelow()) {
        m_sideBySide = m_window->saveState();
        m_widthNeededBeside = readableWidth(m_conversation);
    }
    // Panels tabbed together or stacked share their width: the area's, not their sum. A tab
    // behind another is "visible" to Qt but kept out of sight, its geometry meaningless.
    QRect area;
    for (const QDockWidget *dock : panels) {
        if (m_window->rect().intersects(dock->geometry()))
            area |= dock->geometry();
    }
    m_widthNeededBeside += area.width();
    // Tabbed with what is below already, if anything: one row of panels under the conversation.
    QDockWidget *below = nullptr;
    for (QDockWidget *dock : m_window->findChildren<QDockWidget *>(Qt::FindDirectChildrenOnly)) {
        if (!panels.contains(dock) && dock->isVisible() && !dock->isFloating()
            && m_window->dockWidgetArea(dock) == Qt::BottomDockWidgetArea) {
            below = dock;
            break;
        }
    }
    QDockWidget *first = panels.first();
    if (below) {
        m_window->tabifyDockWidget(below, first);
    } else {
        m_window->addDockWidget(Qt::BottomDockWidgetArea, first);
        m_window->resizeDocks({first}, {m_window->height() * 2 / 5}, Qt::Vertical);
    }
    for (QDockWidget *dock : panels.mid(1))
        m_window->tabifyDockWidget(first, dock);
    first->raise();
}

void ConversationRoom::moveBack()
{
    // The layout as it was, with each panel shown or hidden as staff have it now.
    QList<QPair<QDockWidget *, bool>> shown;
    for (QDockWidget *dock : m_window->findChildren<QDockWidget *>(Qt::FindDirectChildrenOnly))
        shown.append({dock, dock->isVisible()});
    const QByteArray state = std::exchange(m_sideBySide, {});
    m_window->restoreState(state);
    for (const auto &[dock, visible] : std::as_const(shown))
        dock->setVisible(visible);
}

} // namespace AgentConsole
