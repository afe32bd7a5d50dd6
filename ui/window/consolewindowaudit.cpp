// The console window's audit part (docs/AUDIT.md): View › Audit trail, the read-only view of
// every write's confirmation and outcome. Apart from consolewindow.cpp, which holds the
// conversation.
#include "consolewindow.h"

#include "ui/audit/audittraildock.h"

#include "core/console/agentruntime.h"

#include <QAction>
#include <QMenu>
#include <QMenuBar>

namespace AgentConsole {

void ConsoleWindow::buildAudit()
{
    m_audit = new AuditTrailDock(m_runtime->audit(), this);
    addDockWidget(Qt::BottomDockWidgetArea, m_audit);
    m_audit->hide(); // the conversation keeps the window until asked for
    QAction *show = m_audit->toggleViewAction();
    show->setObjectName(QStringLiteral("auditTrailAction"));
    show->setText(tr("&Audit trail"));
    show->setShortcut(QKeySequence(tr("Ctrl+Shift+A")));
    if (auto *view = menuBar()->findChild<QMenu *>(QStringLiteral("viewMenu")))
        view->addAction(show);
}

} // namespace AgentConsole
