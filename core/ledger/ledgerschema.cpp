#include "ledgerschema.h"

#include <QSqlError>
#include <QSqlQuery>

namespace AgentConsole::Internal {

namespace {

// Arbitrary but fixed: every console sharing one PostgreSQL database migrates under it.
constexpr qint64 PostgresMigrationLockId = 0x4c65646765720001; // "Ledger" + 1

// The status column's check as migration 1 made it, and as migration 3 widened it.
const QString StatusCheck = QStringLiteral(
    "CHECK (status IN ('PROCESSING', 'SUCCEEDED', 'FAILED_RETRYABLE', 'FAILED_FINAL'))");
const QString StatusCheckWithUnknown = QStringLiteral(
    "CHECK (status IN ('PROCESSING', 'SUCCEEDED', 'FAILED_RETRYABLE', 'FAILED_FINAL', "
    "'OUTCOME_UNKNOWN'))");

// Migration 3: the status OUTCOME_UNKNOWN. SQLite cannot change a column's CHECK, so the
// table is built again under the migration's transaction; PostgreSQL swaps the constraint
// (its name is the one PostgreSQL gave the column's CHECK in migration 1).
QStringList outcomeUnknownMigration(SqlDialect dialect, const QString &timestamp,
                                    const QString &tableOptions)
{
    if (dialect == SqlDialect::Postgres)
        return {QStringLiteral("ALTER TABLE idempotency_ledger "
                               "DROP CONSTRAINT IF EXISTS idempotency_ledger_status_check"),
                QStringLiteral("ALTER TABLE idempotency_ledger "
                               "ADD CONSTRAINT idempotency_ledger_status_check %1")
                    .arg(StatusCheckWithUnknown)};
    const QString columns = QStringLiteral("idempotency_key, tool_name, request_hash, status, "
                                           "result_json, created_at, updated_at, owner");
    return {QStringLiteral("CREATE TABLE idempotency_ledger_v3 ("
                           "idempotency_key TEXT NOT NULL PRIMARY KEY, "
                           "tool_name TEXT NOT NULL, "
                           "request_hash TEXT NOT NULL, "
                           "status TEXT NOT NULL %1, "
                           "result_json TEXT, "
                           "created_at %2, "
                           "updated_at %2, "
                           "owner TEXT)%3")
                .arg(StatusCheckWithUnknown, timestamp, tableOptions),
            QStringLiteral("INSERT INTO idempotency_ledger_v3 (%1) SELECT %1 "
                           "FROM idempotency_ledger")
                .arg(columns),
            QStringLiteral("DROP TABLE idempotency_ledger"),
            QStringLiteral("ALTER TABLE idempotency_ledger_v3 RENAME TO idempotency_ledger")};
}

// Migration 4: the audit trail of writes (docs/AUDIT.md), beside the ledger. Append-only:
// the store itself refuses UPDATE and DELETE (a trigger on both engines, TRUNCATE too on
// PostgreSQL, whose roles also lose the grants: the console's role, which owns the table it
// created, may insert and read it only). Ids grow with every row, so "newest first" is the
// order of the ids; the time is the store's clock, as the ledger's rows are stamped.
QStringList auditTrailMigration(SqlDialect dialect)
{
    const bool sqlite = dialect == SqlDialect::Sqlite;
    const QString id = sqlite ? QStringLiteral("INTEGER PRIMARY KEY AUTOINCREMENT")
                              : QStringLiteral("BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY");
    const QString at = sqlite ? QStringLiteral("TEXT NOT NULL")
                              : QStringLiteral("TIMESTAMPTZ NOT NULL DEFAULT now()");
    QStringList statements{
        QStringLiteral("CREATE TABLE audit_trail ("
                       "audit_id %1, "
                       "recorded_at %2, "
                       "event TEXT NOT NULL "
                       "CHECK (event IN ('CONFIRMED', 'STARTED', 'OUTCOME', 'SETTLEMENT')), "
                       "staff_id TEXT NOT NULL, "
                       "tenant_id TEXT NOT NULL, "
                       "conversation_id TEXT NOT NULL, "
                       "request_id TEXT NOT NULL, "
                       "operation_id TEXT NOT NULL, "
                       "tool_name TEXT NOT NULL, "
                       "idempotency_key TEXT NOT NULL, "
                       "arguments_json TEXT NOT NULL, "
                       "outcome TEXT CHECK (outcome IN ('SUCCEEDED', 'FAILED', 'UNKNOWN')), "
                       "result_code TEXT, "
                       "object_id TEXT, "
                       "via TEXT, "
                       "console_id TEXT)")
            .arg(id, at),
        QStringLiteral("CREATE INDEX audit_trail_by_staff "
                       "ON audit_trail (tenant_id, staff_id, audit_id)"),
        QStringLiteral("CREATE INDEX audit_trail_by_time "
                       "ON audit_trail (tenant_id, recorded_at)"),
        QStringLiteral("CREATE INDEX audit_trail_by_turn "
                       "ON audit_trail (conversation_id, request_id)"),
    };
    if (sqlite) {
        statements << QStringLiteral("CREATE TRIGGER audit_trail_no_update "
                                     "BEFORE UPDATE ON audit_trail BEGIN "
                                     "SELECT RAISE(ABORT, 'audit_trail is append-only'); END")
                   << QStringLiteral("CREATE TRIGGER audit_trail_no_delete "
                                     "BEFORE DELETE ON audit_trail BEGIN "
                                     "SELECT RAISE(ABORT, 'audit_trail is append-only'); END");
        return statements;
    }
    statements << QStringLiteral("CREATE OR REPLACE FUNCTION audit_trail_refuse() RETURNS trigger "
                                 "LANGUAGE plpgsql AS $$ BEGIN "
                                 "RAISE EXCEPTION 'audit_trail is append-only: % refused', TG_OP "
                                 "USING ERRCODE = 'insufficient_privilege'; "
                                 "END $$")
               << QStringLiteral("CREATE TRIGGER audit_trail_append_only "
                                 "BEFORE UPDATE OR DELETE ON audit_trail "
                                 "FOR EACH ROW EXECUTE FUNCTION audit_trail_refuse()")
               << QStringLiteral("CREATE TRIGGER audit_trail_no_truncate "
                                 "BEFORE TRUNCATE ON audit_trail "
                                 "FOR EACH STATEMENT EXECUTE FUNCTION audit_trail_refuse()")
               // The owner is the console's role today (it made the table): it keeps INSERT and
               // SELECT only. The team database's roles (issue #43 §2) grant the same.
               << QStringLiteral("REVOKE UPDATE, DELETE, TRUNCATE ON audit_trail "
                                 "FROM PUBLIC, CURRENT_USER");
    return statements;
}

// Migration 5 (PostgreSQL): row-level security for deployments that give each agent a role
// of their own (docs/TEAM.md): such a role, a member of agentconsole_staff and named in
// team_members, reads and writes its tenant's ledger rows only, and appends audit rows of its
// own staff id in its tenant only. The role that made the tables (a shared console role, or
// the setup role) is not bound by them: a team that shares one role is kept apart by the
// console's own queries.
QStringList rowSecurityMigration(SqlDialect dialect)
{
    if (dialect == SqlDialect::Sqlite)
        return {}; // one desk's file: nobody else's rows are in it
    const QString tenant = QStringLiteral(
        "(SELECT m.tenant_id FROM team_members m WHERE m.role_name = session_user)");
    const QString staff = QStringLiteral(
        "(SELECT m.staff_id FROM team_members m WHERE m.role_name = session_user)");
    QStringList statements = teamMembersStatements();
    statements << QStringLiteral("ALTER TABLE idempotency_ledger ENABLE ROW LEVEL SECURITY")
               << QStringLiteral(
                      "CREATE POLICY tenant_rows ON idempotency_ledger TO agentconsole_staff "
                      "USING (split_part(idempotency_key, ':', 1) = %1) "
                      "WITH CHECK (split_part(idempotency_key, ':', 1) = %1)")
                      .arg(tenant)
               << QStringLiteral("GRANT SELECT, INSERT, UPDATE ON idempotency_ledger "
                                 "TO agentconsole_staff")
               << QStringLiteral("ALTER TABLE audit_trail ENABLE ROW LEVEL SECURITY")
               << QStringLiteral("CREATE POLICY tenant_reads ON audit_trail FOR SELECT "
                                 "TO agentconsole_staff USING (tenant_id = %1)")
                      .arg(tenant)
               << QStringLiteral(
                      "CREATE POLICY own_appends ON audit_trail FOR INSERT "
                      "TO agentconsole_staff WITH CHECK (tenant_id = %1 AND staff_id = %2)")
                      .arg(tenant, staff)
               << QStringLiteral("GRANT SELECT, INSERT ON audit_trail TO agentconsole_staff")
               << QStringLiteral("GRANT SELECT ON schema_version TO agentconsole_staff");
    return statements;
}

struct Step
{
    bool ok = true;
    QString detail;
};

Step exec(QSqlDatabase &db, const QString &sql, QVariant *firstValue = nullptr)
{
    QSqlQuery query(db);
    if (!query.exec(sql))
        return {false, sql.left(60) + QStringLiteral("...: ") + query.lastError().text()};
    if (firstValue)
        *firstValue = query.next() ? query.value(0) : QVariant();
    return {};
}

Step rollBack(QSqlDatabase &db, Step failure)
{
    // Rolling back can only fail if the transaction is already gone; the failure that led
    // here is the one worth logging.
    QSqlQuery(db).exec(QStringLiteral("ROLLBACK"));
    return failure;
}

} // namespace

QStringList teamMembersStatements()
{
    return {
        // Group roles: whoever migrates first makes them (it needs CREATEROLE then; a setup
        // role that has it runs the first start, docs/TEAM.md).
        // Roles belong to the whole cluster: two databases of it migrating at once may both
        // find one missing, and the second to make it is told it exists.
        QStringLiteral("DO $$ BEGIN "
                       "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentconsole_staff') "
                       "THEN CREATE ROLE agentconsole_staff NOLOGIN; END IF; "
                       "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"),
        QStringLiteral("DO $$ BEGIN "
                       "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentconsole_lead') "
                       "THEN CREATE ROLE agentconsole_lead NOLOGIN; END IF; "
                       "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"),
        QStringLiteral("CREATE TABLE IF NOT EXISTS team_members ("
                       "role_name TEXT NOT NULL PRIMARY KEY, "
                       "tenant_id TEXT NOT NULL, "
                       "staff_id TEXT NOT NULL)"),
        QStringLiteral("GRANT SELECT ON team_members TO agentconsole_staff"),
    };
}

QList<SchemaMigration> ledgerMigrations(SqlDialect dialect)
{
    // SQLite has no timestamp type: ISO 8601 UTC text with milliseconds sorts and parses well.
    const QString timestamp = dialect == SqlDialect::Sqlite
        ? QStringLiteral("TEXT NOT NULL")
        : QStringLiteral("TIMESTAMPTZ NOT NULL DEFAULT now()");
    // The key is the whole lookup path, so SQLite stores the row in the key's B-tree.
    const QString tableOptions = dialect == SqlDialect::Sqlite ? QStringLiteral(" WITHOUT ROWID")
                                                               : QString();
    return {
        {1,
         {QStringLiteral("CREATE TABLE idempotency_ledger ("
                         "idempotency_key TEXT NOT NULL PRIMARY KEY, "
                         "tool_name TEXT NOT NULL, "
                         "request_hash TEXT NOT NULL, "
                         "status TEXT NOT NULL %1, "
                         "result_json TEXT, "
                         "created_at %2, "
                         "updated_at %2)%3")
              .arg(StatusCheck, timestamp, tableOptions)}},
        // Who claimed a row: only that console completes it or takes it over after a restart.
        {2, {QStringLiteral("ALTER TABLE idempotency_ledger ADD COLUMN owner TEXT")}},
        // A write whose outcome nobody can learn is settled as such (DESIGN.md, "Write tools
        // and idempotency").
        {3, outcomeUnknownMigration(dialect, timestamp, tableOptions)},
        // Every write's confirmation and outcome, appended and never changed.
        {4, auditTrailMigration(dialect)},
        // Each agent's own database role, where a team gives them one, kept to its tenant.
        {5, rowSecurityMigration(dialect)},
    };
}

MigrationResult migrateSchema(QSqlDatabase &db, SqlDialect dialect,
                              const QList<SchemaMigration> &migrations,
                              const QString &versionTable)
{
    using Outcome = MigrationResult::Outcome;
    const int latest = migrations.isEmpty() ? 0 : migrations.constLast().version;

    Step step = exec(db,
                     dialect == SqlDialect::Sqlite ? QStringLiteral("BEGIN IMMEDIATE")
                                                   : QStringLiteral("BEGIN"));
    if (!step.ok)
        return {Outcome::Failed, 0, step.detail};

    QVariant current;
    if (dialect == SqlDialect::Sqlite) {
        step = exec(db, QStringLiteral("PRAGMA user_version"), &current);
    } else {
        step = exec(
            db, QStringLiteral("SELECT pg_advisory_xact_lock(%1)").arg(PostgresMigrationLockId));
        // Made only when missing: a console whose role may not create tables (an agent's own
        // role in a team database, docs/TEAM.md) reads the versions a setup role applied.
        QVariant exists;
        if (step.ok)
            step = exec(db,
                        QStringLiteral("SELECT to_regclass('%1') IS NOT NULL").arg(versionTable),
                        &exists);
        if (step.ok && !exists.toBool())
            step = exec(db,
                        QStringLiteral("CREATE TABLE %1 ("
                                       "version INTEGER NOT NULL PRIMARY KEY, "
                                       "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
                            .arg(versionTable));
        if (step.ok)
            step = exec(
                db, QStringLiteral("SELECT COALESCE(MAX(version), 0) FROM %1").arg(versionTable),
                &current);
    }
    if (!step.ok)
        return {Outcome::Failed, 0, rollBack(db, step).detail};

    const int version = current.toInt();
    if (version > latest) {
        rollBack(db, {});
        return {Outcome::TooNew, version,
                QStringLiteral("schema version %1, newest known %2").arg(version).arg(latest)};
    }

    for (const SchemaMigration &migration : migrations) {
        if (migration.version <= version)
            continue;
        for (const QString &sql : migration.statements) {
            step = exec(db, sql);
            if (!step.ok)
                return {Outcome::Failed, version, rollBack(db, step).detail};
        }
        if (migration.transform) {
            const QString failed = migration.transform(db);
            if (!failed.isEmpty())
                return {
                    Outcome::Failed, version,
                    rollBack(
                        db,
                        {false,
                         QStringLiteral("migration %1: %2").arg(migration.version).arg(failed)})
                        .detail};
        }
        step = exec(db,
                    dialect == SqlDialect::Sqlite
                        ? QStringLiteral("PRAGMA user_version = %1").arg(migration.version)
                        : QStringLiteral("INSERT INTO %1 (version) VALUES (%2)")
                              .arg(versionTable)
                              .arg(migration.version));
        if (!step.ok)
            return {Outcome::Failed, version, rollBack(db, step).detail};
    }

    step = exec(db, QStringLiteral("COMMIT"));
    if (!step.ok)
        return {Outcome::Failed, version, rollBack(db, step).detail};
    return {Outcome::Migrated, latest, {}, version};
}

} // namespace AgentConsole::Internal
