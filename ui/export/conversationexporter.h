#pragma once

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>

class QAction;
class QMenu;
class QWidget;

namespace AgentConsole {

class AgentLoop;
class AgentRuntime;
class ExportViewer;
class FinishedTurns;
struct TurnResult;
class TranscriptView;

// The window's export menu: "Export conversation…", "Export this turn…" (the latest, or the
// one right-clicked in the transcript) and "Open export…". Core gathers the turns
// (FinishedTurns) and writes the file (ConversationExport); this only asks where, with
// non-blocking file dialogs, and reports. exportConversation(), exportTurn() and openExport()
// do the work without a dialog, for tests and scripts.
class ConversationExporter final : public QObject
{
    Q_OBJECT

public:
    ConversationExporter(AgentRuntime *runtime, TranscriptView *transcript, QWidget *window);
    ~ConversationExporter() override;

    // Starts keeping the loop's finished turns (once the runtime is ready).
    void attach(AgentLoop *loop);
    void addActionsTo(QMenu *menu);
    // A new conversation: its turns start afresh.
    void clear();
    FinishedTurns *finishedTurns() const { return m_turns; }

    // Which finished turns "Export conversation…" writes: the conversation on screen (the
    // loop's), or every turn finished since the console started or the conversation was
    // switched, whichever conversation it was in (resumed turns, scenario runs).
    enum class Scope { ThisConversation, EveryConversation };
    // Format by extension (.json or .md). False with a one-line reason naming the file.
    bool exportConversation(const QString &path, QString *error = nullptr,
                            Scope scope = Scope::ThisConversation);
    // An empty requestId exports the latest finished turn.
    bool exportTurn(const QString &path, const QString &requestId = {}, QString *error = nullptr);
    // Opens an exported JSON read-only in a window of its own (deleted on close); nullptr
    // and the reason when it cannot be read.
    ExportViewer *openExport(const QString &path, QString *error = nullptr);

    QAction *exportConversationAction() const { return m_exportConversation; }
    QAction *exportTurnAction() const { return m_exportTurn; }
    QAction *exportEveryConversationAction() const { return m_exportEvery; }
    QAction *openExportAction() const { return m_openExport; }

Q_SIGNALS:
    void exported(const QString &path, int turns);
    void failed(const QString &title, const QString &reason);

private:
    void chooseExportPath(const QString &requestId, Scope scope = Scope::ThisConversation);
    QList<TurnResult> turnsOf(Scope scope) const;
    void chooseExportToOpen();
    void showTurnMenu(const QPoint &pos);
    void updateActions();
    void refreshTotals();

    AgentRuntime *m_runtime;
    QPointer<TranscriptView> m_transcript;
    QWidget *m_window;
    FinishedTurns *m_turns = nullptr;
    QJsonObject m_totals; // the latest counter totals read; empty until then
    QAction *m_exportConversation = nullptr;
    QAction *m_exportTurn = nullptr;
    QAction *m_exportEvery = nullptr;
    QAction *m_openExport = nullptr;
};

} // namespace AgentConsole
