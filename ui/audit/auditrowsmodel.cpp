#include "auditrowsmodel.h"

#include "ui/common/consolepalette.h"
#include "ui/transcript/toolcalltext.h"

#include <QCoreApplication>
#include <QGuiApplication>
#include <QPalette>

namespace AgentConsole {

namespace {

// The Audit view's words, in one translation context with the dock's.
struct AuditWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::AuditTrailDock)
};

QString eventText(AuditEntry::Event event)
{
    switch (event) {
    case AuditEntry::Event::Confirmed:
        return AuditWords::tr("Confirmed");
    case AuditEntry::Event::Started:
        return AuditWords::tr("Started (needs no confirmation)");
    case AuditEntry::Event::Outcome:
        return AuditWords::tr("Outcome");
    case AuditEntry::Event::Settlement:
        return AuditWords::tr("Settled later");
    }
    return {};
}

QString viaText(AuditEntry::Via via)
{
    switch (via) {
    case AuditEntry::Via::None:
        return {};
    case AuditEntry::Via::Backend:
        return AuditWords::tr("The write ran");
    case AuditEntry::Via::Ledger:
        return AuditWords::tr("Answered by the ledger, not run again");
    case AuditEntry::Via::Stopped:
        return AuditWords::tr("The request was stopped");
    case AuditEntry::Via::Dismissed:
        return AuditWords::tr("The interrupted request was dismissed");
    case AuditEntry::Via::Resume:
        return AuditWords::tr("Learned when the request was resumed");
    case AuditEntry::Via::Replay:
        return AuditWords::tr("Learned when the request was asked again");
    }
    return {};
}

Tone toneOf(const AuditEntry &entry)
{
    switch (entry.outcome) {
    case AuditEntry::Outcome::Succeeded:
        return Tone::Success;
    case AuditEntry::Outcome::Failed:
        return Tone::Danger;
    case AuditEntry::Outcome::Unknown:
        return Tone::Warning;
    case AuditEntry::Outcome::None:
        break;
    }
    return Tone::Neutral;
}

} // namespace

AuditRowsModel::AuditRowsModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void AuditRowsModel::setToolLabels(std::function<ToolLabels(const QString &)> labels)
{
    m_labels = std::move(labels);
    m_labelsByTool.clear();
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

void AuditRowsModel::setRows(const QList<AuditEntry> &rows)
{
    beginResetModel();
    m_labelsByTool.clear(); // a tool registered since (an MCP server's) has its words now
    m_rows = rows.mid(0, maxRows);
    endResetModel();
}

void AuditRowsModel::appendRows(const QList<AuditEntry> &rows)
{
    const qsizetype room = maxRows - m_rows.size();
    if (room <= 0 || rows.isEmpty())
        return;
    const QList<AuditEntry> added = rows.mid(0, room);
    beginInsertRows({}, int(m_rows.size()), int(m_rows.size() + added.size()) - 1);
    m_rows.append(added);
    endInsertRows();
}

int AuditRowsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int AuditRowsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString AuditRowsModel::text(const AuditEntry &entry, Column column) const
{
    // The call as the cards word it: the tool's title and its arguments' labels.
    ToolCallRecord call;
    call.name = entry.toolName;
    call.arguments = entry.arguments;
    call.labels = labelsOf(entry.toolName);
    switch (column) {
    case When:
        return entry.at.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    case Agent:
        return entry.staffId;
    case Event:
        return eventText(entry.event);
    case Tool:
        return ToolCallText::toolTitle(call);
    case Write: {
        QStringList parts;
        for (const ToolCallText::ArgumentRow &row : ToolCallText::argumentRows(call))
            parts.append(AuditWords::tr("%1: %2").arg(row.label, row.value));
        return parts.join(QStringLiteral(" · "));
    }
    case Outcome:
        switch (entry.outcome) {
        case AuditEntry::Outcome::None:
            return {};
        case AuditEntry::Outcome::Succeeded: {
            if (entry.objectId.isEmpty())
                return AuditWords::tr("Succeeded");
            // What it made, in the tool's own word ("Ticket T-000012").
            const QString word = call.labels.created.label.isEmpty()
                ? QString()
                : QCoreApplication::translate(ToolLabels::TranslationContext,
                                              call.labels.created.label.toUtf8().constData());
            return word.isEmpty() ? AuditWords::tr("Succeeded: %1").arg(entry.objectId)
                                  : AuditWords::tr("Succeeded: %1 %2").arg(word, entry.objectId);
        }
        case AuditEntry::Outcome::Failed: {
            ToolResult result;
            result.setCodeName(entry.resultCode);
            return AuditWords::tr("Not done: %1").arg(ToolCallText::statusOfResult(result).text);
        }
        case AuditEntry::Outcome::Unknown:
            return AuditWords::tr("Unknown: check before writing again");
        }
        return {};
    case How:
        return viaText(entry.via);
    case ColumnCount:
        break;
    }
    return {};
}

const ToolLabels &AuditRowsModel::labelsOf(const QString &toolName) const
{
    auto found = m_labelsByTool.find(toolName);
    if (found == m_labelsByTool.end())
        found = m_labelsByTool.insert(toolName, m_labels ? m_labels(toolName) : ToolLabels());
    return *found;
}

QVariant AuditRowsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const AuditEntry &entry = m_rows.at(index.row());
    const auto column = Column(index.column());
    switch (role) {
    case Qt::DisplayRole:
        return text(entry, column);
    case Qt::ToolTipRole: {
        // The cell whole (the arguments are often cut), then the ids a support engineer
        // looks the write up by.
        const QString ids = AuditWords::tr("Operation %1\nConversation %2, request %3\nTenant %4")
                                .arg(entry.operationId, entry.conversationId, entry.requestId,
                                     entry.tenantId);
        const QString cell = text(entry, column);
        return cell.isEmpty() ? ids : cell + QStringLiteral("\n\n") + ids;
    }
    case Qt::ForegroundRole:
        if (column == Outcome && entry.outcome != AuditEntry::Outcome::None)
            return Internal::toneColors(toneOf(entry), QGuiApplication::palette()).foreground;
        return {};
    case IdRole:
        return entry.id;
    case ToneRole:
        return int(toneOf(entry));
    default:
        return {};
    }
}

QVariant AuditRowsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case When:
        return AuditWords::tr("When");
    case Agent:
        return AuditWords::tr("Agent");
    case Event:
        return AuditWords::tr("Event");
    case Tool:
        return AuditWords::tr("Tool");
    case Write:
        return AuditWords::tr("Arguments");
    case Outcome:
        return AuditWords::tr("Outcome");
    case How:
        return AuditWords::tr("How it was learned");
    case ColumnCount:
        break;
    }
    return {};
}

Qt::ItemFlags AuditRowsModel::flags(const QModelIndex &index) const
{
    // Read-only: rows are selected and copied, never edited.
    return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable : Qt::NoItemFlags;
}

} // namespace AgentConsole
