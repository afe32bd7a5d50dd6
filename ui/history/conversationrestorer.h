#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

class QAction;

namespace AgentConsole {

class AgentLoop;
class ConversationHistory;
class FinishedTurns;
class HistorySidebar;
class SettingsWriter;
class TranscriptView;
struct StoredConversation;
struct TurnResult;

// Reopens stored conversations in the window (docs/HISTORY.md) and keeps where the staff
// member was: a row opened in the sidebar is read back from the journal and its turns shown
// in the transcript (through its public API for finished turns), the loop carries that
// conversation on, and the id of the conversation on screen is kept in the data directory
// (window.ini) so that the next start opens it again. It forwards only: the history reads,
// the loop decides, the transcript shows.
class ConversationRestorer final : public QObject
{
    Q_OBJECT

public:
    // `canSwitch` says whether the conversation on screen may change now (no turn, resume or
    // scenario running); `newConversation` is the window's action, used when the open
    // conversation is deleted.
    ConversationRestorer(ConversationHistory *history, AgentLoop *loop, TranscriptView *transcript,
                         FinishedTurns *finishedTurns, HistorySidebar *sidebar,
                         QAction *newConversation, const QString &dataDirectory,
                         std::function<bool()> canSwitch, QObject *parent = nullptr);
    ~ConversationRestorer() override;

    // Opens the conversation that was on screen at the last quit, if it is still stored.
    void restoreLast();
    void open(const QString &conversationId);
    // The window started a new conversation: nothing stored is on screen.
    void conversationReset();
    QString currentConversation() const { return m_current; }
    // The id kept for the next start, as the file holds it now; empty when none.
    QString storedConversation() const;
    // A change of the id kept is still on its way to the file (written off the GUI thread).
    bool isSaving() const { return m_writesUnderWay > 0; }

Q_SIGNALS:
    // A stored conversation is on screen (or was not found: `turns` 0).
    void restored(const QString &conversationId, int turns);

private:
    void show(const StoredConversation &conversation);
    void onTurnFinished(const TurnResult &result);
    void remember(const QString &conversationId);

    QPointer<ConversationHistory> m_history;
    QPointer<AgentLoop> m_loop;
    QPointer<TranscriptView> m_transcript;
    QPointer<FinishedTurns> m_finishedTurns;
    QPointer<HistorySidebar> m_sidebar;
    QPointer<QAction> m_newConversation;
    QString m_settingsPath;
    std::function<bool()> m_canSwitch;
    std::unique_ptr<SettingsWriter> m_writer; // once destroyed, the last write is on disk
    QString m_current; // the stored conversation on screen
    QString m_requested; // asked for, not read back yet
    // What remember() last wrote (none yet: the next call writes). Another console on the
    // same data directory writing in between is not noticed: the last one to change it wins.
    std::optional<QString> m_remembered;
    int m_writesUnderWay = 0;
};

} // namespace AgentConsole
