// The console window's team part (docs/TEAM.md): where the console keeps what a team shares,
// told in the status bar, and the question a start asks when the team's database cannot be
// reached. Apart from consolewindow.cpp, which holds the conversation.
#include "consolewindow.h"

#include "ui/common/noticebanner.h"
#include "ui/common/statuschip.h"

#include "core/console/agentruntime.h"
#include "core/console/runtimemonitor.h"

#include <QPushButton>
#include <QToolButton>

namespace AgentConsole {

// The banner and the chip are made with the window; the runtime says which to show.
void ConsoleWindow::buildTeam()
{
    m_teamBanner = new NoticeBanner;
    m_teamBanner->setObjectName(QStringLiteral("teamBanner"));
    m_teamBanner->hide();
    m_teamChip = new StatusChip;
    m_teamChip->setObjectName(QStringLiteral("teamChip"));
    m_teamChip->setVisible(false);
    m_runAloneButton = m_teamBanner->addButton(tr("Work alone on this desk"));
    m_runAloneButton->setObjectName(QStringLiteral("runAloneButton"));
    m_runAloneButton->hide();
    m_quitButton = m_teamBanner->addButton(tr("Quit"));
    m_quitButton->setObjectName(QStringLiteral("quitButton"));
    m_quitButton->hide();
    connect(m_runAloneButton, &QPushButton::clicked, this, [this] {
        m_teamBanner->clearNotice();
        updateBannerRow();
        m_runtime->runAlone();
    });
    connect(m_quitButton, &QPushButton::clicked, this, [this] {
        m_runtime->giveUp();
        close();
    });
    connect(m_teamBanner, &NoticeBanner::closed, this, &ConsoleWindow::updateBannerRow);
    connect(m_runtime, &AgentRuntime::teamUnreachable, this, &ConsoleWindow::onTeamUnreachable);
}

// The start waits for the staff member: never a silent switch to this desk's own store.
void ConsoleWindow::onTeamUnreachable(const QString &reason)
{
    m_banner->clearNotice(); // "Preparing the store…" is over
    m_teamBanner->showNotice(
        tr("The team's database cannot be reached"),
        tr("%1\nYou can work alone on this desk: conversations, writes and the audit trail are "
           "then kept on this machine only, and every export says so. Start again to rejoin "
           "the team.")
            .arg(reason),
        Tone::Danger);
    m_teamBanner->closeButton()->hide(); // an answer is needed
    m_runAloneButton->show();
    m_quitButton->show();
    updateBannerRow();
}

// Once ready: a team console names its database in the status bar; one working alone says so
// there and above the conversation, until it starts again.
void ConsoleWindow::showTeamStatus()
{
    const TeamStatus &team = m_runtime->monitor()->team();
    m_runAloneButton->hide();
    m_quitButton->hide();
    m_teamBanner->closeButton()->show();
    if (team.database.isEmpty()) {
        m_teamChip->setVisible(false);
        return;
    }
    if (team.alone) {
        m_teamChip->setStatus(tr("Working alone"), Tone::Warning);
        m_teamChip->setToolTip(tr("The team's database %1 could not be reached at the start: "
                                  "this desk keeps its own conversations, writes and audit "
                                  "trail until the console starts again.")
                                   .arg(team.database));
        m_teamBanner->showNotice(
            tr("Working alone on this desk"),
            tr("The team's database could not be reached at the start. Conversations, writes "
               "and the audit trail are kept on this machine only; colleagues do not see them, "
               "and exports are marked as made alone. Start again to rejoin the team."),
            Tone::Warning);
    } else {
        m_teamChip->setStatus(tr("Team"), Tone::Info);
        m_teamChip->setToolTip(tr("Conversations, writes and the audit trail are kept on the "
                                  "team's database %1: they follow you to any desk.")
                                   .arg(team.database));
    }
    m_teamChip->setVisible(true);
    updateBannerRow();
}

} // namespace AgentConsole
