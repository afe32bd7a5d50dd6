// The console window and the team's managed policy (docs/POLICY.md): which policy is in force,
// in the status bar, and the stored settings it locks. Core decides what is locked and words
// it; the window shows it.
#include "consolewindow.h"

#include "ui/common/policylock.h"

#include "core/console/agentruntime.h"
#include "core/console/consolesettings.h"
#include "core/console/teampolicy.h"

#include <QHBoxLayout>
#include <QLabel>

namespace AgentConsole {

QWidget *ConsoleWindow::buildTeamPolicyBadge(QWidget *bar)
{
    m_teamPolicyBadge = new QWidget(bar);
    m_teamPolicyBadge->setObjectName(QStringLiteral("teamPolicyBadge"));
    auto *layout = new QHBoxLayout(m_teamPolicyBadge);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    auto *lock = new PolicyLock(QString(), m_teamPolicyBadge);
    auto *words = new QLabel(m_teamPolicyBadge);
    words->setObjectName(QStringLiteral("teamPolicyLabel"));
    words->setTextFormat(Qt::PlainText);
    layout->addWidget(lock);
    layout->addWidget(words);
    m_teamPolicyBadge->setVisible(false); // no policy: the bar as it always was
    return m_teamPolicyBadge;
}

void ConsoleWindow::showTeamPolicy()
{
    const TeamPolicy *team = m_runtime->teamPolicy();
    if (!team->inForce())
        return;
    // The settings it locks keep their values in force in the stored settings too: a save
    // from the dialog never writes another value over them.
    if (m_storedSettings)
        m_storedSettings->lockTo(*team->policy(), m_runtime->options());
    QStringList locked;
    for (const QString &key : team->policy()->locked)
        locked.append(TeamPolicy::settingName(key));
    QString tip = team->summary();
    if (!locked.isEmpty())
        tip += QLatin1Char('\n') + tr("Locked: %1").arg(locked.join(tr(", ", "between names")));
    auto *words = m_teamPolicyBadge->findChild<QLabel *>(QStringLiteral("teamPolicyLabel"));
    words->setText(tr("Team policy %1").arg(team->version()));
    auto *lock = m_teamPolicyBadge->findChild<PolicyLock *>();
    lock->setToolTip(tip);
    lock->setAccessibleName(team->summary());
    m_teamPolicyBadge->setToolTip(tip);
    words->setToolTip(tip);
    m_teamPolicyBadge->setVisible(true);
}

} // namespace AgentConsole
