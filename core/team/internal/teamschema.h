#pragma once

#include "../../ledger/ledgerschema.h"

namespace AgentConsole::Internal {

// The team controls' migrations on the team database (docs/TEAM.md), versions 1, 2, ...,
// recorded in team_schema_version (migrateSchema). A released migration is never edited.
//   1  the roles agentconsole_staff and agentconsole_lead (NOLOGIN, made when missing: the
//      migrating role needs CREATEROLE unless a DBA made them first), team_isolations (one
//      row per isolation, lifted rows kept), its guard (only members of agentconsole_lead
//      insert or lift; the writing role and the times are the database's, never the
//      client's; no row is deleted), its announcement (NOTIFY agentconsole_isolations) and
//      its grants.
QList<SchemaMigration> teamControlMigrations();

// The version table and the notification channel, for the store and the suites.
inline constexpr char TeamSchemaVersionTable[] = "team_schema_version";
inline constexpr char IsolationChannel[] = "agentconsole_isolations";

} // namespace AgentConsole::Internal
