#include "ledgerstatements.h"

#include <QJsonDocument>
#include <QSqlError>

namespace AgentConsole::Internal {

namespace {

QString nowExpression(SqlDialect dialect)
{
    // The store's clock, not each console's, so rows written by several machines compare.
    return dialect == SqlDialect::Sqlite ? QStringLiteral("strftime('%Y-%m-%dT%H:%M:%fZ', 'now')")
                                         : QStringLiteral("now()");
}

QString failure(const char *what, const QSqlQuery &query)
{
    return QLatin1String(what) + QStringLiteral(": ") + query.lastError().text();
}

QJsonObject parseResult(const QVariant &value)
{
    if (value.isNull())
        return {};
    return QJsonDocument::fromJson(value.toString().toUtf8()).object();
}

// A row read by begin() may move before its statement runs (removed, re-claimed by another
// caller); then it is claimed or read again, a bounded number of times.
constexpr int MaxClaimRounds = 3;

} // namespace

LedgerStatements::LedgerStatements(const QSqlDatabase &db, SqlDialect dialect,
                                   const QString &owner)
    : m_dialect(dialect)
    // Never a null QString: Qt Sql binds that as NULL, and NULL equals nothing.
    , m_owner(owner.isNull() ? QStringLiteral("") : owner)
    , m_insert(db)
    , m_reclaim(db)
    , m_takeOver(db)
    , m_select(db)
    , m_complete(db)
    , m_recent(db)
    , m_audit(db, dialect, m_owner)
{
    const QString now = nowExpression(dialect);
    auto prepare = [this](QSqlQuery &query, const QString &sql) {
        if (!query.prepare(sql) && m_prepareError.isEmpty())
            m_prepareError = query.lastError().text();
    };
    prepare(m_insert,
            QStringLiteral("INSERT INTO idempotency_ledger (idempotency_key, tool_name, "
                           "request_hash, status, result_json, created_at, updated_at, owner) "
                           "VALUES (?, ?, ?, 'PROCESSING', NULL, %1, %1, ?) "
                           "ON CONFLICT (idempotency_key) DO NOTHING")
                .arg(now));
    prepare(m_reclaim,
            QStringLiteral("UPDATE idempotency_ledger SET status = 'PROCESSING', "
                           "result_json = NULL, updated_at = %1, owner = ? "
                           "WHERE idempotency_key = ? AND status = 'FAILED_RETRYABLE' "
                           "AND request_hash = ? AND tool_name = ?")
                .arg(now));
    prepare(m_takeOver,
            QStringLiteral("UPDATE idempotency_ledger SET updated_at = %1 "
                           "WHERE idempotency_key = ? AND status = 'PROCESSING' "
                           "AND request_hash = ? AND tool_name = ? "
                           "AND COALESCE(owner, '') = ?")
                .arg(now));
    prepare(m_select,
            QStringLiteral("SELECT tool_name, request_hash, status, result_json, created_at, "
                           "updated_at FROM idempotency_ledger WHERE idempotency_key = ?"));
    prepare(m_complete,
            QStringLiteral("UPDATE idempotency_ledger SET status = ?, result_json = ?, "
                           "updated_at = %1 "
                           "WHERE idempotency_key = ? AND status = 'PROCESSING' "
                           "AND COALESCE(owner, '') = ?")
                .arg(now));
    if (m_prepareError.isEmpty())
        m_prepareError = m_audit.prepareError();
}

LedgerClaim LedgerStatements::begin(const QString &key, const QString &toolName,
                                    const QByteArray &hash, std::optional<SettledRow> *settled)
{
    using Outcome = LedgerClaim::Outcome;
    const QString hashText = QString::fromLatin1(hash);
    for (int round = 0; round < MaxClaimRounds; ++round) {
        m_insert.addBindValue(key);
        m_insert.addBindValue(toolName);
        m_insert.addBindValue(hashText);
        m_insert.addBindValue(m_owner);
        if (!m_insert.exec())
            return {Outcome::StoreError, {}, failure("insert", m_insert)};
        const int inserted = m_insert.numRowsAffected();
        m_insert.finish();
        if (inserted == 1)
            return {Outcome::Claimed, {}, {}};

        // The row is there: reading it answers every state but one, without another write.
        const LedgerLookup found = lookup(key);
        if (found.outcome == LedgerLookup::Outcome::StoreError)
            return {Outcome::StoreError, {}, found.detail};
        if (!found.row)
            continue; // removed in between (not done by this code, but harmless): insert again
        const LedgerRow &row = *found.row;
        if (std::optional<LedgerClaim> answer = answerFromRow(
                row.status, row.toolName, row.requestHash, row.result, toolName, hash)) {
            if (settled && isSettled(row.status))
                *settled = SettledRow{row.toolName, row.requestHash, row.status, row.result};
            return *answer;
        }

        // FAILED_RETRYABLE with the same request: only the conditional UPDATE claims it.
        m_reclaim.addBindValue(m_owner);
        m_reclaim.addBindValue(key);
        m_reclaim.addBindValue(hashText);
        m_reclaim.addBindValue(toolName);
        if (!m_reclaim.exec())
            return {Outcome::StoreError, {}, failure("reclaim", m_reclaim)};
        const int reclaimed = m_reclaim.numRowsAffected();
        m_reclaim.finish();
        if (reclaimed == 1)
            return {Outcome::Claimed, row.result,
                    QStringLiteral("re-claimed after a retryable failure"), true};
        // Another caller re-claimed it in between: look again.
    }
    // Another caller keeps re-claiming and failing the key under us: it is being worked on.
    return {Outcome::InProgress, {}, QStringLiteral("row kept changing while claiming")};
}

LedgerClaim LedgerStatements::recover(const QString &key, const QString &toolName,
                                      const QByteArray &hash, std::optional<SettledRow> *settled)
{
    m_takeOver.addBindValue(key);
    m_takeOver.addBindValue(QString::fromLatin1(hash));
    m_takeOver.addBindValue(toolName);
    m_takeOver.addBindValue(m_owner);
    if (!m_takeOver.exec())
        return {LedgerClaim::Outcome::StoreError, {}, failure("take over", m_takeOver)};
    const int takenOver = m_takeOver.numRowsAffected();
    m_takeOver.finish();
    if (takenOver == 1)
        return {LedgerClaim::Outcome::Claimed,
                {},
                QStringLiteral("took over a PROCESSING row left by an interrupted run"),
                true};
    return begin(key, toolName, hash, settled);
}

LedgerCompletion LedgerStatements::complete(const QString &key, LedgerStatus status,
                                            const QByteArray &resultJson)
{
    using Outcome = LedgerCompletion::Outcome;
    if (status == LedgerStatus::Processing)
        return {Outcome::NotProcessing, QStringLiteral("complete() needs a final status")};
    m_complete.addBindValue(LedgerState::name(status));
    m_complete.addBindValue(QString::fromUtf8(resultJson));
    m_complete.addBindValue(key);
    m_complete.addBindValue(m_owner);
    if (!m_complete.exec())
        return {Outcome::StoreError, failure("complete", m_complete)};
    const int updated = m_complete.numRowsAffected();
    m_complete.finish();
    if (updated != 1)
        return {Outcome::NotProcessing,
                QStringLiteral("no PROCESSING row of this owner for the key")};
    return {Outcome::Completed, {}};
}

LedgerLookup LedgerStatements::lookup(const QString &key)
{
    using Outcome = LedgerLookup::Outcome;
    m_select.addBindValue(key);
    if (!m_select.exec())
        return {Outcome::StoreError, std::nullopt, failure("select", m_select)};
    if (!m_select.next()) {
        // finish() ends SQLite's read transaction now; an unfinished SELECT would keep its
        // snapshot and hold back the WAL checkpoint of every process sharing the file.
        m_select.finish();
        return {Outcome::NotFound, std::nullopt, {}};
    }
    LedgerRow row;
    row.idempotencyKey = key;
    row.toolName = m_select.value(0).toString();
    row.requestHash = m_select.value(1).toString().toLatin1();
    const QString statusName = m_select.value(2).toString();
    row.result = parseResult(m_select.value(3));
    row.createdAt = timestampOf(m_select.value(4));
    row.updatedAt = timestampOf(m_select.value(5));
    m_select.finish();
    const std::optional<LedgerStatus> status = LedgerState::fromName(statusName);
    if (!status)
        return {Outcome::StoreError, std::nullopt,
                QStringLiteral("unknown status '%1'").arg(statusName)};
    row.status = *status;
    return {Outcome::Found, row, {}};
}

LedgerRecent LedgerStatements::recentSuccesses(const QString &keyPrefix, const QString &toolName,
                                               std::chrono::seconds window, int limit)
{
    using Outcome = LedgerRecent::Outcome;
    if (m_recent.lastQuery().isEmpty()) {
        // A prefix compared as a substring, not with LIKE: '_' in a tenant id is a wildcard
        // there. The window is measured on the store's clock, as created_at was written. The
        // casts let PostgreSQL type the parameters when it prepares the statement.
        const QString since = m_dialect == SqlDialect::Sqlite
            ? QStringLiteral("strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || ? || ' seconds')")
            : QStringLiteral("now() - (CAST(? AS double precision) * interval '1 second')");
        const QString sql
            = QStringLiteral(
                  "SELECT idempotency_key, request_hash, result_json, created_at, updated_at "
                  "FROM idempotency_ledger WHERE tool_name = ? AND status = 'SUCCEEDED' "
                  "AND substr(idempotency_key, 1, length(CAST(? AS text))) = CAST(? AS text) "
                  "AND created_at >= %1 "
                  "ORDER BY created_at DESC LIMIT ?")
                  .arg(since);
        if (!m_recent.prepare(sql))
            return {Outcome::StoreError, {}, failure("prepare recent", m_recent)};
    }
    m_recent.addBindValue(toolName);
    m_recent.addBindValue(keyPrefix);
    m_recent.addBindValue(keyPrefix);
    m_recent.addBindValue(qint64(window.count()));
    m_recent.addBindValue(limit);
    if (!m_recent.exec())
        return {Outcome::StoreError, {}, failure("recent", m_recent)};
    LedgerRecent recent{Outcome::Found, {}, {}};
    while (m_recent.next()) {
        LedgerRow row;
        row.idempotencyKey = m_recent.value(0).toString();
        row.toolName = toolName;
        row.requestHash = m_recent.value(1).toString().toLatin1();
        row.status = LedgerStatus::Succeeded;
        row.result = parseResult(m_recent.value(2));
        row.createdAt = timestampOf(m_recent.value(3));
        row.updatedAt = timestampOf(m_recent.value(4));
        recent.rows.append(row);
    }
    m_recent.finish(); // ends SQLite's read transaction (see lookup())
    return recent;
}

QDateTime LedgerStatements::timestampOf(const QVariant &value) const
{
    if (m_dialect == SqlDialect::Sqlite)
        return QDateTime::fromString(value.toString(), Qt::ISODateWithMs);
    return value.toDateTime().toUTC();
}

} // namespace AgentConsole::Internal
