#pragma once

#include "ui/common/consolepalette.h"

#include "core/console/mcpquestion.h"
#include "core/turn/turncheckpoint.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QMainWindow>
#include <QPointer>

class QDockWidget;
class QFrame;
class QPushButton;

class QMenu;

namespace AgentConsole {

class AgentLoop;
class AgentRuntime;
class AuditTrailDock;
class ConversationHistory;
class ConversationRestorer;
class ConsoleSettings;
struct BackendOptions;
struct ModelOptions;
class ConfirmationPanel;
class ConversationExporter;
class DiagnosticsDock;
class DuplicateTicketAlert;
class FaultPanel;
class HistorySidebar;
class InterruptedTurnsBanner;
class McpServersDock;
class McpQuestionDialog;
class NoticeBanner;
class PolicyEditor;
class QuestionInput;
class ResumeQueue;
class ScenarioPanel;
class StatusChip;
namespace Internal {
class StatusLabel;
}
class TranscriptView;
struct TurnResult;

// The console's main window: the transcript, the question input with Send and Cancel, a short
// status bar (the model, a badge for active faults, a badge for a circuit breaker that is not
// closed) and the diagnostics dock (every breaker, DESIGN.md's counters, tool latency, the
// store and the policy).
// It takes a runtime that someone else owns and started, shows "Preparing the store…" until
// the runtime is ready and a clear banner if it failed. It is the one widget that takes the
// runtime itself: it hands each panel the services that panel needs (AgentRuntime's
// accessors) and tells the panels when the runtime is ready. It forwards questions to the agent
// loop and shows what the loop reports (TranscriptFeed), including the confirmation panels of
// write tools, whose answers go back to the loop; it decides nothing itself.
// Turns core found interrupted are offered in a banner (Resume / Dismiss) and, if the staff
// member chooses, carried on one at a time; an alert stays up while core reports operations
// that own more than one ticket.
class ConsoleWindow final : public QMainWindow
{
    Q_OBJECT

public:
    explicit ConsoleWindow(AgentRuntime *runtime, QWidget *parent = nullptr);
    ~ConsoleWindow() override;

    TranscriptView *transcript() const { return m_transcript; }
    QuestionInput *questionInput() const { return m_input; }
    QPushButton *sendButton() const { return m_sendButton; }
    QPushButton *cancelButton() const { return m_cancelButton; }
    NoticeBanner *noticeBanner() const { return m_banner; }
    InterruptedTurnsBanner *interruptedTurnsBanner() const { return m_resumeBanner; }
    DuplicateTicketAlert *duplicateTicketAlert() const { return m_duplicateAlert; }
    DiagnosticsDock *diagnosticsDock() const { return m_diagnostics; }
    // The fault panel, the policy editor and the scenarios (docks, hidden until asked for),
    // and the status bar's badge of active faults and custom policies.
    FaultPanel *faultPanel() const { return m_faultPanel; }
    PolicyEditor *policyEditor() const { return m_policyEditor; }
    ScenarioPanel *scenarioPanel() const { return m_scenarioPanel; }
    // View › MCP servers (hidden until asked for), and Settings › MCP tool policies, which
    // opens a McpPolicyDialog (a child of the window) and applies it to the running runtime.
    McpServersDock *mcpServersDock() const { return m_mcpServers; }
    // View › Audit trail (hidden until asked for): every write's confirmation and outcome,
    // read-only (consolewindowaudit.cpp).
    AuditTrailDock *auditTrailDock() const { return m_audit; }
    // MCP servers' questions to staff open now, one dialog each (consolewindowmcp.cpp).
    QList<McpQuestionDialog *> mcpQuestionDialogs() const;
    void openMcpToolPolicies();
    StatusChip *faultChip() const { return m_faultChip; }
    bool isTurnRunning() const { return !m_runningRequestId.isEmpty(); }
    // From Resume until the last interrupted turn finished (or one was cancelled).
    bool isResuming() const;
    // A scenario from the Scenarios menu or panel is running: the loop is its.
    bool isScenarioRunning() const;
    void showScenarioApart(bool running);
    void askOffered(const QString &question);
    void addLayoutActions(QMenu *view);
    ConfirmationPanel *waitingConfirmation() const;
    // Export (docs/EXPORT.md): the Conversation menu's export actions and what they do,
    // callable without their file dialogs (exportConversation(path), openExport(path), ...).
    ConversationExporter *exporter() const { return m_exporter; }
    // History (docs/HISTORY.md): the sidebar of stored conversations, and what reopens them
    // and restores the one open at the last quit (null until the runtime is ready).
    HistorySidebar *historySidebar() const { return m_history; }
    ConversationRestorer *conversationRestorer() const { return m_restorer; }
    QAction *newConversationAction() const { return m_newConversationAction; }
    // The conversation's finished turns to `path`; the exporter's exported() or failed() says
    // how it went.
    void exportConversation(const QString &path);
    // consolewindowsettings.cpp: the stored settings (someone else owns them and loaded them):
    // the window's geometry and docks are restored from them now and saved when it closes,
    // and the settings dialog's values are saved there when applied. Problems found in the
    // file are shown once the runtime is ready.
    void useStoredSettings(ConsoleSettings *settings);
    // Keeps the whole window on its screen's available area (the first window at 150%
    // scaling on a small screen included), so that the question box is always in view.
    void fitToScreen();

Q_SIGNALS:
    // Settings › Language chose another language and it is stored (consolewindowsettings.cpp).
    // With nobody to make the window again (ConsoleShell), the window says it applies from
    // the next start.
    void languageChosen(const QString &language);

protected:
    bool event(QEvent *event) override;
    void changeEvent(QEvent *event) override;
    void closeEvent(QCloseEvent *event) override;

private:
    void applyColours();
    void buildStatusBar();
    void addDiagnosticsDock();
    void showNotice(const QString &title, const QString &detail, Tone tone);
    // A save refused at once, or the settings file's write failing afterwards: one wording.
    void showSettingsNotSaved(const QString &reason);
    void onRuntimeReady();
    void onRuntimeFailed(const QString &reason);
    void sendQuestion();
    void cancelTurn();
    void startNewConversation();
    void openConnectionSettings();
    void saveAppliedSettings(const ModelOptions &model, const BackendOptions &backend,
                             const QString &ledgerSpec, const QString &teamSpec,
                             const QString &language);
    void showStoredSettingsProblems();
    void openMcpSettings();
    QString storedLanguage() const;
    // consolewindowpolicy.cpp: the team's policy in force (docs/POLICY.md), in the status bar
    // and over the stored settings, once the runtime is ready.
    QWidget *buildTeamPolicyBadge(QWidget *bar);
    void showTeamPolicy();
    // consolewindowpanels.cpp: the docks and menus of faults, policies and scenarios, and the
    // title and badge that keep active faults and custom policies in sight.
    void buildPanels();
    void attachHistory(); // consolewindowhistory.cpp
    void buildScenarios();
    void buildMcp(); // consolewindowmcp.cpp
    void buildAudit(); // consolewindowaudit.cpp
    void buildTeam(); // consolewindowteam.cpp
    void onTeamUnreachable(const QString &reason);
    void showTeamStatus();
    void askMcpQuestion(const QString &id, const McpQuestion &question);
    void onMcpQuestionEnded(const QString &id, McpQuestionEnd how);
    void cancelScenario();
    void giveRoomTo(QDockWidget *dock);
    void refreshFaultMarkers();
    void refreshRuntimeStatus();
    void refreshBreakerStatus();
    void onTurnFinished(const TurnResult &result);
    void updateControls();
    void updateBannerRow();
    void showResumeOffer();
    void showSetAsideTurns();
    void resumeInterruptedTurns();
    void onResumedTurnStarting(const TurnCheckpoint &turn, int number, int total);
    void onResumeFinished(const QList<TurnCheckpoint> &givenBack, const QStringList &notResumed);
    void dismissInterruptedTurns();
    void onDuplicatesChecked(int count);

    AgentRuntime *m_runtime = nullptr;
    ConsoleSettings *m_storedSettings = nullptr; // optional, not owned
    QPointer<AgentLoop> m_loop;
    QString m_runningRequestId;
    // While a scenario runs, its turns are on screen alone; the staff member's conversation
    // (empty: none had a turn) comes back when it ends.
    QString m_conversationBeforeScenario;
    QString m_scenarioShown; // the title of the run on screen, for the banner after it
    bool m_cancelRequested = false;

    // Interrupted turns: offered until resumed or dismissed; resumed one at a time by the
    // queue (made with the loop).
    QList<TurnCheckpoint> m_offeredTurns;
    ResumeQueue *m_resumeQueue = nullptr;

    QWidget *m_bannerRow = nullptr;
    QFrame *m_divider = nullptr;
    NoticeBanner *m_banner = nullptr;
    DuplicateTicketAlert *m_duplicateAlert = nullptr;
    InterruptedTurnsBanner *m_resumeBanner = nullptr;
    NoticeBanner *m_teamBanner = nullptr;
    QPushButton *m_runAloneButton = nullptr;
    QPushButton *m_quitButton = nullptr;
    TranscriptView *m_transcript = nullptr;
    QuestionInput *m_input = nullptr;
    QPushButton *m_sendButton = nullptr;
    QPushButton *m_cancelButton = nullptr;
    QAction *m_newConversationAction = nullptr;
    QAction *m_settingsAction = nullptr;
    ConversationExporter *m_exporter = nullptr;
    HistorySidebar *m_history = nullptr;
    ConversationHistory *m_conversationHistory = nullptr;
    ConversationRestorer *m_restorer = nullptr;

    Internal::StatusLabel *m_modelLabel = nullptr;
    StatusChip *m_breakerChip = nullptr;
    StatusChip *m_faultChip = nullptr;
    StatusChip *m_teamChip = nullptr;
    QWidget *m_teamPolicyBadge = nullptr; // hidden without a team policy
    DiagnosticsDock *m_diagnostics = nullptr;
    FaultPanel *m_faultPanel = nullptr;
    PolicyEditor *m_policyEditor = nullptr;
    ScenarioPanel *m_scenarioPanel = nullptr;
    McpServersDock *m_mcpServers = nullptr;
    AuditTrailDock *m_audit = nullptr;
    QHash<QString, QPointer<McpQuestionDialog>> m_mcpQuestions; // by the runtime's id
    bool m_tooLongNoticeShown = false; // cleared by the next question that is sent
};

} // namespace AgentConsole
