#pragma once

#include "auditstatements.h"
#include "idempotencyledger.h"
#include "ledgerschema.h"
#include "settledrows.h"

#include <QSqlDatabase>
#include <QSqlQuery>

namespace AgentConsole::Internal {

// The ledger's transitions on one open connection, synchronously: what SqlLedger runs on its
// database thread. Each transition is one conditional statement in autocommit mode, so the
// store's own row locking decides races: a claim reads a row only to answer it (and to know
// whether a re-claim may be tried), never to decide that a claim is won. Statements are
// prepared once.
class LedgerStatements final
{
public:
    // `owner` is recorded with every claim and required to complete or take one over.
    LedgerStatements(const QSqlDatabase &db, SqlDialect dialect, const QString &owner);
    LedgerStatements(const LedgerStatements &) = delete;
    LedgerStatements &operator=(const LedgerStatements &) = delete;

    // Empty when every statement prepared; the driver's error otherwise (local log only).
    QString prepareError() const { return m_prepareError; }

    // When the answer comes from a row settled for good, `settled` (if given) receives it.
    LedgerClaim begin(const QString &key, const QString &toolName, const QByteArray &hash,
                      std::optional<SettledRow> *settled = nullptr);
    LedgerClaim recover(const QString &key, const QString &toolName, const QByteArray &hash,
                        std::optional<SettledRow> *settled = nullptr);
    // `resultJson`: the result as compact JSON (the caller serializes it once).
    LedgerCompletion complete(const QString &key, LedgerStatus status,
                              const QByteArray &resultJson);
    LedgerLookup lookup(const QString &key);
    LedgerRecent recentSuccesses(const QString &keyPrefix, const QString &toolName,
                                 std::chrono::seconds window, int limit);
    // The audit trail's statements on the same connection (docs/AUDIT.md).
    AuditStatements &audit() { return m_audit; }

private:
    QDateTime timestampOf(const QVariant &value) const;

    SqlDialect m_dialect;
    QString m_owner;
    QString m_prepareError;
    QSqlQuery m_insert;
    QSqlQuery m_reclaim;
    QSqlQuery m_takeOver;
    QSqlQuery m_select;
    QSqlQuery m_complete;
    QSqlQuery m_recent; // prepared when first used: most consoles never ask
    AuditStatements m_audit;
};

} // namespace AgentConsole::Internal
