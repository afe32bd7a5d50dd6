#include "conversationexporter.h"

#include "exportviewer.h"
#include "ui/common/existingfiledialog.h"
#include "ui/transcript/transcriptview.h"

#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/export/exportfile.h"
#include "core/turn/finishedturns.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QThreadPool>

namespace AgentConsole {
namespace {

const QString kJsonFilter = QStringLiteral("JSON export (*.json)");
const QString kMarkdownFilter = QStringLiteral("Markdown bug report (*.md)");

} // namespace

ConversationExporter::ConversationExporter(
    AgentRuntime *runtime, TranscriptView *transcript, QWidget *window)
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
    connect(
        m_exportConversation, &QAction::triggered, this, [this] { chooseExportPath(QString()); });
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
    m_openExport = new QAction(tr("&Open export…"), this);
    m_openExport->setObjectName(QStringLiteral("openExportAction"));
    m_openExport->setToolTip(tr("View an exported JSON conversation, read-only."));
    connect(m_openExport, &QAction::triggered, this, &ConversationExporter::chooseExportToOpen);

    // A right-click on a finished turn offers that turn.
    transcript->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(transcript, &QWidget::customContextMenuRequested, this,
        &ConversationExporter::showTurnMenu);
    updateActions();
}

ConversationExporter::~ConversationExporter() = default;

void ConversationExporter::attach(AgentLoop *loop)
{
    if (loop)
        connect(
            loop, &AgentLoop::turnFinished, m_turns, &FinishedTurns::add, Qt::UniqueConnection);
}

void ConversationExporter::addActionsTo(QMenu *menu)
{
    menu->addAction(m_exportConversation);
    menu->addAction(m_exportEvery);
    menu->addAction(m_exportTurn);
    menu->addAction(m_openExport);
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
    turns.removeIf([&conversation](const TurnResult &turn) {
        return turn.conversationId != conversation;
    });
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
    write(std::move(report), path, int(turns.size()));
}

void ConversationExporter::exportTurn(const QString &path, const QString &requestId)
{
    const std::optional<TurnResult> turn
        = requestId.isEmpty() ? m_turns->latest() : m_turns->turn(requestId);
    if (!turn) {
        refuseLater(tr("The export was not written"),
                    tr("That turn has not finished, or is not in this conversation."));
        return;
    }
    write(ConversationExport::fromRuntimeState(*m_runtime, {*turn}), path, 1);
}

void ConversationExporter::write(ConversationExport report, const QString &path, int turns)
{
    ++m_filesInFlight;
    Q_EMIT writing(path);
    await(writeExportFile(m_filePool, std::move(report), path,
                          m_runtime->options().dataDirectory),
          this, [this, path, turns](const ExportWritten &answer) {
        --m_filesInFlight;
        if (answer.written)
            Q_EMIT exported(path, turns);
        else
            Q_EMIT failed(tr("The export was not written"), answer.error);
    });
}

void ConversationExporter::openExport(const QString &path)
{
    ++m_filesInFlight;
    Q_EMIT reading(path);
    await(readExportFile(m_filePool, path), this,
          [this, path](FileRead<ConversationExport> read) {
        --m_filesInFlight;
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
    dialog->setNameFilters({kJsonFilter, kMarkdownFilter});
    dialog->setDefaultSuffix(QStringLiteral("json"));
    connect(dialog, &QFileDialog::filterSelected, dialog, [dialog](const QString &filter) {
        dialog->setDefaultSuffix(
            filter == kMarkdownFilter ? QStringLiteral("md") : QStringLiteral("json"));
    });
    connect(dialog, &QFileDialog::fileSelected, this,
            [this, dialog, requestId, scope](QString path) {
        // A name without .json or .md takes the chosen filter's.
        if (!ConversationExport::formatForPath(path))
            path += dialog->selectedNameFilter() == kMarkdownFilter ? QStringLiteral(".md")
                                                                    : QStringLiteral(".json");
        if (requestId.isEmpty())
            exportConversation(path, scope);
        else
            exportTurn(path, requestId);
    });
    dialog->open();
}

void ConversationExporter::chooseExportToOpen()
{
    QFileDialog *dialog
        = openExistingFileDialog(m_window, tr("Open export"), QString(), kJsonFilter);
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
}

// The totals go into a conversation's export as last read; reading them is asynchronous, so
// they are refreshed as turns finish rather than when the staff member exports.
void ConversationExporter::refreshTotals()
{
    if (!m_runtime->isReady())
        return;
    await(m_runtime->counterTotals(), this,
        [this](const QJsonObject &totals) { m_totals = totals; });
}

} // namespace AgentConsole
