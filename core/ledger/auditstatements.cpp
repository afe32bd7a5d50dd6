#include "auditstatements.h"

#include <QJsonDocument>
#include <QSqlError>

#include <algorithm>

namespace AgentConsole::Internal {

namespace {

const QString Columns = QStringLiteral(
    "audit_id, recorded_at, event, staff_id, tenant_id, conversation_id, request_id, "
    "operation_id, tool_name, idempotency_key, arguments_json, outcome, result_code, "
    "object_id, via, console_id");

QString failure(const char *what, const QSqlQuery &query)
{
    return QLatin1String(what) + QStringLiteral(": ") + query.lastError().text();
}

// Never a null QString for a NOT NULL column: Qt Sql binds that as NULL.
QString text(const QString &value)
{
    return value.isNull() ? QStringLiteral("") : value;
}

// NULL for an empty optional column, so that the store holds nothing rather than ''.
QVariant optionalText(const QString &value)
{
    return value.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(value);
}

} // namespace

AuditStatements::AuditStatements(const QSqlDatabase &db, SqlDialect dialect,
                                 const QString &consoleId)
    : m_db(db)
    , m_dialect(dialect)
    , m_consoleId(consoleId)
    , m_insert(db)
{
    // The store's clock stamps the row, as it stamps the ledger's: rows that several
    // machines write compare. SQLite writes ISO 8601 UTC text with milliseconds.
    const bool sqlite = dialect == SqlDialect::Sqlite;
    const QString sql = QStringLiteral(
                            "INSERT INTO audit_trail (%1event, staff_id, tenant_id, "
                            "conversation_id, request_id, operation_id, tool_name, "
                            "idempotency_key, arguments_json, outcome, result_code, object_id, "
                            "via, console_id) VALUES (%2?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                            "?) RETURNING audit_id, recorded_at")
                            .arg(sqlite ? QStringLiteral("recorded_at, ") : QString(),
                                 sqlite ? QStringLiteral("strftime('%Y-%m-%dT%H:%M:%fZ', "
                                                         "'now'), ")
                                        : QString());
    if (!m_insert.prepare(sql))
        m_prepareError = m_insert.lastError().text();
}

AuditAppend AuditStatements::append(const AuditEntry &entry, const QByteArray &argumentsJson)
{
    using Outcome = AuditAppend::Outcome;
    m_insert.addBindValue(AuditEntry::eventName(entry.event));
    m_insert.addBindValue(text(entry.staffId));
    m_insert.addBindValue(text(entry.tenantId));
    m_insert.addBindValue(text(entry.conversationId));
    m_insert.addBindValue(text(entry.requestId));
    m_insert.addBindValue(text(entry.operationId));
    m_insert.addBindValue(text(entry.toolName));
    m_insert.addBindValue(text(entry.idempotencyKey));
    m_insert.addBindValue(QString::fromUtf8(argumentsJson));
    m_insert.addBindValue(optionalText(AuditEntry::outcomeName(entry.outcome)));
    m_insert.addBindValue(optionalText(entry.resultCode));
    m_insert.addBindValue(optionalText(entry.objectId));
    m_insert.addBindValue(optionalText(AuditEntry::viaName(entry.via)));
    m_insert.addBindValue(optionalText(m_consoleId));
    if (!m_insert.exec())
        return {Outcome::StoreError, 0, failure("append", m_insert)};
    AuditAppend appended{Outcome::Appended, 0, {}};
    if (m_insert.next())
        appended.id = m_insert.value(0).toLongLong();
    m_insert.finish();
    return appended;
}

QString AuditStatements::timeParameter() const
{
    // PostgreSQL is handed the time as ISO 8601 text, typed where it is compared.
    return m_dialect == SqlDialect::Sqlite ? QStringLiteral("?")
                                           : QStringLiteral("CAST(? AS timestamptz)");
}

QVariant AuditStatements::timeValue(const QDateTime &at) const
{
    // SQLite compares the stored text: the same shape, to the millisecond.
    return at.toUTC().toString(m_dialect == SqlDialect::Sqlite
                                   ? QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzzZ")
                                   : QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzz+00:00"));
}

QDateTime AuditStatements::timestampOf(const QVariant &value) const
{
    if (m_dialect == SqlDialect::Sqlite)
        return QDateTime::fromString(value.toString(), Qt::ISODateWithMs);
    return value.toDateTime().toUTC();
}

AuditPage AuditStatements::read(const AuditQuery &query)
{
    using Outcome = AuditPage::Outcome;
    const int limit = std::clamp(query.limit, 1, AuditQuery::maxPageSize);
    if (query.turns.size() > AuditQuery::maxTurns)
        return {Outcome::StoreError,
                {},
                false,
                QStringLiteral("%1 turns asked for, at most %2")
                    .arg(query.turns.size())
                    .arg(AuditQuery::maxTurns)};
    if (query.turns.isEmpty())
        return readChunk(query, {}, limit);
    // Each chunk's newest limit + 1 rows hold the newest limit + 1 of them all.
    AuditPage merged{Outcome::Found, {}, false, {}};
    for (qsizetype from = 0; from < query.turns.size(); from += TurnsPerStatement) {
        AuditPage chunk = readChunk(query, query.turns.mid(from, TurnsPerStatement), limit);
        if (!chunk.ok())
            return chunk;
        merged.more = merged.more || chunk.more;
        merged.rows.append(std::move(chunk.rows));
    }
    std::sort(merged.rows.begin(), merged.rows.end(),
              [](const AuditEntry &a, const AuditEntry &b) { return a.id > b.id; });
    if (merged.rows.size() > limit) {
        merged.rows.resize(limit);
        merged.more = true;
    }
    return merged;
}

AuditPage AuditStatements::readChunk(const AuditQuery &query, const QList<AuditTurn> &turns,
                                     int limit)
{
    using Outcome = AuditPage::Outcome;
    QStringList where;
    QVariantList values;
    const auto add = [&where, &values](const QString &condition, const QVariant &value) {
        where.append(condition);
        values.append(value);
    };
    if (!query.tenantId.isEmpty())
        add(QStringLiteral("tenant_id = ?"), query.tenantId);
    if (!query.staffId.isEmpty())
        add(QStringLiteral("staff_id = ?"), query.staffId);
    if (query.from.isValid())
        add(QStringLiteral("recorded_at >= ") + timeParameter(), timeValue(query.from));
    if (query.to.isValid())
        add(QStringLiteral("recorded_at < ") + timeParameter(), timeValue(query.to));
    if (!query.conversationId.isEmpty())
        add(QStringLiteral("conversation_id = ?"), query.conversationId);
    if (query.beforeId > 0)
        add(QStringLiteral("audit_id < ?"), query.beforeId);
    if (!query.argumentValue.isEmpty()) {
        // A value at the top level of the arguments, a string equal to the one given.
        add(m_dialect == SqlDialect::Sqlite
                ? QStringLiteral("EXISTS (SELECT 1 FROM json_each(audit_trail.arguments_json) "
                                 "AS a WHERE a.type = 'text' AND a.value = ?)")
                : QStringLiteral("EXISTS (SELECT 1 FROM "
                                 "jsonb_each(CAST(audit_trail.arguments_json AS jsonb)) AS a "
                                 "WHERE a.value = to_jsonb(CAST(? AS text)))"),
            query.argumentValue);
    }
    if (!turns.isEmpty()) {
        QStringList each;
        for (const AuditTurn &turn : turns) {
            each.append(QStringLiteral("(conversation_id = ? AND request_id = ?)"));
            values.append(text(turn.conversationId));
            values.append(text(turn.requestId));
        }
        where.append(QLatin1Char('(') + each.join(QStringLiteral(" OR ")) + QLatin1Char(')'));
    }
    const QString sql = QStringLiteral("SELECT %1 FROM audit_trail%2 ORDER BY audit_id DESC "
                                       "LIMIT %3")
                            .arg(Columns,
                                 where.isEmpty() ? QString()
                                                 : QStringLiteral(" WHERE ")
                                         + where.join(QStringLiteral(" AND ")))
                            .arg(limit + 1);
    QSqlQuery select(m_db);
    select.setForwardOnly(true);
    if (!select.prepare(sql))
        return {Outcome::StoreError, {}, false, failure("prepare audit read", select)};
    for (const QVariant &value : std::as_const(values))
        select.addBindValue(value);
    if (!select.exec())
        return {Outcome::StoreError, {}, false, failure("audit read", select)};
    AuditPage page{Outcome::Found, {}, false, {}};
    while (select.next()) {
        if (page.rows.size() == limit) {
            page.more = true;
            break;
        }
        AuditEntry entry;
        entry.id = select.value(0).toLongLong();
        entry.at = timestampOf(select.value(1));
        entry.event = AuditEntry::eventFromName(select.value(2).toString())
                          .value_or(AuditEntry::Event::Outcome);
        entry.staffId = select.value(3).toString();
        entry.tenantId = select.value(4).toString();
        entry.conversationId = select.value(5).toString();
        entry.requestId = select.value(6).toString();
        entry.operationId = select.value(7).toString();
        entry.toolName = select.value(8).toString();
        entry.idempotencyKey = select.value(9).toString();
        entry.arguments = QJsonDocument::fromJson(select.value(10).toString().toUtf8()).object();
        entry.outcome = AuditEntry::outcomeFromName(select.value(11).toString())
                            .value_or(AuditEntry::Outcome::None);
        entry.resultCode = select.value(12).toString();
        entry.objectId = select.value(13).toString();
        entry.via = AuditEntry::viaFromName(select.value(14).toString())
                        .value_or(AuditEntry::Via::None);
        entry.consoleId = select.value(15).toString();
        page.rows.append(std::move(entry));
    }
    select.finish(); // ends SQLite's read transaction
    return page;
}

} // namespace AgentConsole::Internal
