#include "consolewindow.h"

#include "conversationroom.h"
#include "ui/common/consolepalette.h"
#include "ui/common/keyboardfocusring.h"
#include "ui/export/conversationexporter.h"
#include "ui/audit/audittraildock.h"
#include "ui/diagnostics/diagnosticsdock.h"
#include "ui/diagnostics/duplicateticketalert.h"
#include "ui/history/historysidebar.h"
#include "ui/history/conversationrestorer.h"
#include "ui/history/interruptedturnsbanner.h"
#include "ui/common/noticebanner.h"
#include "ui/faults/faultpanel.h"
#include "ui/faults/policyeditor.h"
#include "ui/faults/scenariopanel.h"
#include "ui/mcp/mcpserversdock.h"
#include "ui/transcript/confirmationpanel.h"
#include "ui/transcript/questioninput.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/settings/connectionsettingsdialog.h"
#include "shortcutsdialog.h"
#include "ui/common/staffwords.h"
#include "ui/common/statuschip.h"
#include "ui/transcript/transcriptfeed.h"
#include "ui/transcript/transcriptview.h"

#include "core/turn/agentloop.h"
#include "core/console/activeconnection.h"
#include "core/console/agentruntime.h"
#include "core/console/runtimemonitor.h"
#include "core/console/turnrecovery.h"
#include "core/turn/resumequeue.h"
#include "core/console/runtimestatus.h"
#include "core/console/teampolicy.h"
#include "core/turn/turnresult.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QTabBar>
#include <QEvent>
#include <QApplication>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QPainter>
#include <QPushButton>
#include <QStatusBar>
#include <QStyle>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace AgentConsole {

namespace {

QString durationLabel(std::chrono::milliseconds duration)
{
    const qint64 ms = duration.count();
    if (ms % 1000 == 0)
        return QCoreApplication::translate("AgentConsole::ConsoleWindow", "%1 s").arg(ms / 1000);
    return QCoreApplication::translate("AgentConsole::ConsoleWindow", "%1 ms").arg(ms);
}

QFrame *statusSeparator(QWidget *parent)
{
    auto *line = new QFrame(parent);
    line->setFrameShape(QFrame::VLine);
    line->setFrameShadow(QFrame::Sunken);
    return line;
}

} // namespace

namespace Internal {

// A status bar label that gives up width gracefully: it shows as much of its text as fits,
// shortened with an ellipsis, and keeps the full text in text() and in its tooltip.
class StatusLabel final : public QLabel
{
public:
    explicit StatusLabel(Qt::TextElideMode mode, QWidget *parent = nullptr)
        : QLabel(parent)
        , m_mode(mode)
    {
        setTextFormat(Qt::PlainText);
        setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    }

    void setStatusText(const QString &text, const QString &toolTip = {})
    {
        setText(text);
        setToolTip(toolTip.isEmpty() ? text : toolTip);
    }

    // Caps the width the label asks for; it still takes more when the bar has room to spare.
    void setPreferredWidth(int width)
    {
        m_preferredWidth = width;
        updateGeometry();
    }

    QSize sizeHint() const override
    {
        QSize hint = QLabel::sizeHint();
        if (m_preferredWidth > 0)
            hint.setWidth(std::min(hint.width(), m_preferredWidth));
        return hint;
    }

    QSize minimumSizeHint() const override
    {
        return {std::min(QLabel::sizeHint().width(), fontMetrics().averageCharWidth() * 8),
                QLabel::minimumSizeHint().height()};
    }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter painter(this);
        const QRect area = contentsRect();
        const QString shown = fontMetrics().elidedText(text(), m_mode, area.width());
        style()->drawItemText(&painter, area, int(alignment()), palette(), isEnabled(), shown,
                              foregroundRole());
    }

private:
    Qt::TextElideMode m_mode;
    int m_preferredWidth = 0;
};

} // namespace Internal

using Internal::StatusLabel;

ConsoleWindow::ConsoleWindow(AgentRuntime *runtime, QWidget *parent)
    : QMainWindow(parent)
    , m_runtime(runtime)
{
    Q_ASSERT(runtime);
    setWindowTitle(QString()); // the display name says which program it is
    resize(1040, 760);
    setMinimumSize(640, 480);

    m_banner = new NoticeBanner;
    m_banner->setObjectName(QStringLiteral("noticeBanner"));
    m_duplicateAlert = new DuplicateTicketAlert;
    m_duplicateAlert->setObjectName(QStringLiteral("duplicateTicketAlert"));
    m_resumeBanner = new InterruptedTurnsBanner;
    m_resumeBanner->setObjectName(QStringLiteral("interruptedTurnsBanner"));
    buildTeam(); // consolewindowteam.cpp

    m_transcript = new TranscriptView;
    m_transcript->setObjectName(QStringLiteral("transcript"));
    m_transcript->setAccessibleName(tr("Conversation"));

    m_input = new QuestionInput;
    m_transcript->setTypingTarget(m_input);
    m_input->setObjectName(QStringLiteral("questionInput"));
    m_input->setAccessibleName(tr("Question"));

    m_sendButton = new QPushButton(tr("Send"));
    m_sendButton->setObjectName(QStringLiteral("sendButton"));
    m_sendButton->setToolTip(tr("Send the question (Enter)"));
    m_sendButton->setAutoDefault(false);

    m_cancelButton = new QPushButton(tr("Cancel"));
    m_cancelButton->setObjectName(QStringLiteral("cancelButton"));
    m_cancelButton->setToolTip(tr("Stop the running turn and its tools (Esc)"));
    m_cancelButton->setShortcut(QKeySequence(Qt::Key_Escape));
    m_cancelButton->setAutoDefault(false);

    auto *buttons = new QVBoxLayout;
    buttons->setSpacing(6);
    buttons->addStretch(1);
    buttons->addWidget(m_sendButton);
    buttons->addWidget(m_cancelButton);

    auto *composer = new QWidget;
    auto *composerLayout = new QHBoxLayout(composer);
    composerLayout->setContentsMargins(20, 10, 20, 12);
    composerLayout->setSpacing(10);
    composerLayout->addWidget(m_input, 1);
    composerLayout->addLayout(buttons);

    m_divider = new QFrame;
    m_divider->setFrameShape(QFrame::HLine);
    m_divider->setFrameShadow(QFrame::Plain);
    applyColours();

    m_bannerRow = new QWidget;
    auto *bannerLayout = new QVBoxLayout(m_bannerRow);
    bannerLayout->setContentsMargins(20, 12, 20, 0);
    bannerLayout->setSpacing(8);
    bannerLayout->addWidget(m_duplicateAlert); // an alarm goes first
    bannerLayout->addWidget(m_teamBanner);
    bannerLayout->addWidget(m_banner);
    bannerLayout->addWidget(m_resumeBanner);

    auto *central = new QWidget;
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_bannerRow);
    layout->addWidget(m_transcript, 1);
    layout->addWidget(m_divider);
    layout->addWidget(composer);
    setCentralWidget(central);
    new ConversationRoom(this, central); // a child of the window
    KeyboardFocusRing::forApplication();

    QMenu *conversation = menuBar()->addMenu(tr("&Conversation"));
    m_newConversationAction = conversation->addAction(tr("&New conversation"));
    m_newConversationAction->setShortcut(QKeySequence::New);
    connect(m_newConversationAction, &QAction::triggered, this,
            &ConsoleWindow::startNewConversation);
    // The card waiting for an answer, from the keyboard: two keys held, never a stray one.
    QAction *confirm = conversation->addAction(tr("&Confirm the waiting action"));
    confirm->setObjectName(QStringLiteral("confirmWaitingAction"));
    confirm->setShortcut(QKeySequence(tr("Ctrl+Shift+Y")));
    connect(confirm, &QAction::triggered, this, [this] {
        if (ConfirmationPanel *panel = waitingConfirmation();
            panel && panel->confirmButton()->isEnabled())
            panel->confirmButton()->click();
    });
    QAction *decline = conversation->addAction(tr("&Decline the waiting action"));
    decline->setObjectName(QStringLiteral("declineWaitingAction"));
    decline->setShortcut(QKeySequence(tr("Ctrl+Shift+N")));
    connect(decline, &QAction::triggered, this, [this] {
        if (ConfirmationPanel *panel = waitingConfirmation())
            panel->declineButton()->click();
    });
    conversation->addSeparator();
    // Export: the finished turns as JSON or Markdown, and exports opened read-only.
    m_exporter = new ConversationExporter(m_runtime, m_transcript, this);
    m_exporter->addActionsTo(conversation);
    if (auto *exportAction = findChild<QAction *>(QStringLiteral("exportConversationAction")))
        exportAction->setShortcut(QKeySequence(tr("Ctrl+E")));
    // A large export or a slow disk takes its time: the status bar says what is under way.
    connect(m_exporter, &ConversationExporter::writing, this, [this](const QString &path) {
        statusBar()->showMessage(
            tr("Writing the export to %1…").arg(QDir::toNativeSeparators(path)));
    });
    connect(m_exporter, &ConversationExporter::reading, this, [this](const QString &path) {
        statusBar()->showMessage(tr("Reading %1…").arg(QDir::toNativeSeparators(path)));
    });
    connect(m_exporter, &ConversationExporter::opened, statusBar(), &QStatusBar::clearMessage);
    connect(m_exporter, &ConversationExporter::failed, this,
            [this](const QString &title, const QString &reason) {
                statusBar()->clearMessage();
                showNotice(title, reason, Tone::Danger);
            });
    connect(m_exporter, &ConversationExporter::exported, this,
            [this](const QString &path, int turns) {
                statusBar()->showMessage(tr("Exported %n turn(s) to %1", nullptr, turns)
                                             .arg(QDir::toNativeSeparators(path)),
                                         8000);
            });
    conversation->addSeparator();
    QAction *quit = conversation->addAction(tr("&Quit"));
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);
    connect(quit, &QAction::triggered, this, &QWidget::close);

    QMenu *settings = menuBar()->addMenu(tr("&Settings"));
    settings->setObjectName(QStringLiteral("settingsMenu"));
    m_settingsAction = settings->addAction(tr("Model and &backend…"));
    m_settingsAction->setObjectName(QStringLiteral("connectionSettingsAction"));
    m_settingsAction->setShortcut(QKeySequence(tr("Ctrl+,")));
    connect(m_settingsAction, &QAction::triggered, this, &ConsoleWindow::openConnectionSettings);
    // Open also when the start failed: a refused mcp.json is fixed here
    // (consolewindowsettings.cpp).
    QAction *mcpSettings = settings->addAction(tr("&MCP servers (mcp.json)…"));
    mcpSettings->setObjectName(QStringLiteral("mcpConfigAction"));
    connect(mcpSettings, &QAction::triggered, this, &ConsoleWindow::openMcpSettings);

    buildStatusBar();
    m_history = new HistorySidebar(m_newConversationAction, this);
    addDockWidget(Qt::LeftDockWidgetArea, m_history);
    resizeDocks({m_history}, {fontMetrics().averageCharWidth() * 38}, Qt::Horizontal);
    addDiagnosticsDock();
    buildPanels();
    buildMcp(); // consolewindowmcp.cpp
    buildAudit(); // consolewindowaudit.cpp
    if (auto *view = menuBar()->findChild<QMenu *>(QStringLiteral("viewMenu")))
        addLayoutActions(view);
    addHelpMenu(this); // last: Help is the menu bar's last menu

    connect(m_input, &QuestionInput::submitted, this, &ConsoleWindow::sendQuestion);
    connect(m_input, &QPlainTextEdit::textChanged, this, &ConsoleWindow::updateControls);
    connect(m_sendButton, &QPushButton::clicked, this, &ConsoleWindow::sendQuestion);
    connect(m_transcript, &TranscriptView::questionOffered, this, &ConsoleWindow::askOffered);
    // A notice staff closed gives its room back.
    connect(m_banner, &NoticeBanner::closed, this, &ConsoleWindow::updateBannerRow);
    connect(m_cancelButton, &QPushButton::clicked, this, &ConsoleWindow::cancelTurn);
    connect(m_resumeBanner, &InterruptedTurnsBanner::resumeRequested, this,
            &ConsoleWindow::resumeInterruptedTurns);
    connect(m_resumeBanner, &InterruptedTurnsBanner::dismissRequested, this,
            &ConsoleWindow::dismissInterruptedTurns);
    connect(m_runtime, &AgentRuntime::ready, this, &ConsoleWindow::onRuntimeReady);
    connect(m_runtime, &AgentRuntime::failed, this, &ConsoleWindow::onRuntimeFailed);
    connect(m_runtime->monitor(), &RuntimeMonitor::duplicateBusinessObjectsChecked, this,
            &ConsoleWindow::onDuplicatesChecked);
    if (m_runtime->isReady()) {
        onRuntimeReady();
    } else {
        showNotice(tr("Preparing the store…"),
                   tr("The demo store is being opened and checked; you can type your "
                      "question meanwhile."),
                   Tone::Info);
    }
    updateControls();
    fitToScreen(); // consolewindowsettings.cpp
    m_input->setFocus();
}

ConsoleWindow::~ConsoleWindow() = default;

void ConsoleWindow::exportConversation(const QString &path)
{
    m_exporter->exportConversation(path);
}

bool ConsoleWindow::isResuming() const
{
    return m_resumeQueue && m_resumeQueue->isRunning();
}

bool ConsoleWindow::event(QEvent *event)
{
    // The tab bars of tabbed panels are no Tab stops: Qt keeps an unused one out of sight,
    // where Tab and Shift+Tab stopped on nothing seen (#41 §5), and every panel has a shortcut
    // that brings it to the front.
    if (event->type() == QEvent::ChildPolished) {
        if (auto *tabs = qobject_cast<QTabBar *>(static_cast<QChildEvent *>(event)->child()))
            tabs->setFocusPolicy(Qt::NoFocus);
    }
    return QMainWindow::event(event);
}

void ConsoleWindow::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        applyColours();
    QMainWindow::changeEvent(event);
}

void ConsoleWindow::applyColours()
{
    if (!m_divider)
        return; // a palette change while the window is still being built
    QPalette line = m_divider->palette();
    line.setColor(QPalette::WindowText, Internal::panelBorderColor(palette()));
    m_divider->setPalette(line);
}

void ConsoleWindow::buildStatusBar()
{
    auto *bar = new QWidget;
    auto *layout = new QHBoxLayout(bar);
    layout->setContentsMargins(8, 0, 8, 0);
    layout->setSpacing(8);

    m_modelLabel = new StatusLabel(Qt::ElideRight);
    m_modelLabel->setStatusText(tr("Model: —"));
    m_modelLabel->setObjectName(QStringLiteral("modelLabel"));
    m_breakerChip = new StatusChip;
    m_breakerChip->setObjectName(QStringLiteral("breakerChip"));
    m_breakerChip->setVisible(false);
    m_faultChip = new StatusChip;
    m_faultChip->setObjectName(QStringLiteral("faultChip"));
    m_faultChip->setVisible(false);

    // Short: the model, and a badge each for active faults and troubled breakers. The store,
    // the policy and the counters are in the diagnostics dock.
    m_modelLabel->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Preferred);
    layout->addWidget(m_modelLabel);
    layout->addWidget(statusSeparator(bar));
    layout->addWidget(m_teamChip);
    layout->addWidget(m_faultChip);
    layout->addWidget(m_breakerChip);
    layout->addStretch(1);
    layout->addWidget(buildTeamPolicyBadge(bar)); // consolewindowpolicy.cpp
    statusBar()->addWidget(bar, 1);
    statusBar()->setSizeGripEnabled(true);
}

// The diagnostics dock (breakers, counters, latency, setup): it follows the runtime's services
// itself; the window tells it when the runtime is ready or failed.
void ConsoleWindow::addDiagnosticsDock()
{
    m_diagnostics = new DiagnosticsDock(m_runtime->monitor(), m_runtime->policies(),
                                        m_runtime->faults(), m_runtime->connection(), this);
    addDockWidget(Qt::RightDockWidgetArea, m_diagnostics);
    resizeDocks({m_diagnostics}, {fontMetrics().averageCharWidth() * 44}, Qt::Horizontal);
    QAction *toggle = m_diagnostics->toggleViewAction();
    toggle->setObjectName(QStringLiteral("diagnosticsAction"));
    toggle->setText(tr("&Diagnostics"));
    toggle->setShortcut(QKeySequence(tr("Ctrl+Shift+D")));
    // The staff layout: the engineers' counters wait behind their shortcut (#41 §4); a stored
    // layout (window.ini) shows them again if they were open at the last quit.
    m_diagnostics->hide();
    QMenu *view = menuBar()->addMenu(tr("&View"));
    view->setObjectName(QStringLiteral("viewMenu"));
    view->addAction(toggle);
    QAction *history = m_history->toggleViewAction();
    history->setObjectName(QStringLiteral("historyAction"));
    history->setText(tr("&History"));
    history->setShortcut(QKeySequence(tr("Ctrl+Shift+H")));
    view->addAction(history);
    QAction *search = view->addAction(tr("&Search conversations"));
    search->setObjectName(QStringLiteral("searchHistoryAction"));
    search->setShortcut(QKeySequence::Find);
    connect(search, &QAction::triggered, this, [this] {
        m_history->show();
        m_history->raise();
        m_history->searchBox()->setFocus(Qt::ShortcutFocusReason);
        m_history->searchBox()->selectAll();
    });
}

void ConsoleWindow::addLayoutActions(QMenu *view)
{
    view->addSeparator();
    // Two layouts: the staff member's (the conversation, History) and the QA tester's (the
    // instruments beside it). Whichever is on screen at quit comes back at the next start.
    QAction *staff = view->addAction(tr("S&taff layout"));
    staff->setObjectName(QStringLiteral("staffLayoutAction"));
    staff->setShortcut(QKeySequence(tr("Ctrl+Shift+1")));
    connect(staff, &QAction::triggered, this, [this] {
        for (QDockWidget *dock : findChildren<QDockWidget *>()) {
            if (dock != m_history)
                dock->hide();
        }
        m_history->show();
    });
    QAction *qa = view->addAction(tr("&QA layout"));
    qa->setObjectName(QStringLiteral("qaLayoutAction"));
    qa->setShortcut(QKeySequence(tr("Ctrl+Shift+2")));
    connect(qa, &QAction::triggered, this, [this] {
        m_diagnostics->show();
        for (QDockWidget *dock : {static_cast<QDockWidget *>(m_faultPanel),
                                  static_cast<QDockWidget *>(m_scenarioPanel)}) {
            if (dock)
                dock->show();
        }
    });
}

// The card waiting for the staff member's answer in the running turn, if any: what the
// confirm and decline shortcuts act on.
ConfirmationPanel *ConsoleWindow::waitingConfirmation() const
{
    if (m_runningRequestId.isEmpty())
        return nullptr;
    for (ToolCallCard *card : m_transcript->toolCallCards(m_runningRequestId)) {
        ConfirmationPanel *panel = card->confirmationPanel();
        if (panel && panel->isAwaitingAnswer())
            return panel;
    }
    return nullptr;
}

void ConsoleWindow::onRuntimeReady()
{
    if (m_loop)
        return; // ready() is reported once, but a runtime that was ready early is fine too
    m_loop = m_runtime->agentLoop();
    Q_ASSERT(m_loop);
    if (!m_loop) {
        onRuntimeFailed(tr("The agent loop is missing."));
        return;
    }
    // The panels first: each reads what it shows from its services from now on, and names
    // the tools by the loop's labels.
    showTeamStatus(); // consolewindowteam.cpp
    m_diagnostics->onRuntimeReady(m_loop);
    m_diagnostics->setIsolations(m_runtime->isolations()); // with a team database only
    m_faultPanel->onRuntimeReady(m_loop);
    m_policyEditor->onRuntimeReady(m_loop);
    m_scenarioPanel->onRuntimeReady(m_loop);
    m_mcpServers->onRuntimeReady();
    m_audit->onRuntimeReady(m_loop);
    showTeamPolicy();
    // The transcript follows the loop, and the confirmation panels answer it, through the
    // feed; the window itself only tracks the running turn for its controls. The feed is made
    // first so that a finished turn is in the transcript before the controls change.
    new TranscriptFeed(m_loop, m_transcript, this);
    m_exporter->attach(m_loop);
    connect(m_loop, &AgentLoop::turnFinished, this, &ConsoleWindow::onTurnFinished);
    m_resumeQueue = new ResumeQueue(m_loop, this);
    connect(m_resumeQueue, &ResumeQueue::turnStarting, this,
            &ConsoleWindow::onResumedTurnStarting);
    connect(m_resumeQueue, &ResumeQueue::turnResumed, this, [this] {
        if (!m_loop->isBusy()) // already over
            m_runningRequestId.clear();
        updateControls();
    });
    connect(m_resumeQueue, &ResumeQueue::turnNotResumed, this,
            [this] { m_runningRequestId.clear(); });
    connect(m_resumeQueue, &ResumeQueue::finished, this, &ConsoleWindow::onResumeFinished);

    ActiveConnection *connection = m_runtime->connection();
    connect(connection, &ActiveConnection::settingsChanged, this,
            &ConsoleWindow::refreshRuntimeStatus, Qt::UniqueConnection);
    // A switch that waits for the keychain holds the controls until it is done.
    connect(connection, &ActiveConnection::settingsChanged, this, &ConsoleWindow::updateControls,
            Qt::UniqueConnection);
    // A breaker that opened, half-opened or closed, including those created later.
    connect(m_runtime->monitor(), &RuntimeMonitor::statusChanged, this,
            &ConsoleWindow::refreshBreakerStatus, Qt::UniqueConnection);
    refreshBreakerStatus();
    m_banner->clearNotice();
    refreshRuntimeStatus();
    refreshFaultMarkers(); // the title and the badge: consolewindowpanels.cpp
    showStoredSettingsProblems(); // consolewindowsettings.cpp
    m_duplicateAlert->setDuplicateCount(m_runtime->monitor()->duplicateBusinessObjects());
    m_offeredTurns = m_runtime->recovery()->interruptedTurns();
    showResumeOffer();
    showSetAsideTurns();
    attachHistory();
    updateControls();
    m_input->setFocus();
}

// Interrupted turns core would not offer (damaged, or another session's) are said, not
// dropped; core words each line and shows nothing of the turn's content.
void ConsoleWindow::showSetAsideTurns()
{
    const QList<SetAsideTurn> turns = m_runtime->recovery()->setAsideTurns();
    if (turns.isEmpty())
        return;
    const bool damaged = std::any_of(turns.cbegin(), turns.cend(), [](const SetAsideTurn &t) {
        return t.reason == SetAsideTurn::Reason::Damaged;
    });
    QStringList lines;
    for (const SetAsideTurn &turn : turns) {
        QString line = turn.describe();
        line[0] = line[0].toUpper(); // a sentence of its own here
        lines.append(line);
    }
    const int count = int(turns.size());
    QString title;
    if (damaged) {
        title = tr("%n interrupted request(s) cannot be resumed", nullptr, count);
    } else {
        title = tr("%n interrupted request(s) not this session's", nullptr, count);
    }
    showNotice(title, lines.join(QLatin1Char('\n')), damaged ? Tone::Danger : Tone::Warning);
}

void ConsoleWindow::onRuntimeFailed(const QString &reason)
{
    m_diagnostics->onRuntimeFailed();
    showNotice(tr("The console could not start"),
               reason.isEmpty() ? tr("No reason was given; see the local log.") : reason,
               Tone::Danger);
    updateControls();
}

void ConsoleWindow::showNotice(const QString &title, const QString &detail, Tone tone)
{
    m_banner->showNotice(title, detail, tone);
    updateBannerRow();
}

// The row takes room only while one of its banners has something to say.
void ConsoleWindow::updateBannerRow()
{
    m_bannerRow->setVisible(!m_banner->isHidden() || !m_duplicateAlert->isHidden()
                            || !m_resumeBanner->isHidden() || !m_teamBanner->isHidden());
}

// An example of the empty screen or a turn's "Try again": asked as a new turn, as a typed
// question is, without touching what the staff member is typing.
void ConsoleWindow::askOffered(const QString &question)
{
    if (!m_loop || isTurnRunning() || isResuming() || isScenarioRunning() || question.isEmpty())
        return;
    const QString requestId = m_loop->ask(question);
    if (requestId.isEmpty())
        return;
    m_runningRequestId = m_loop->isBusy() ? requestId : QString();
    m_cancelRequested = false;
    m_transcript->addQuestion(requestId, question);
    updateControls();
}

void ConsoleWindow::sendQuestion()
{
    const QString question = m_input->question();
    if (!m_loop || isTurnRunning() || isResuming() || question.isEmpty())
        return;
    if (question.size() > AgentLoop::maxQuestionLength) {
        showNotice(tr("The question is too long"),
                   tr("A question can have at most %1 characters; this one has %2. Nothing "
                      "was sent, and your text is still in the box.")
                       .arg(AgentLoop::maxQuestionLength)
                       .arg(question.size()),
                   Tone::Warning);
        m_tooLongNoticeShown = true;
        return;
    }
    if (isScenarioRunning())
        return; // the loop is the scenario's; the text stays in the box
    const QString requestId = m_loop->ask(question);
    if (requestId.isEmpty())
        return; // the loop is still busy: keep the text so that nothing typed is lost
    if (std::exchange(m_tooLongNoticeShown, false)) {
        m_banner->clearNotice();
        updateBannerRow();
    }
    // The loop reports the turn as it goes; it may in principle be over already.
    m_runningRequestId = m_loop->isBusy() ? requestId : QString();
    m_cancelRequested = false;
    m_transcript->addQuestion(requestId, question);
    m_input->clear();
    updateControls();
}

void ConsoleWindow::cancelTurn()
{
    if (isScenarioRunning()) {
        cancelScenario(); // consolewindowpanels.cpp
        return;
    }
    if (!m_loop || !isTurnRunning() || m_cancelRequested)
        return;
    m_cancelRequested = true;
    m_loop->cancel();
    updateControls();
}

void ConsoleWindow::startNewConversation()
{
    if (!m_loop || isTurnRunning() || isResuming())
        return;
    m_loop->resetConversation();
    m_transcript->clear();
    m_exporter->clear();
    // What the banner said was about the conversation on screen, or a file opened from it.
    m_banner->clearNotice();
    updateBannerRow();
    if (m_restorer)
        m_restorer->conversationReset();
    m_input->setFocus();
}

void ConsoleWindow::onTurnFinished(const TurnResult &result)
{
    if (result.requestId == m_runningRequestId || !m_loop || !m_loop->isBusy()) {
        m_runningRequestId.clear();
        m_cancelRequested = false;
    }
    updateControls();
    if (isActiveWindow() && !m_input->hasFocus())
        m_input->setFocus();
}

void ConsoleWindow::updateControls()
{
    const bool ready = !m_loop.isNull() && !m_runtime->connection()->isApplying();
    // A scenario's turns are the scenario's: Cancel stops it, nothing else is asked meanwhile.
    const bool running = isTurnRunning() || isScenarioRunning();
    // While interrupted turns are resumed the loop is theirs: nothing new is asked meanwhile.
    m_sendButton->setEnabled(ready && !running && !isResuming() && !m_input->question().isEmpty());
    m_cancelButton->setEnabled(ready && running && !m_cancelRequested);
    m_cancelButton->setText(m_cancelRequested ? tr("Cancelling…") : tr("Cancel"));
    m_newConversationAction->setEnabled(ready && !running && !isResuming());
    m_settingsAction->setEnabled(ready && !running && !isResuming());
    m_resumeBanner->setResumeEnabled(ready && !running && !isResuming());
    m_history->setInteractive(ready && !running && !isResuming());
}

void ConsoleWindow::showResumeOffer()
{
    if (m_offeredTurns.isEmpty()) {
        m_resumeBanner->clearOffer();
    } else {
        m_resumeBanner->showOffer(int(m_offeredTurns.size()),
                                  m_offeredTurns.first().result.question);
    }
    updateBannerRow();
}

void ConsoleWindow::resumeInterruptedTurns()
{
    if (!m_loop || isTurnRunning() || isResuming() || m_offeredTurns.isEmpty())
        return;
    m_resumeQueue->start(std::exchange(m_offeredTurns, {}));
}

void ConsoleWindow::onResumedTurnStarting(const TurnCheckpoint &turn, int number, int total)
{
    m_resumeBanner->showProgress(number, total, turn.result.question);
    updateBannerRow();
    m_runningRequestId = turn.result.requestId;
    m_cancelRequested = false;
    updateControls();
}

// The last interrupted turn is over, or one was cancelled: the ones not started are offered
// again.
void ConsoleWindow::onResumeFinished(const QList<TurnCheckpoint> &givenBack,
                                     const QStringList &notResumed)
{
    m_offeredTurns = givenBack;
    showResumeOffer(); // empty unless a cancelled resume gave some back
    if (!notResumed.isEmpty()) {
        showNotice(tr("%n interrupted request(s) could not be resumed", nullptr,
                      int(notResumed.size())),
                   tr("The agent loop would not carry it on: its checkpoint is no longer "
                      "resumable. The record stays in the journal. First: \u201c%1\u201d")
                       .arg(InterruptedTurnsBanner::questionPreview(notResumed.first())),
                   Tone::Warning);
    }
    updateControls();
    if (isActiveWindow() && !m_input->hasFocus())
        m_input->setFocus();
}

void ConsoleWindow::dismissInterruptedTurns()
{
    if (isResuming())
        return;
    for (const TurnCheckpoint &checkpoint : std::as_const(m_offeredTurns))
        m_runtime->recovery()->dismissInterruptedTurn(checkpoint.conversationId,
                                                      checkpoint.result.requestId);
    m_offeredTurns.clear();
    showResumeOffer();
}

void ConsoleWindow::onDuplicatesChecked(int count)
{
    m_duplicateAlert->setDuplicateCount(count);
    updateBannerRow();
}

void ConsoleWindow::refreshRuntimeStatus()
{
    const RuntimeStatus status = m_runtime->monitor()->status();
    if (!status.modelName.isEmpty()) {
        m_modelLabel->setStatusText(
            status.offlineFallback ? tr("Model: %1 (offline fallback)").arg(status.modelName)
                                   : tr("Model: %1").arg(status.modelName),
            status.offlineFallback ? tr("Answers come from %1; when it fails, the offline demo "
                                        "model answers instead.")
                                         .arg(status.modelName)
                                   : QString());
    }
}

void ConsoleWindow::refreshBreakerStatus()
{
    // Shows what core says of the breakers; the breakers themselves decide when to open.
    const RuntimeStatus status = m_runtime->monitor()->status();
    const QList<DependencyStatus> &troubled = status.troubledDependencies;
    Tone tone = Tone::Warning;
    switch (status.worstBreaker) {
    case DependencyStatus::Breaker::Closed:
        m_breakerChip->setVisible(false);
        m_breakerChip->setToolTip(QString());
        return;
    case DependencyStatus::Breaker::HalfOpen:
        tone = Tone::Warning;
        break;
    case DependencyStatus::Breaker::Open:
        tone = Tone::Danger;
        break;
    }
    Q_ASSERT(!troubled.isEmpty());
    const QString first = StaffWords::dependency(troubled.first().dependency);
    QString text = status.worstBreaker == DependencyStatus::Breaker::Open
        ? tr("Circuit open: %1").arg(first)
        : tr("Half-open: %1").arg(first);
    const qsizetype others = troubled.size() - 1;
    if (others > 0)
        text += tr(" (+%1 more)").arg(others);

    QStringList lines;
    for (const DependencyStatus &dependency : troubled) {
        if (dependency.breaker == DependencyStatus::Breaker::Open) {
            lines.append(tr("Circuit open for %1: calls to it fail fast; it is retried after "
                            "the %2 cool-down.")
                             .arg(StaffWords::dependency(dependency.dependency),
                                  durationLabel(dependency.openCooldown)));
        } else {
            lines.append(tr("Half-open for %1: a few trial calls are let through; it closes "
                            "again once they succeed.")
                             .arg(StaffWords::dependency(dependency.dependency)));
        }
    }
    m_breakerChip->setStatus(text, tone);
    m_breakerChip->setToolTip(lines.join(QLatin1Char('\n')));
    m_breakerChip->setVisible(true);
}

void ConsoleWindow::openConnectionSettings()
{
    const RuntimeOptions &current = m_runtime->options();
    auto *dialog = new ConnectionSettingsDialog(current.model, current.backend,
                                                m_runtime->connection()->secretStore(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setLedgerSpec(current.ledgerSpec);
    dialog->setTeamSpec(current.teamSpec);
    dialog->setLanguage(storedLanguage()); // consolewindowsettings.cpp
    if (const TeamPolicy *team = m_runtime->teamPolicy(); team->inForce())
        dialog->setLockedSettings(team->policy()->locked, team->lockReason());
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        QString error;
        if (!m_runtime->connection()->apply(dialog->modelOptions(), dialog->backendOptions(),
                                            &error)) {
            showNotice(tr("The settings were not applied"), error, Tone::Danger);
            return;
        }
        saveAppliedSettings(dialog->modelOptions(), dialog->backendOptions(), dialog->ledgerSpec(),
                            dialog->teamSpec(), dialog->language());
        updateControls();
    });
    dialog->open(); // window-modal, without a nested event loop
}

} // namespace AgentConsole
