#pragma once

#include "audittrail.h"
#include "ledgerschema.h"

#include <QSqlDatabase>
#include <QSqlQuery>

namespace AgentConsole::Internal {

// The audit trail's statements on one open connection, synchronously: what SqlLedger runs on
// its database thread, beside the ledger's (LedgerStatements owns one). An append is one
// INSERT in autocommit mode; a read is one SELECT per chunk of turns (one without them).
class AuditStatements final
{
public:
    // Turns bound in one SELECT (two values each); a longer list is read in chunks.
    static constexpr int TurnsPerStatement = 400;

    // `consoleId` is recorded with every row (the ledger's owner).
    AuditStatements(const QSqlDatabase &db, SqlDialect dialect, const QString &consoleId);
    AuditStatements(const AuditStatements &) = delete;
    AuditStatements &operator=(const AuditStatements &) = delete;

    // Empty when the append statement prepared; the driver's error otherwise (log only).
    QString prepareError() const { return m_prepareError; }

    // `argumentsJson`: entry.arguments as compact JSON (the caller serializes them once).
    AuditAppend append(const AuditEntry &entry, const QByteArray &argumentsJson);
    AuditPage read(const AuditQuery &query);

private:
    AuditPage readChunk(const AuditQuery &query, const QList<AuditTurn> &turns, int limit);
    QString timeParameter() const;
    QVariant timeValue(const QDateTime &at) const;
    QDateTime timestampOf(const QVariant &value) const;

    QSqlDatabase m_db;
    SqlDialect m_dialect;
    QString m_consoleId;
    QString m_prepareError;
    QSqlQuery m_insert;
};

} // namespace AgentConsole::Internal
