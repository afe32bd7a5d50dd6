#include "transcriptmodel.h"

#include <QDateTime>

namespace AgentConsole {

TranscriptModel::TranscriptModel(QObject *parent)
    : QAbstractListModel(parent)
{
}

TranscriptModel::~TranscriptModel() = default;

int TranscriptModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_turns.size());
}

QVariant TranscriptModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const TranscriptTurn &turn = m_turns.at(index.row());
    switch (role) {
    case RequestIdRole:
        return turn.requestId;
    case Qt::DisplayRole:
    case QuestionRole:
        return turn.question;
    case AnswerRole:
        return turn.answer;
    case FinishedRole:
        return turn.result.has_value();
    default:
        return {};
    }
}

QHash<int, QByteArray> TranscriptModel::roleNames() const
{
    return {{RequestIdRole, "requestId"},
            {QuestionRole, "question"},
            {AnswerRole, "answer"},
            {FinishedRole, "finished"}};
}

int TranscriptModel::ensureTurn(const QString &requestId)
{
    const auto found = m_rows.constFind(requestId);
    if (found != m_rows.constEnd())
        return found.value();
    const int row = int(m_turns.size());
    beginInsertRows({}, row, row);
    TranscriptTurn turn;
    turn.requestId = requestId;
    turn.startedMs = QDateTime::currentMSecsSinceEpoch();
    m_turns.append(std::move(turn));
    m_rows.insert(requestId, row);
    endInsertRows();
    return row;
}

void TranscriptModel::clear()
{
    beginResetModel();
    m_turns.clear();
    m_rows.clear();
    endResetModel();
}

} // namespace AgentConsole
