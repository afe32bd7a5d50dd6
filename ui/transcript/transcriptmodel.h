#pragma once

#include "core/turn/turnresult.h"

#include <QAbstractListModel>
#include <QHash>
#include <QMap>
#include <QSet>

#include <optional>

namespace AgentConsole {

// Everything the transcript knows of one turn, kept as values: what core reported, and the
// little the staff member changed (which cards are open). The widgets that show a turn are
// made from this when the turn scrolls into view and dropped when it leaves.
struct TranscriptTurn
{
    QString requestId;
    QString question;
    QString resumedStage; // empty unless AgentLoop::turnResumed said where it had stopped
    int restarts = 0;
    QString answer; // as streamed so far; the final answer once the turn is over
    QMap<int, ToolCallRecord> calls; // by ToolCallRecord::index
    std::optional<TurnResult> result; // set once the turn is over
    QSet<int> expandedCards;
    // While the model is asked: its latest retry (attempt 0: none) and the fallback model
    // answering instead of the primary (empty: the primary). Cleared when tools run.
    ModelProgress modelRetry;
    QString fallbackModel;
    qint64 startedMs = 0; // when the transcript first heard of it (ms since the epoch)
    // Stored unfinished by a run that stopped: nothing runs it until staff resume it.
    bool interrupted = false;
};

// The conversation as a list model, one row per turn in the order they were asked. The
// transcript's view reads it; so could any other view (roles from Qt::UserRole).
class TranscriptModel final : public QAbstractListModel
{
    Q_OBJECT

public:
    enum Role {
        RequestIdRole = Qt::UserRole + 1,
        QuestionRole,
        AnswerRole,
        FinishedRole,
    };

    explicit TranscriptModel(QObject *parent = nullptr);
    ~TranscriptModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // The row of requestId, made (appended) when it is new.
    int ensureTurn(const QString &requestId);
    int rowOf(const QString &requestId) const { return m_rows.value(requestId, -1); }
    const TranscriptTurn &turn(int row) const { return m_turns.at(row); }
    // Changes one turn and reports the row changed (roles: all).
    template <typename Change> void change(int row, Change &&what)
    {
        what(m_turns[row]);
        const QModelIndex at = index(row);
        Q_EMIT dataChanged(at, at);
    }
    void clear();

private:
    QList<TranscriptTurn> m_turns;
    QHash<QString, int> m_rows;
};

} // namespace AgentConsole
