#pragma once

#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <functional>

namespace AgentConsole::Internal {

enum class SqlDialect { Sqlite, Postgres };

struct SchemaMigration
{
    int version = 0;
    QStringList statements;
    // Run after `statements`, in the same transaction, when the rows must be rewritten in a way
    // SQL alone cannot say; returns what went wrong (local log only), or nothing.
    std::function<QString(QSqlDatabase &)> transform = {};
};

// The ledger's migrations for one dialect, in version order (1, 2, ...). A released migration
// is never edited; a change of schema is a new entry at the end.
QList<SchemaMigration> ledgerMigrations(SqlDialect dialect);

// A team database's members (PostgreSQL, docs/TEAM.md): the group roles agentconsole_staff and
// agentconsole_lead, made when missing, and team_members, which names the agent (tenant and
// staff id) each agent's own database role is. Row-level security reads it. Run by the ledger's
// and the journal's migrations alike (each may come first), so every statement may run twice.
QStringList teamMembersStatements();

struct MigrationResult
{
    enum class Outcome { Migrated, TooNew, Failed };
    Outcome outcome = Outcome::Failed;
    int version = 0; // the schema version the store has now (or has, when TooNew)
    QString detail; // local log only
    int previous = 0; // the version the store had before (Migrated)
};

// Brings the store to the last version of `migrations` in one transaction, applying only the
// missing ones, in order. Safe to run from several processes at once: SQLite takes the write
// lock first (BEGIN IMMEDIATE), PostgreSQL a transaction-scoped advisory lock. A store newer
// than the last known migration is left alone (TooNew). Version bookkeeping: SQLite's
// user_version, a table on PostgreSQL (one row per applied migration, with its time), named by
// `versionTable`: each set of migrations that shares a PostgreSQL database keeps its own (the
// ledger's is schema_version, as released). Runs on the connection's thread.
MigrationResult migrateSchema(QSqlDatabase &db, SqlDialect dialect,
                              const QList<SchemaMigration> &migrations,
                              const QString &versionTable = QStringLiteral("schema_version"));

} // namespace AgentConsole::Internal
