#include "conversationexporter.h"

#include "exportviewer.h"
#include "ui/common/existingfiledialog.h"
#include "ui/transcript/transcriptview.h"

#include "core/turn/agentloop.h"
#include "core/console/activeconnection.h"
#include "core/console/agentruntime.h"
#include "core/console/runtimemonitor.h"
#include "core/console/writeaudit.h"
#include "core/export/exportfile.h"
#include "core/turn/finishedturns.h"

#include <QAction>
#include <QClipboard>
#include <QDate>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLocale>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QThreadPool>

namespace AgentConsole {
namespace {

struct FilterWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::ConversationExporter)
};

// The save dialogs' filters, in the window's language; each names what the file is for.
QString jsonFilter()
{
    return FilterWords::tr("JSON export, opens again here (*.json)");
}

QString markdownFilter()
{
    return FilterWords::tr("Markdown bug report (*.md)");
}

QString caseNoteFilter()
{
    return FilterWords::tr("Case note (*.md)");
}

QString caseNoteTextFilter()
{
    return FilterWords::tr("Case note, plain text (*.txt)");
}

// The only kind Open export… reads, said in its filter.
QString openFilter()
{
    return FilterWords::tr("JSON exports, the only kind Open export… opens (*.json)");
}

// The case note's language: the window's (ConsoleLanguage sets the default locale with the
// translators), as the cards it restates.
Language windowLanguage()
{
    return QLocale().language() == QLocale::Chinese ? Language::Chinese : Language::English;
}

// A file name with its suffix swapped for `suffix`, when it has one of `known`; else as it is.
QString withSuffix(const QString &fileName, const QString &suffix, const QStringList &known)
{
    const QFileInfo info(fileName);
    if (!known.contains(info.suffix().toLower()))
        return fileName;
    return fileName.left(fileName.size() - info.suffix().size()) + suffix;
}

} // namespace

ConversationExporter::ConversationExporter(AgentRuntime *runtime, TranscriptView *transcript,
                                           QWidget *window)
    : QObject(window)
    , m_runtime(runtime)
    , m_transcript(transcript)
    , m_window(window)
    , m_filePool(nullptr)
{
    Q_ASSERT(runtime && transcript && window);
    m_turns = new FinishedTurns(nullptr, this);
    connect(m_turns, &FinishedTurns::changed, this, [this] {
        updateActions();
        refreshTotals();
    });

    m_exportConversation = new QAction(tr("&Export conversation…"), this);
    m_exportConversation->setObjectName(QStringLiteral("exportConversationAction"));
    m_exportConversation->setToolTip(tr("Save this conversation's finished turns as JSON or "
                                        "as a Markdown bug report; keys are redacted."));
    connect(m_exportConversation, &QAction::triggered, this,
            [this] { chooseExportPath(QString()); });
    m_exportEvery = new QAction(tr("Export e&very conversation…"), this);
    m_exportEvery->setObjectName(QStringLiteral("exportEveryConversationAction"));
    m_exportEvery->setToolTip(tr("Save every turn finished since the console started or the "
                                 "conversation was switched, whichever conversation it was in "
                                 "(resumed turns, scenario runs)."));
    connect(m_exportEvery, &QAction::triggered, this,
            [this] { chooseExportPath(QString(), Scope::EveryConversation); });
    m_exportTurn = new QAction(tr("Export this &turn…"), this);
    m_exportTurn->setObjectName(QStringLiteral("exportTurnAction"));
    m_exportTurn->setToolTip(tr("Save the latest finished turn (or right-click a turn in the "
                                "transcript)."));
    connect(m_exportTurn, &QAction::triggered, this, [this] {
        if (const std::optional<TurnResult> latest = m_turns->latest())
            chooseExportPath(latest->requestId);
    });
    m_copyCaseNote = new QAction(tr("Copy as &case note"), this);
    m_copyCaseNote->setObjectName(QStringLiteral("copyCaseNoteAction"));
    m_copyCaseNote->setToolTip(tr("Copy a short summary of this conversation for a ticket: per "
                                  "question, what was found, what could not be looked up and "
                                  "the tickets made."));
    connect(m_copyCaseNote, &QAction::triggered, this, &ConversationExporter::copyCaseNote);
    m_exportCaseNote = new QAction(tr("Export c&ase note…"), this);
    m_exportCaseNote->setObjectName(QStringLiteral("exportCaseNoteAction"));
    m_exportCaseNote->setToolTip(tr("Save the same summary as a file."));
    connect(m_exportCaseNote, &QAction::triggered, this,
            &ConversationExporter::chooseCaseNotePath);
    m_includeAudit = new QAction(tr("Include the a&udit trail in exports"), this);
    m_includeAudit->setObjectName(QStringLiteral("includeAuditTrailAction"));
    m_includeAudit->setCheckable(true);
    m_includeAudit->setToolTip(tr("Exports also carry who confirmed each write of their turns, "
                                  "when, and how it ended, as the audit trail keeps it."));
    m_openExport = new QAction(tr("&Open export…"), this);
    m_openExport->setObjectName(QStringLiteral("openExportAction"));
    m_openExport->setToolTip(tr("View a conversation exported as JSON, read-only. The Markdown "
                                "bug report and the case note are for reading elsewhere."));
    connect(m_openExport, &QAction::triggered, this, &ConversationExporter::chooseExportToOpen);

    // A right-click on a finished turn offers that turn.
    transcript->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(transcript, &QWidget::customContextMenuRequested, this,
            &ConversationExporter::showTurnMenu);
    updateActions();
}

ConversationExporter::~ConversationExporter() = default;

Redactor ConversationExporter::redactor() const
{
    return m_runtime->connection()->exportRedactor();
}

void ConversationExporter::attach(AgentLoop *loop)
{
    if (loop)
        connect(loop, &AgentLoop::turnFinished, m_turns, &FinishedTurns::add,
                Qt::UniqueConnection);
}

void ConversationExporter::addActionsTo(QMenu *menu)
{
    menu->addAction(m_copyCaseNote);
    menu->addAction(m_exportCaseNote);
    menu->addSeparator();
    menu->addAction(m_exportConversation);
    menu->addAction(m_exportEvery);
    menu->addAction(m_exportTurn);
    menu->addAction(m_includeAudit);
    menu->addAction(m_openExport);
}

void ConversationExporter::setIncludeAuditTrail(bool include)
{
    m_includeAudit->setChecked(include);
}

bool ConversationExporter::includesAuditTrail() const
{
    return m_includeAudit->isChecked();
}

void ConversationExporter::clear()
{
    m_turns->clear();
}

QList<TurnResult> ConversationExporter::turnsOf(Scope scope) const
{
    QList<TurnResult> turns = m_turns->turns();
    if (scope == Scope::EveryConversation || turns.isEmpty())
        return turns;
    // The conversation on screen; the latest turn's when the loop has started none yet.
    const AgentLoop *loop = m_runtime->agentLoop();
    QString conversation = loop ? loop->session().conversationId : QString();
    if (conversation.isEmpty())
        conversation = turns.last().conversationId;
    turns.removeIf(
        [&conversation](const TurnResult &turn) { return turn.conversationId != conversation; });
    return turns;
}

void ConversationExporter::exportConversation(const QString &path, Scope scope)
{
    const QList<TurnResult> turns = turnsOf(scope);
    if (turns.isEmpty()) {
        refuseLater(tr("The export was not written"),
                    tr("There is no finished turn to export yet."));
        return;
    }
    ConversationExport report = ConversationExport::fromRuntimeState(*m_runtime, turns);
    report.setCounterTotals(m_totals);
    writeWithAudit(std::move(report), path, int(turns.size()));
}

void ConversationExporter::exportTurn(const QString &path, const QString &requestId)
{
    const std::optional<TurnResult> turn = requestId.isEmpty() ? m_turns->latest()
                                                               : m_turns->turn(requestId);
    if (!turn) {
        refuseLater(tr("The export was not written"),
                    tr("That turn has not finished, or is not in this conversation."));
        return;
    }
    writeWithAudit(ConversationExport::fromRuntimeState(*m_runtime, {*turn}), path, 1);
}

// The conversation's turns of the staff member's own, with their tools' words: a turn kept
// from before the tools were asked (a reopened conversation) has only the calls' names.
QList<TurnResult> ConversationExporter::caseNoteTurns() const
{
    QList<TurnResult> turns = turnsOf(Scope::ThisConversation);
    if (const AgentLoop *loop = m_runtime->agentLoop()) {
        for (TurnResult &turn : turns) {
            for (ToolCallRecord &call : turn.toolCalls) {
                if (call.labels.title.isEmpty() && call.labels.arguments.isEmpty())
                    call.labels = loop->toolLabels(call.name);
            }
        }
    }
    return turns;
}

void ConversationExporter::exportCaseNote(const QString &path)
{
    const QList<TurnResult> turns = caseNoteTurns();
    const int own = int(CaseNote::staffTurns(turns).size());
    if (own == 0) {
        refuseLater(tr("The case note was not written"),
                    tr("There is no finished question of your own in this conversation yet."));
        return;
    }
    ++m_filesInFlight;
    Q_EMIT writing(path);
    await(writeCaseNoteFile(m_filePool, turns, redactor(), windowLanguage(), today(), path), this,
          [this, path, own](const ExportWritten &answer) {
              --m_filesInFlight;
              if (answer.written)
                  Q_EMIT exported(path, own);
              else
                  Q_EMIT failed(tr("The case note was not written"), answer.error);
          });
}

void ConversationExporter::copyCaseNote()
{
    const QList<TurnResult> turns = caseNoteTurns();
    const int own = int(CaseNote::staffTurns(turns).size());
    if (own == 0) {
        refuseLater(tr("Nothing was copied"),
                    tr("There is no finished question of your own in this conversation yet."));
        return;
    }
    // Made off the GUI thread (a long conversation is redacted as a whole), then copied.
    await(caseNoteText(m_filePool, turns, redactor(), windowLanguage(), today()), this,
          [this, own](const QString &note) {
              QGuiApplication::clipboard()->setText(note);
              showStatus(tr("Copied the case note of %n question(s)", nullptr, own));
              Q_EMIT caseNoteCopied(own);
          });
}

QString ConversationExporter::suggestedFileName(const QString &requestId,
                                                const QString &suffix) const
{
    QList<TurnResult> turns;
    if (requestId.isEmpty()) {
        turns = turnsOf(Scope::ThisConversation);
    } else if (const std::optional<TurnResult> turn = m_turns->turn(requestId)) {
        turns = {*turn};
    }
    return suggestedExportFileName(turns, redactor(), today(), suffix);
}

// The window's status bar, when the exporter serves a main window (the copy has no file
// whose writing the window reports).
void ConversationExporter::showStatus(const QString &text)
{
    if (auto *window = qobject_cast<QMainWindow *>(m_window))
        window->statusBar()->showMessage(text, 8000);
}

void ConversationExporter::write(ConversationExport report, const QString &path, int turns)
{
    ++m_filesInFlight;
    Q_EMIT writing(path);
    await(writeExportFile(m_filePool, std::move(report), path, m_runtime->options().dataDirectory),
          this, [this, path, turns](const ExportWritten &answer) {
              --m_filesInFlight;
              if (answer.written)
                  Q_EMIT exported(path, turns);
              else
                  Q_EMIT failed(tr("The export was not written"), answer.error);
          });
}

void ConversationExporter::writeWithAudit(ConversationExport report, const QString &path,
                                          int turns)
{
    if (!includesAuditTrail()) {
        write(std::move(report), path, turns);
        return;
    }
    // Read on the ledger's database thread; the file is written once the rows are in.
    ++m_filesInFlight;
    Q_EMIT writing(path);
    const QList<TurnResult> exported = report.turns();
    await(m_runtime->audit()->rowsOfTurns(exported), this,
          [this, report = std::move(report), path, turns](const AuditPage &page) mutable {
              --m_filesInFlight;
              if (!page.ok()) {
                  Q_EMIT failed(tr("The export was not written"),
                                tr("The audit trail could not be read, so the export that "
                                   "was to carry it was not written; the local log says "
                                   "why."));
                  return;
              }
              report.setAuditRows(page.rows, !page.more);
              write(std::move(report), path, turns);
          });
}

void ConversationExporter::openExport(const QString &path)
{
    ++m_filesInFlight;
    Q_EMIT reading(path);
    await(openExportFile(m_filePool, path), this, [this, path](ExportOpened found) {
        --m_filesInFlight;
        if (found.markdown) {
            explainMarkdown(path, found.jsonBeside);
            return;
        }
        FileRead<ConversationExport> &read = found.read;
        if (!read.value) {
            Q_EMIT failed(tr("The export could not be opened"), read.error);
            return;
        }
        ConversationExport &report = *read.value;
        // An export keeps the calls' wire names only: its cards are worded by today's tools,
        // as a stored conversation's are (the values shown in staff words, the file unchanged).
        if (const AgentLoop *loop = m_runtime->agentLoop()) {
            QList<TurnResult> turns = report.turns();
            for (TurnResult &turn : turns) {
                for (ToolCallRecord &call : turn.toolCalls) {
                    if (call.labels.title.isEmpty() && call.labels.arguments.isEmpty())
                        call.labels = loop->toolLabels(call.name);
                }
            }
            report.setTurns(turns);
        }
        auto *viewer = new ExportViewer(report, path, m_window);
        viewer->show();
        Q_EMIT opened(viewer);
    });
}

// A Markdown file chosen to open: said plainly in a box the staff member closes (not the
// window's banner, which stays until something replaces it), with the JSON export of the
// same name offered when it is there.
void ConversationExporter::explainMarkdown(const QString &path, const QString &jsonBeside)
{
    auto *box = new QMessageBox(m_window);
    box->setObjectName(QStringLiteral("markdownExportNotice"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setIcon(QMessageBox::Information);
    box->setWindowTitle(tr("Open export"));
    box->setText(tr("Open export… opens JSON exports"));
    QString detail = tr("%1 is a Markdown file (a bug report or a case note), written to be "
                        "read in any editor. It keeps too little of the conversation to be "
                        "shown here again.")
                         .arg(QFileInfo(path).fileName());
    if (jsonBeside.isEmpty()) {
        detail += QLatin1Char('\n')
            + tr("To see a conversation here, export it as JSON (Conversation › Export "
                 "conversation…, JSON) and open that file.");
        box->setStandardButtons(QMessageBox::Close);
    } else {
        detail += QLatin1Char('\n')
            + tr("Its JSON export is beside it: %1.").arg(QFileInfo(jsonBeside).fileName());
        QPushButton *open = box->addButton(tr("Open the JSON export"), QMessageBox::AcceptRole);
        open->setObjectName(QStringLiteral("openJsonBesideButton"));
        box->addButton(QMessageBox::Close);
        box->setDefaultButton(open);
        connect(open, &QPushButton::clicked, this, [this, jsonBeside] { openExport(jsonBeside); });
    }
    box->setInformativeText(detail);
    box->open();
    Q_EMIT markdownNotOpened(path, jsonBeside, box);
}

// A refusal known at once still comes after the call, as every other answer does.
void ConversationExporter::refuseLater(const QString &title, const QString &reason)
{
    QMetaObject::invokeMethod(
        this, [this, title, reason] { Q_EMIT failed(title, reason); }, Qt::QueuedConnection);
}

// The dialogs are opened, never exec()'d: the window keeps serving the running turn.
void ConversationExporter::chooseExportPath(const QString &requestId, Scope scope)
{
    auto *dialog = new QFileDialog(
        m_window, requestId.isEmpty() ? tr("Export conversation") : tr("Export this turn"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    const QString json = jsonFilter();
    const QString markdown = markdownFilter();
    dialog->setNameFilters({json, markdown});
    dialog->setDefaultSuffix(QStringLiteral("json"));
    dialog->selectFile(
        scope == Scope::EveryConversation
            ? suggestedExportFileName(turnsOf(scope), redactor(), today(), QStringLiteral("json"))
            : suggestedFileName(requestId, QStringLiteral("json")));
    connect(dialog, &QFileDialog::filterSelected, dialog,
            [dialog, markdown](const QString &filter) {
                const QString suffix = filter == markdown ? QStringLiteral("md")
                                                          : QStringLiteral("json");
                dialog->setDefaultSuffix(suffix);
                // The name proposed (or typed) follows the filter: ".json" becomes ".md".
                const QString typed = dialog->selectedFiles().value(0);
                if (!typed.isEmpty() && !QFileInfo(typed).isDir())
                    dialog->selectFile(withSuffix(QFileInfo(typed).fileName(), suffix,
                                                  {QStringLiteral("json"), QStringLiteral("md")}));
            });
    connect(dialog, &QFileDialog::fileSelected, this,
            [this, dialog, requestId, scope, markdown](QString path) {
                // A name without .json or .md takes the chosen filter's.
                if (!ConversationExport::formatForPath(path))
                    path += dialog->selectedNameFilter() == markdown ? QStringLiteral(".md")
                                                                     : QStringLiteral(".json");
                if (requestId.isEmpty())
                    exportConversation(path, scope);
                else
                    exportTurn(path, requestId);
            });
    dialog->open();
}

void ConversationExporter::chooseCaseNotePath()
{
    auto *dialog = new QFileDialog(m_window, tr("Export case note"));
    dialog->setObjectName(QStringLiteral("caseNoteDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    const QString markdown = caseNoteFilter();
    const QString text = caseNoteTextFilter();
    dialog->setNameFilters({markdown, text});
    dialog->setDefaultSuffix(QStringLiteral("md"));
    dialog->selectFile(suggestedFileName(QString(), QStringLiteral("md")));
    connect(dialog, &QFileDialog::filterSelected, dialog, [dialog, text](const QString &filter) {
        const QString suffix = filter == text ? QStringLiteral("txt") : QStringLiteral("md");
        dialog->setDefaultSuffix(suffix);
        const QString typed = dialog->selectedFiles().value(0);
        if (!typed.isEmpty() && !QFileInfo(typed).isDir())
            dialog->selectFile(withSuffix(QFileInfo(typed).fileName(), suffix,
                                          {QStringLiteral("txt"), QStringLiteral("md")}));
    });
    connect(dialog, &QFileDialog::fileSelected, this, [this, dialog, text](QString path) {
        const QString suffix = QFileInfo(path).suffix().toLower();
        if (suffix != QLatin1String("md") && suffix != QLatin1String("txt"))
            path += dialog->selectedNameFilter() == text ? QStringLiteral(".txt")
                                                         : QStringLiteral(".md");
        exportCaseNote(path);
    });
    dialog->open();
}

void ConversationExporter::chooseExportToOpen()
{
    QFileDialog *dialog = openExistingFileDialog(m_window, tr("Open export (JSON)"), QString(),
                                                 openFilter());
    connect(dialog, &QFileDialog::fileSelected, this, &ConversationExporter::openExport);
}

void ConversationExporter::showTurnMenu(const QPoint &pos)
{
    if (!m_transcript)
        return;
    const QString requestId = m_transcript->requestIdAt(pos);
    if (requestId.isEmpty() || !m_turns->turn(requestId))
        return; // between turns, or still running
    auto *menu = new QMenu(m_transcript);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    QAction *action = menu->addAction(tr("Export this turn…"));
    connect(action, &QAction::triggered, this, [this, requestId] { chooseExportPath(requestId); });
    menu->popup(m_transcript->viewport()->mapToGlobal(pos));
}

void ConversationExporter::updateActions()
{
    m_exportConversation->setEnabled(!m_turns->isEmpty());
    m_exportEvery->setEnabled(!m_turns->isEmpty());
    m_exportTurn->setEnabled(!m_turns->isEmpty());
    m_copyCaseNote->setEnabled(!m_turns->isEmpty());
    m_exportCaseNote->setEnabled(!m_turns->isEmpty());
}

// The totals go into a conversation's export as last read; reading them is asynchronous, so
// they are refreshed as turns finish rather than when the staff member exports.
void ConversationExporter::refreshTotals()
{
    if (!m_runtime->isReady())
        return;
    await(m_runtime->monitor()->counterTotals(), this,
          [this](const QJsonObject &totals) { m_totals = totals; });
}

} // namespace AgentConsole
