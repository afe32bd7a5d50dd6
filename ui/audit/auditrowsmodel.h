#pragma once

#include "core/console/writeaudit.h"
#include "core/turn/turnresult.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>

#include <functional>

namespace AgentConsole {

// The audit trail's rows as the Audit view lists them, newest first, read-only: when, who,
// what happened, the tool and its arguments in staff words, the outcome and how it was
// learned. Core's wire names (events, result codes, the tools' argument names) are put in
// the staff member's words here; the values stay as stored. Bounded: a view holds at most
// maxRows rows (the staff member narrows the filters for older ones).
class AuditRowsModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    // The arguments last: the longest cell, it takes the room that is left.
    enum Column { When, Agent, Event, Tool, Outcome, How, Write, ColumnCount };
    // The row's AuditEntry::id, and its outcome's tone (a Tone as int) for the painted chip.
    static constexpr int IdRole = Qt::UserRole;
    static constexpr int ToneRole = Qt::UserRole + 1;
    static constexpr int maxRows = 2000;

    // `labels`: what staff see of a tool's calls (AgentLoop::toolLabels), asked per row; none:
    // the tools' names and the arguments' keys.
    explicit AuditRowsModel(QObject *parent = nullptr);

    void setToolLabels(std::function<ToolLabels(const QString &)> labels);
    // Replaces every row, or adds older ones after them (up to maxRows).
    void setRows(const QList<AuditEntry> &rows);
    void appendRows(const QList<AuditEntry> &rows);
    const QList<AuditEntry> &rows() const { return m_rows; }
    bool isFull() const { return m_rows.size() >= maxRows; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;

    // One cell's words, as shown.
    QString text(const AuditEntry &entry, Column column) const;

private:
    const ToolLabels &labelsOf(const QString &toolName) const;

    QList<AuditEntry> m_rows;
    std::function<ToolLabels(const QString &)> m_labels;
    // Asked once per tool, not once per painted cell (a descriptor is copied each time).
    mutable QHash<QString, ToolLabels> m_labelsByTool;
};

} // namespace AgentConsole
