#pragma once

#include "idempotencyledger.h"

#include <QHash>
#include <QMutex>
#include <QQueue>

namespace AgentConsole::Internal {

// What a settled row (SUCCEEDED, FAILED_FINAL, OUTCOME_UNKNOWN) holds: the part of it a
// claim is answered from.
struct SettledRow
{
    QString toolName;
    QByteArray requestHash;
    LedgerStatus status = LedgerStatus::Succeeded;
    QJsonObject result;
};

// SUCCEEDED, FAILED_FINAL and OUTCOME_UNKNOWN: nothing moves such a row again.
inline bool isSettled(LedgerStatus status)
{
    return status == LedgerStatus::Succeeded || status == LedgerStatus::FailedFinal
        || status == LedgerStatus::OutcomeUnknown;
}

// The answer a claim gets from a row that is already there: nullopt for a FAILED_RETRYABLE
// row of the same request, which may be claimed again (a statement decides that).
std::optional<LedgerClaim> answerFromRow(LedgerStatus status, const QString &rowTool,
                                         const QByteArray &rowHash, const QJsonObject &result,
                                         const QString &toolName, const QByteArray &hash);

// The rows one ledger has seen settled for good. Nothing moves a settled row again (only
// PROCESSING and FAILED_RETRYABLE rows change), so a replay of one of them is answered from
// here without the database thread. Bounded: the oldest are forgotten, and a large result is
// never kept (the store still answers both). Safe from any thread.
class SettledRows final
{
public:
    static constexpr qsizetype MaxRows = 1024;
    static constexpr qsizetype MaxResultBytes = 16 * 1024;

    std::optional<LedgerClaim> claim(const QString &key, const QString &toolName,
                                     const QByteArray &hash) const;
    // `row.status` must be settled; `resultBytes` is the result's size as stored (compact
    // JSON), which the caller has at hand; the overload without it measures.
    void remember(const QString &key, SettledRow row, qsizetype resultBytes);
    void remember(const QString &key, SettledRow row);

private:
    mutable QMutex m_mutex;
    QHash<QString, SettledRow> m_rows;
    QQueue<QString> m_order; // oldest first
};

} // namespace AgentConsole::Internal
