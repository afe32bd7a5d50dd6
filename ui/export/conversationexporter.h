#pragma once

#include "exportviewer.h"

#include <QDate>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>

class QAction;
class QFileDialog;
class QMenu;
class QMessageBox;
class QThreadPool;
class QWidget;

namespace AgentConsole {

class AgentLoop;
class AgentRuntime;
class ConversationExport;
class FinishedTurns;
class Redactor;
struct TurnResult;
class TranscriptView;

// The window's export menu: "Export conversation…", "Export this turn…" (the latest, or the
// one right-clicked in the transcript), the case note ("Copy as case note", "Export case
// note…": a short plain summary per turn for a ticket, core/export/casenote.h) and "Open
// export…". Every save dialog proposes a name: the conversation's title and the date. Core gathers
// the turns (FinishedTurns) and writes the file (ConversationExport); this only asks where, with
// non-blocking file dialogs, and reports. exportConversation(), exportTurn() and openExport()
// do the work without a dialog, for tests and scripts.
//
// Files are written and read on a pool thread, never on the GUI thread: an export holds up to
// kMaxTurns turns and the local log's lines, and the disk may be slow or far away. What goes
// into a file is taken on the GUI thread when it is asked for; the answer (exported(),
// opened() or failed()) always comes after the call has returned.
//
// It takes the whole runtime, not one service, because an export is the console's whole state
// (ConversationExport::fromRuntime: the faults, every tool's policy, the model, the counters,
// the redactor); like the window it is part of, it is not a panel.
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
    // Writes the turns in the format the extension names (.json or .md): exported(), or
    // failed() with a one-line reason naming the file.
    void exportConversation(const QString &path, Scope scope = Scope::ThisConversation);
    // An empty requestId exports the latest finished turn.
    void exportTurn(const QString &path, const QString &requestId = {});
    // The conversation's case note, in the window's language: written to `path` (exported(),
    // or failed()), or put on the clipboard (caseNoteCopied(), or failed() when there is no
    // turn of the staff member's own). Made on the file pool; turns of a scenario run are
    // left out.
    void exportCaseNote(const QString &path);
    void copyCaseNote();
    // Reads an exported JSON and shows it read-only in a window of its own (deleted on
    // close): opened(), or failed() with the reason it cannot be read. A Markdown bug report
    // is not read: a message box (opened, not exec'd; closed by the staff member) says that
    // Open export… opens JSON exports and offers the JSON export of the same name beside it
    // when there is one (markdownNotOpened()).
    void openExport(const QString &path);
    // What a save dialog proposes: "A1001 mug arrived broken — 2026-12-07.json" (the first
    // question of the turns `requestId` names, empty: the conversation's; today's date).
    QString suggestedFileName(const QString &requestId, const QString &suffix) const;
    // Files waiting to be written or read.
    int filesInFlight() const { return m_filesInFlight; }
    // The pool the files are written and read on: the console's file pool unless set (a test
    // holds its own to show the window answering while a file waits); null: that pool again.
    // Not owned.
    void setFilePool(QThreadPool *pool) { m_filePool = pool; }
    // The date the case note and the proposed file names carry: today unless set (a test's
    // fixed day, so that midnight cannot change what it compares); invalid: today again.
    void setToday(const QDate &date) { m_today = date; }
    QDate today() const { return m_today.isValid() ? m_today : QDate::currentDate(); }

    QAction *exportConversationAction() const { return m_exportConversation; }
    QAction *exportTurnAction() const { return m_exportTurn; }
    QAction *exportEveryConversationAction() const { return m_exportEvery; }
    QAction *openExportAction() const { return m_openExport; }
    QAction *copyCaseNoteAction() const { return m_copyCaseNote; }
    QAction *exportCaseNoteAction() const { return m_exportCaseNote; }
    // Conversation › Include the audit trail in exports (a check box, off until chosen): an
    // export (conversation, every conversation, a turn) then also carries the audit trail's
    // rows of its turns (docs/AUDIT.md), read from the ledger before the file is written.
    QAction *includeAuditTrailAction() const { return m_includeAudit; }
    void setIncludeAuditTrail(bool include);
    bool includesAuditTrail() const;

Q_SIGNALS:
    // A file started being written or read (the answer follows).
    void writing(const QString &path);
    void reading(const QString &path);
    void exported(const QString &path, int turns);
    void opened(AgentConsole::ExportViewer *viewer);
    void failed(const QString &title, const QString &reason);
    // The case note of `turns` turns is on the clipboard.
    void caseNoteCopied(int turns);
    // `path` was a Markdown bug report: `notice` says so (and offers `jsonBeside`, empty
    // when there is none beside it).
    void markdownNotOpened(const QString &path, const QString &jsonBeside, QMessageBox *notice);

private:
    // What every file and name leaves out: the keys in use (ActiveConnection::exportRedactor).
    Redactor redactor() const;
    void chooseExportPath(const QString &requestId, Scope scope = Scope::ThisConversation);
    void write(ConversationExport report, const QString &path, int turns);
    // write(), after the audit trail's rows of the report's turns when they are asked for.
    void writeWithAudit(ConversationExport report, const QString &path, int turns);
    void refuseLater(const QString &title, const QString &reason);
    QList<TurnResult> turnsOf(Scope scope) const;
    QList<TurnResult> caseNoteTurns() const;
    void chooseCaseNotePath();
    void explainMarkdown(const QString &path, const QString &jsonBeside);
    void showStatus(const QString &text);
    void chooseExportToOpen();
    void showTurnMenu(const QPoint &pos);
    void updateActions();
    void refreshTotals();

    AgentRuntime *m_runtime;
    QPointer<TranscriptView> m_transcript;
    QWidget *m_window;
    FinishedTurns *m_turns = nullptr;
    QJsonObject m_totals; // the latest counter totals read; empty until then
    QThreadPool *m_filePool; // null: the console's file pool
    int m_filesInFlight = 0;
    QDate m_today; // invalid: QDate::currentDate()
    QAction *m_exportConversation = nullptr;
    QAction *m_exportTurn = nullptr;
    QAction *m_exportEvery = nullptr;
    QAction *m_includeAudit = nullptr;
    QAction *m_openExport = nullptr;
    QAction *m_copyCaseNote = nullptr;
    QAction *m_exportCaseNote = nullptr;
};

} // namespace AgentConsole
