// The console window's MCP parts (docs/MCP.md): View › MCP servers, and Settings › MCP tool
// policies, whose choices go to the running runtime and into the stored settings. Apart from
// consolewindow.cpp, which holds the conversation.
#include "consolewindow.h"

#include "ui/mcp/mcppolicydialog.h"
#include "ui/mcp/mcpquestiondialog.h"
#include "ui/mcp/mcpserversdock.h"
#include "ui/common/noticebanner.h"

#include "core/console/agentruntime.h"
#include "core/console/mcpservers.h"
#include "core/console/runtimemonitor.h"
#include "core/console/consolesettings.h"

#include <QAction>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>

namespace AgentConsole {

void ConsoleWindow::buildMcp()
{
    m_mcpServers = new McpServersDock(m_runtime->mcp(), m_runtime->monitor(),
                                      m_runtime->options().dataDirectory, this);
    addDockWidget(Qt::RightDockWidgetArea, m_mcpServers);
    m_mcpServers->hide(); // the conversation keeps the window's width until asked for
    QAction *show = m_mcpServers->toggleViewAction();
    show->setObjectName(QStringLiteral("mcpServersAction"));
    show->setText(tr("&MCP servers"));
    show->setShortcut(QKeySequence(tr("Ctrl+Shift+M")));
    if (auto *view = menuBar()->findChild<QMenu *>(QStringLiteral("viewMenu")))
        view->addAction(show);

    if (auto *settings = menuBar()->findChild<QMenu *>(QStringLiteral("settingsMenu"))) {
        QAction *policies = settings->addAction(tr("MCP &tool policies…"));
        policies->setObjectName(QStringLiteral("mcpPoliciesAction"));
        connect(policies, &QAction::triggered, this, &ConsoleWindow::openMcpToolPolicies);
    }
    // Servers' questions to staff: connected here, so the runtime knows someone can answer.
    connect(m_runtime->mcp(), &McpServers::questionAsked, this, &ConsoleWindow::askMcpQuestion);
    connect(m_runtime->mcp(), &McpServers::questionEnded, this,
            &ConsoleWindow::onMcpQuestionEnded);
}

void ConsoleWindow::askMcpQuestion(const QString &id, const McpQuestion &question)
{
    // One dialog a question, beside the conversation (never modal): a turn may ask several.
    auto *dialog = new McpQuestionDialog(id, question, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    m_mcpQuestions.insert(id, dialog);
    connect(dialog, &McpQuestionDialog::answered, this,
            [this, dialog](const QString &question, McpAnswer action, const QJsonObject &content) {
                McpAnswerProblem problem;
                if (!m_runtime->mcp()->answer(question, action, content, &problem)) {
                    if (problem.isProblem()) {
                        dialog->showProblem(problem);
                        return;
                    }
                    dialog->withdraw(); // it had ended meanwhile
                }
            });
    connect(dialog, &QObject::destroyed, this, [this, id] { m_mcpQuestions.remove(id); });
    dialog->show();
    dialog->raise();
    statusBar()->showMessage(tr("%1 asks you a question").arg(question.server), 8000);
}

void ConsoleWindow::onMcpQuestionEnded(const QString &id, McpQuestionEnd how)
{
    const QPointer<McpQuestionDialog> dialog = m_mcpQuestions.take(id);
    if (!dialog)
        return;
    if (how != McpQuestionEnd::Answered)
        statusBar()->showMessage(how == McpQuestionEnd::Withdrawn
                                     ? tr("A question was withdrawn: its tool call ended "
                                          "before an answer")
                                     : tr("A question was taken back by its server"),
                                 8000);
    dialog->withdraw();
}

QList<McpQuestionDialog *> ConsoleWindow::mcpQuestionDialogs() const
{
    QList<McpQuestionDialog *> open;
    for (const QPointer<McpQuestionDialog> &dialog : m_mcpQuestions) {
        if (dialog)
            open.append(dialog);
    }
    return open;
}

void ConsoleWindow::openMcpToolPolicies()
{
    const QList<McpServerStatus> servers = m_runtime->isReady()
        ? m_runtime->monitor()->status().mcpServers
        : QList<McpServerStatus>();
    auto *dialog = new McpPolicyDialog(servers, m_runtime->mcp()->toolPolicies(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (const QString locked = m_runtime->mcp()->toolPoliciesLockRefusal(); !locked.isEmpty())
        dialog->setLocked(locked); // docs/POLICY.md
    connect(dialog, &McpPolicyDialog::applyRequested, this, [this, dialog] {
        const QMap<QString, QString> chosen = dialog->policies();
        QString error;
        if (!m_runtime->mcp()->setToolPolicies(chosen, &error)) {
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
