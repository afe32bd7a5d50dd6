#pragma once

#include "../ledgerschema.h"

#include <QList>

namespace AgentConsole::Internal {

// The turn journal's migrations, in version order (ledgerschema.h: a released migration is never
// edited; a change of schema is a new entry at the end). The journal is an SQLite file; the
// statements are what PostgreSQL runs too, except that a migration's rewrite of older rows
// reads SQLite's rowid (there are no older PostgreSQL journals).
QList<SchemaMigration> journalMigrations();

} // namespace AgentConsole::Internal
