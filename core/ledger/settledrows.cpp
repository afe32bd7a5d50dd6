#include "settledrows.h"

#include <QJsonDocument>

namespace AgentConsole::Internal {

std::optional<LedgerClaim> answerFromRow(LedgerStatus status, const QString &rowTool,
                                         const QByteArray &rowHash, const QJsonObject &result,
                                         const QString &toolName, const QByteArray &hash)
{
    using Outcome = LedgerClaim::Outcome;
    if (rowHash != hash || rowTool != toolName)
        return LedgerClaim{Outcome::Conflict,
                           {},
                           QStringLiteral("stored for tool %1 with hash %2")
                               .arg(rowTool, QString::fromLatin1(rowHash))};
    switch (status) {
    case LedgerStatus::Succeeded:
        return LedgerClaim{Outcome::AlreadySucceeded, result, {}};
    case LedgerStatus::Processing:
        return LedgerClaim{Outcome::InProgress, {}, {}};
    case LedgerStatus::FailedFinal:
        return LedgerClaim{Outcome::FailedFinal, result, {}};
    case LedgerStatus::OutcomeUnknown:
        return LedgerClaim{Outcome::OutcomeUnknown, result, {}};
    case LedgerStatus::FailedRetryable:
        break;
    }
    return std::nullopt;
}

std::optional<LedgerClaim> SettledRows::claim(const QString &key, const QString &toolName,
                                              const QByteArray &hash) const
{
    QMutexLocker lock(&m_mutex);
    const auto found = m_rows.constFind(key);
    if (found == m_rows.cend())
        return std::nullopt;
    return answerFromRow(found->status, found->toolName, found->requestHash, found->result,
                         toolName, hash);
}

void SettledRows::remember(const QString &key, SettledRow row)
{
    const qsizetype bytes = QJsonDocument(row.result).toJson(QJsonDocument::Compact).size();
    remember(key, std::move(row), bytes);
}

void SettledRows::remember(const QString &key, SettledRow row, qsizetype resultBytes)
{
    Q_ASSERT(isSettled(row.status));
    if (resultBytes > MaxResultBytes)
        return;
    QMutexLocker lock(&m_mutex);
    if (m_rows.contains(key))
        return;
    if (m_order.size() >= MaxRows)
        m_rows.remove(m_order.dequeue());
    m_rows.insert(key, std::move(row));
    m_order.enqueue(key);
}

} // namespace AgentConsole::Internal
