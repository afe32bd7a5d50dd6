#pragma once

#include "consolepalette.h"

#include <QMainWindow>
#include <QPointer>

class QFrame;
class QPushButton;

namespace AgentConsole {

class AgentLoop;
class AgentRuntime;
class NoticeBanner;
class QuestionInput;
class StatusChip;
namespace Internal {
class StatusLabel;
}
class TranscriptView;
struct TurnResult;

// The console's main window: the transcript, the question input with Send and Cancel, and a
// status bar naming the model, any circuit breaker that is not closed, the store, the active
// fault plan and the tool retry policy.
// It takes a runtime that someone else owns and started, shows "Preparing the store…" until
// the runtime is ready and a clear banner if it failed. It forwards questions to the agent
// loop and shows what the loop reports (TranscriptFeed), including the confirmation panels of
// write tools, whose answers go back to the loop; it decides nothing itself.
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
    bool isTurnRunning() const { return !m_runningRequestId.isEmpty(); }

protected:
    void changeEvent(QEvent *event) override;

private:
    void applyColours();
    void buildStatusBar();
    void showNotice(const QString &title, const QString &detail, Tone tone);
    void onRuntimeReady();
    void onRuntimeFailed(const QString &reason);
    void sendQuestion();
    void cancelTurn();
    void startNewConversation();
    void openConnectionSettings();
    void refreshRuntimeStatus();
    void refreshBreakerStatus();
    void onTurnFinished(const TurnResult &result);
    void updateControls();

    AgentRuntime *m_runtime = nullptr;
    QPointer<AgentLoop> m_loop;
    QString m_runningRequestId;
    bool m_cancelRequested = false;

    QWidget *m_bannerRow = nullptr;
    QFrame *m_divider = nullptr;
    NoticeBanner *m_banner = nullptr;
    TranscriptView *m_transcript = nullptr;
    QuestionInput *m_input = nullptr;
    QPushButton *m_sendButton = nullptr;
    QPushButton *m_cancelButton = nullptr;
    QAction *m_newConversationAction = nullptr;
    QAction *m_settingsAction = nullptr;

    Internal::StatusLabel *m_modelLabel = nullptr;
    StatusChip *m_breakerChip = nullptr;
    Internal::StatusLabel *m_storeLabel = nullptr;
    StatusChip *m_faultChip = nullptr;
    Internal::StatusLabel *m_faultLabel = nullptr;
    Internal::StatusLabel *m_policyLabel = nullptr;
};

} // namespace AgentConsole
