#pragma once

#include "audittrail.h"
#include "databaseworker.h"
#include "idempotencyledger.h"
#include "ledgerschema.h"

#include <QSqlDatabase>
#include <QStringList>

#include <memory>

namespace AgentConsole::Internal {

// How to reach one store through Qt Sql. Plain data: it is copied into the tasks that run on
// the database thread, so they never reach back into the ledger object.
struct SqlStoreRecipe
{
    SqlDialect dialect = SqlDialect::Sqlite;
    QString driver; // "QSQLITE" or "QPSQL"
    QString databaseName; // file path or database
    QString hostName; // PostgreSQL: host name or Unix socket directory
    int port = -1;
    QString userName;
    QString password; // never logged
    QString connectOptions; // QSqlDatabase::setConnectOptions
    // Run after connecting and before migrating; each must succeed. A statement that returns
    // a row whose first value must read a certain way is given as "SQL=>expected".
    QStringList sessionStatements;
    QString description; // safe for staff and logs; English, as the log is
    QString shownName; // the same in the window's language, for the staff messages
    QString owner; // LedgerOptions::owner
    QString keptPath; // LedgerOptions::keptCompletionsPath
};

// A connection named `connectionName` made as `recipe` says (driver, database, host, port,
// user, password, options), not opened yet; invalid when the driver is missing. On the thread
// that will use it.
QSqlDatabase addConnection(const SqlStoreRecipe &recipe, const QString &connectionName);

struct ConnectionState;
class SettledRows;

// The one implementation of IdempotencyLedger over Qt Sql, and of the AuditTrail kept in the
// same store; SqliteLedger and PostgresLedger only say how to connect. All SQL, including
// connecting and closing, runs on m_worker's thread; the connection and its prepared statements
// live in a ConnectionState that only that thread touches. A replay of a row this ledger has seen
// settled is answered on the calling thread (SettledRows), without a round trip.
class SqlLedger : public IdempotencyLedger, public AuditTrail
{
public:
    ~SqlLedger() override;

    QFuture<LedgerOpenResult> open() override;
    QFuture<LedgerClaim> begin(const QString &key, const QString &toolName,
                               const QByteArray &requestHash) override;
    QFuture<LedgerClaim> recover(const QString &key, const QString &toolName,
                                 const QByteArray &requestHash) override;
    QFuture<LedgerCompletion> complete(const QString &key, LedgerStatus status,
                                       const QJsonObject &result) override;
    QFuture<LedgerLookup> lookup(const QString &key) override;
    QFuture<LedgerRecent> recentSuccesses(const QString &keyPrefix, const QString &toolName,
                                          std::chrono::seconds window, int limit) override;
    QFuture<qsizetype> recordKept() override;
    QString description() const override { return m_recipe.description; }
    AuditTrail *auditTrail() override { return this; }

    // AuditTrail
    QFuture<AuditAppend> append(AuditEntry entry, Redaction redact = {}) override;
    QFuture<AuditPage> read(const AuditQuery &query) override;

protected:
    explicit SqlLedger(SqlStoreRecipe recipe);

private:
    SqlStoreRecipe m_recipe;
    std::shared_ptr<ConnectionState> m_state;
    std::shared_ptr<SettledRows> m_settled;
    DatabaseWorker m_worker; // last: destroyed (and its queue drained) first
};

} // namespace AgentConsole::Internal
