// The console window's instruments for presenters and testers: the fault panel, the policy
// editor and the scenarios (docks and menus), and the title and badge that say faults or
// custom policies are in force, so that nobody mistakes a demo for an outage. Kept apart from
// consolewindow.cpp, which holds the conversation.
#include "consolewindow.h"
#include "conversationroom.h"

#include "ui/diagnostics/diagnosticsdock.h"
#include "ui/faults/faultpanel.h"
#include "ui/faults/policyeditor.h"
#include "ui/faults/scenariopanel.h"
#include "ui/common/statuschip.h"
#include "ui/window/consolelanguage.h"

#include "ui/common/noticebanner.h"
#include "ui/common/staffwords.h"
#include "ui/export/conversationexporter.h"
#include "ui/history/historysidebar.h"
#include "ui/transcript/transcriptview.h"

#include "core/console/activeconnection.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/faultsandpolicies.h"
#include "core/console/runtimemonitor.h"
#include "core/console/toolpolicies.h"
#include "core/scenarios/scenariorunner.h"
#include "core/turn/agentloop.h"
#include "core/turn/finishedturns.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>

#include <algorithm>

namespace AgentConsole {

void ConsoleWindow::buildPanels()
{
    // Each panel takes the services it works with, never the runtime.
    m_faultPanel = new FaultPanel(m_runtime->faults(), m_runtime->policies(),
                                  m_runtime->connection(), this);
    m_policyEditor = new PolicyEditor(m_runtime->policies(), this);
    // Another backend or model: the registry was built anew.
    connect(m_runtime->connection(), &ActiveConnection::settingsChanged, m_policyEditor,
            &PolicyEditor::refresh);
    addDockWidget(Qt::RightDockWidgetArea, m_faultPanel);
    addDockWidget(Qt::RightDockWidgetArea, m_policyEditor);
    tabifyDockWidget(m_faultPanel, m_policyEditor);
    // Hidden until asked for: the conversation keeps the window's width by default.
    m_faultPanel->hide();
    m_policyEditor->hide();

    QMenu *faults = menuBar()->addMenu(tr("F&aults"));
    QAction *showFaults = m_faultPanel->toggleViewAction();
    showFaults->setText(tr("&Fault panel"));
    showFaults->setShortcut(QKeySequence(tr("Ctrl+Shift+F")));
    faults->addAction(showFaults);
    QAction *showPolicies = m_policyEditor->toggleViewAction();
    showPolicies->setText(tr("&Retry policies"));
    showPolicies->setShortcut(QKeySequence(tr("Ctrl+Shift+P")));
    faults->addAction(showPolicies);
    faults->addSeparator();
    QAction *clear = faults->addAction(tr("&Clear all faults"));
    clear->setObjectName(QStringLiteral("clearAllFaultsAction"));
    connect(clear, &QAction::triggered, m_faultPanel, &FaultPanel::clearAllFaults);
    QAction *resetPolicies = faults->addAction(tr("Reset all retry &policies"));
    resetPolicies->setObjectName(QStringLiteral("resetPoliciesAction"));
    connect(resetPolicies, &QAction::triggered, m_runtime->policies(),
            &ToolPolicies::resetPolicies);

    buildScenarios();

    // A dock opened from the menu or its shortcut comes to the front with the keyboard in it.
    for (QDockWidget *dock :
         {static_cast<QDockWidget *>(m_faultPanel), static_cast<QDockWidget *>(m_policyEditor),
          static_cast<QDockWidget *>(m_scenarioPanel)}) {
        connect(dock->toggleViewAction(), &QAction::triggered, dock, [dock](bool shown) {
            if (!shown)
                return;
            dock->raise();
            dock->setFocus(Qt::ShortcutFocusReason);
        });
        connect(dock, &QDockWidget::visibilityChanged, this, [this, dock](bool visible) {
            if (visible)
                giveRoomTo(dock);
        });
    }

    connect(m_runtime->faults(), &FaultControl::faultsChanged, this,
            &ConsoleWindow::refreshFaultMarkers);
    connect(m_runtime->policies(), &ToolPolicies::changed, this,
            &ConsoleWindow::refreshFaultMarkers);
}

// The Scenarios menu lists the catalogue; choosing one runs it in the panel, which shows
// which is running and its verdict. While one runs the loop is the scenario's: the window
// asks nothing meanwhile, and Cancel stops the scenario.
void ConsoleWindow::buildScenarios()
{
    // The runner works on the runtime itself (its faults, policies, recovery and loop); the
    // panel only starts and shows it.
    m_scenarioPanel = new ScenarioPanel(new ScenarioRunner(m_runtime, this), m_runtime->faults(),
                                        this);
    // The window is made in the language installed: its runs ask in it too.
    m_scenarioPanel->setLanguage(ConsoleLanguage::currentLanguage());
    addDockWidget(Qt::RightDockWidgetArea, m_scenarioPanel);
    tabifyDockWidget(m_policyEditor, m_scenarioPanel);
    m_scenarioPanel->hide();

    QMenu *menu = menuBar()->addMenu(tr("Sce&narios"));
    menu->setObjectName(QStringLiteral("scenariosMenu"));
    menu->setToolTipsVisible(true); // what each scenario shows, before it is run
    QAction *showPanel = m_scenarioPanel->toggleViewAction();
    showPanel->setText(tr("Scenarios &panel"));
    showPanel->setShortcut(QKeySequence(tr("Ctrl+Shift+S")));
    menu->addAction(showPanel);
    QAction *open = menu->addAction(tr("&Open scenario file…"));
    connect(open, &QAction::triggered, this, [this] {
        m_scenarioPanel->show();
        m_scenarioPanel->raise();
        QMetaObject::invokeMethod(m_scenarioPanel->findChild<QPushButton *>(
                                      QStringLiteral("openScenarioFileButton")),
                                  "click", Qt::QueuedConnection);
    });
    menu->addSeparator();
    for (const QString &name : m_scenarioPanel->scenarioNames()) {
        QAction *run = menu->addAction(m_scenarioPanel->scenarioTitle(name));
        run->setObjectName(QStringLiteral("scenario_") + name);
        run->setToolTip(m_scenarioPanel->scenarioDescription(name));
        connect(run, &QAction::triggered, this, [this, name] {
            m_scenarioPanel->show();
            m_scenarioPanel->raise();
            m_scenarioPanel->runScenario(name);
        });
    }
    connect(m_scenarioPanel, &ScenarioPanel::runningChanged, this, [menu, this](bool running) {
        for (QAction *action : menu->actions()) {
            if (action != m_scenarioPanel->toggleViewAction())
                action->setEnabled(!running);
        }
        // The scenario sets the faults and policies and restores them at its end: edits
        // made meanwhile would be lost, so the panels show them without taking any.
        m_faultPanel->widget()->setEnabled(!running);
        m_policyEditor->widget()->setEnabled(!running);
        showScenarioApart(running);
        refreshFaultMarkers();
        updateControls();
    });
}

// A scenario's turns are never mixed into the staff member's conversation: they run in a
// conversation of their own (ScenarioRunner) and are shown alone while the run lasts; then the
// staff member's conversation is back on screen as it was (the runner carried the loop on in
// it), and the banner says where the run went.
void ConsoleWindow::showScenarioApart(bool running)
{
    if (running) {
        m_conversationBeforeScenario = m_transcript->requestIds().isEmpty()
            ? QString()
            : m_scenarioPanel->setAsideConversation();
        m_scenarioShown = m_scenarioPanel->runningScenario(); // its title, in staff words
        m_transcript->clear(); // the exporter keeps every turn: its export picks by conversation
        showNotice(tr("Scenario run: %1").arg(m_scenarioShown),
                   tr("It runs in a conversation of its own; yours comes back when "
                      "it ends."),
                   Tone::Info);
        return;
    }
    // The staff member's conversation shown again from the turns this window saw finish (the
    // exporter's), so that nothing is read back and "every conversation" keeps the run's.
    m_transcript->clear();
    for (const TurnResult &turn : m_exporter->finishedTurns()->turns()) {
        if (m_conversationBeforeScenario.isEmpty()
            || turn.conversationId != m_conversationBeforeScenario)
            continue;
        m_transcript->addQuestion(turn.requestId, turn.question);
        m_transcript->finishTurn(turn);
    }
    m_conversationBeforeScenario.clear();
    showNotice(tr("Scenario run finished: %1").arg(m_scenarioShown),
               tr("Its turns are in History, marked “Scenario run”; the Scenarios "
                  "panel has its verdict."),
               Tone::Info);
    if (m_history)
        m_history->refresh();
}

// A presenter's panel shares the right dock area with the diagnostics dock; in front, it
// takes three fifths of the height, so that its list and verdict are readable while the breakers
// and counters stay in view above it. It is made as wide as its content needs (its buttons and
// fields whole, no sideways scrolling), leaving the conversation a readable width.
void ConsoleWindow::giveRoomTo(QDockWidget *dock)
{
    if (dock->isFloating())
        return;
    if (auto *scroll = qobject_cast<QScrollArea *>(dock->widget()); scroll && scroll->widget()) {
        const QWidget *inside = scroll->widget();
        const int content = std::max(inside->minimumSizeHint().width(), inside->minimumWidth())
            + scroll->verticalScrollBar()->sizeHint().width() + 2 * scroll->frameWidth();
        // Never so wide that the conversation would have less than a readable width: the
        // panel then stays narrower, or moves below it (ConversationRoom) when it cannot.
        const int room = centralWidget()->width() + dock->width()
            - ConversationRoom::readableWidth(centralWidget());
        const int needed = std::min(content + dock->width() - scroll->width(), room);
        if (dock->width() < needed)
            resizeDocks({dock}, {needed}, Qt::Horizontal);
    }
    if (!m_diagnostics || !m_diagnostics->isVisible() || m_diagnostics->isFloating()
        || dock->isFloating() || dockWidgetArea(dock) != dockWidgetArea(m_diagnostics))
        return;
    const int height = m_diagnostics->height() + dock->height();
    resizeDocks({m_diagnostics, dock}, {height * 2 / 5, height - height * 2 / 5}, Qt::Vertical);
}

void ConsoleWindow::cancelScenario()
{
    m_scenarioPanel->cancel();
}

bool ConsoleWindow::isScenarioRunning() const
{
    return m_scenarioPanel && m_scenarioPanel->isRunning();
}

// The title and the badge say what is not normal: faults in force, tools whose retry policy
// is not the default. Both read core's state; the panel is only one way of changing it.
void ConsoleWindow::refreshFaultMarkers()
{
    const FaultControl &inForce = *m_runtime->faults();
    const ToolPolicies &policies = *m_runtime->policies();
    const int faults = inForce.hasActiveFaults() ? std::max(1, inForce.plan().activeFaultCount())
                                                 : 0;
    const QStringList custom = policies.toolsWithCustomPolicy();

    QStringList marks;
    // A demo under way says so too, whichever dock is in front.
    if (isScenarioRunning())
        marks.append(tr("SCENARIO: %1").arg(m_scenarioPanel->runningScenario()));
    if (faults > 0)
        marks.append(tr("FAULTS ACTIVE"));
    if (!custom.isEmpty())
        marks.append(tr("CUSTOM RETRY POLICY"));
    // Who is asking, within which tenant: staff with two consoles open (two tenants, or a
    // colleague's account) see which is which. The product's name is the application's
    // display name, which the window system adds once (ConsoleLanguage::install).
    const RuntimeStatus status = m_runtime->monitor()->status();
    const QString who = status.staffUserId.isEmpty()
        ? QString()
        : tr("%1 (%2) \u00b7 %3")
              .arg(status.staffName.isEmpty() ? status.staffUserId : status.staffName,
                   status.staffUserId, status.tenantId);
    const QString flagged = marks.join(QStringLiteral(", "));
    setWindowTitle(marks.isEmpty()     ? who
                       : who.isEmpty() ? flagged
                                       : tr("%1 \u2014 %2").arg(who, flagged));

    QStringList badge;
    if (faults > 0)
        badge.append(tr("%n fault(s)", nullptr, faults));
    if (!custom.isEmpty())
        badge.append(tr("%n custom policy(s)", nullptr, int(custom.size())));
    m_faultChip->setVisible(!badge.isEmpty());
    m_faultChip->setStatus(badge.join(QStringLiteral(" \u00b7 ")), Tone::Warning);

    QStringList detail;
    const QString summary = inForce.summary(true);
    if (faults > 0)
        detail.append(tr("Faults in force: %1").arg(summary));
    for (const QString &tool : custom) {
        detail.append(tr("%1 (%2): %3")
                          .arg(FaultPanel::toolLabel(m_loop, tool), tool,
                               StaffWords::policy(policies.policy(tool))));
    }
    detail.append(tr("Faults menu: the fault panel, the retry policies, Clear all faults."));
    m_faultChip->setToolTip(detail.join(QLatin1Char('\n')));
}

} // namespace AgentConsole
