#pragma once

#include "../ledgerschema.h"

#include <QList>

namespace AgentConsole::Internal {

// The turn journal's migrations, in version order (ledgerschema.h: a released migration is never
// edited; a change of schema is a new entry at the end). The journal is an SQLite file; the
// statements are what PostgreSQL runs too, except that a migration's rewrite of older rows
// reads SQLite's rowid (there are no older PostgreSQL journals).
QList<SchemaMigration> journalMigrations();

// A team's journal on PostgreSQL (docs/TEAM.md), in its own version table
// (journal_schema_version): the same tables as a desk's file at version 5, each row with its
// owner (tenant/staff) in its key, so that agents' rows never mix whatever ids they choose, and
// a column that orders rows by their first save (SQLite's rowid). There are no older team
// journals to migrate: version 1 is where they begin.
QList<SchemaMigration> teamJournalMigrations();

} // namespace AgentConsole::Internal
