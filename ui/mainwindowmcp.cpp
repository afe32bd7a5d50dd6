// The console window's MCP parts (docs/MCP.md): View › MCP servers, and Settings › MCP tool
// policies, whose choices go to the running runtime and into the stored settings. Apart from
// mainwindow.cpp, which holds the conversation.
#include "mainwindow.h"

#include "mcppolicydialog.h"
#include "mcpserversdock.h"
#include "noticebanner.h"

#include "core/agent/agentruntime.h"
#include "core/agent/consolesettings.h"

#include <QAction>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>

namespace AgentConsole {

void ConsoleWindow::buildMcp()
{
    m_mcpServers = new McpServersDock(m_runtime, this);
    addDockWidget(Qt::RightDockWidgetArea, m_mcpServers);
    m_mcpServers->hide(); // the conversation keeps the window's width until asked for
    QAction *show = m_mcpServers->toggleViewAction();
    show->setObjectName(QStringLiteral("mcpServersAction"));
    show->setText(tr("&MCP servers"));
    if (auto *view = menuBar()->findChild<QMenu *>(QStringLiteral("viewMenu")))
        view->addAction(show);

    if (auto *settings = menuBar()->findChild<QMenu *>(QStringLiteral("settingsMenu"))) {
        QAction *policies = settings->addAction(tr("MCP &tool policies…"));
        policies->setObjectName(QStringLiteral("mcpPoliciesAction"));
        connect(policies, &QAction::triggered, this, &ConsoleWindow::openMcpToolPolicies);
    }
}

void ConsoleWindow::openMcpToolPolicies()
{
    const QList<McpServerStatus> servers = m_runtime->isReady() ? m_runtime->status().mcpServers
                                                                : QList<McpServerStatus>();
    auto *dialog = new McpPolicyDialog(servers, m_runtime->mcpToolPolicies(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &McpPolicyDialog::applyRequested, this, [this, dialog] {
        const QMap<QString, QString> chosen = dialog->policies();
        QString error;
        if (!m_runtime->setMcpToolPolicies(chosen, &error)) {
            dialog->showProblem(error);
            return;
        }
        dialog->accept();
        if (m_storedSettings && !m_storedSettings->saveMcpToolPolicies(chosen, &error)) {
            showNotice(tr("The MCP tool policies apply now but were not saved"), error,
                       Tone::Warning);
            return;
        }
        statusBar()->showMessage(tr("MCP tool policies applied; they hold from each tool's "
                                    "next call."),
                                 8000);
    });
    dialog->open();
}

} // namespace AgentConsole
