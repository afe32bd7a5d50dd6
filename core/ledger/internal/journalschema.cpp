#include "journalschema.h"

#include "journalsegments.h"

namespace AgentConsole::Internal {

namespace {

QStringList segmentStatements()
{
    // segment: 1, 2, ... in the order made within the conversation; parent: the segment whose
    // messages come before (0: none, the conversation starts here); start_index, end_index:
    // the messages' places in the whole conversation; start_hash, end_hash: the running hash
    // before the first message and after the last (hex; empty before the first message).
    return {QStringLiteral("CREATE TABLE conversation_segments ("
                           "conversation_id TEXT NOT NULL, "
                           "segment INTEGER NOT NULL, "
                           "parent INTEGER NOT NULL, "
                           "start_index INTEGER NOT NULL, "
                           "end_index INTEGER NOT NULL, "
                           "start_hash TEXT NOT NULL, "
                           "end_hash TEXT NOT NULL, "
                           "messages_json TEXT NOT NULL, "
                           "PRIMARY KEY (conversation_id, segment))"),
            QStringLiteral("CREATE INDEX conversation_segments_end "
                           "ON conversation_segments (conversation_id, end_hash)"),
            QStringLiteral("CREATE INDEX conversation_segments_parent "
                           "ON conversation_segments (conversation_id, parent)"),
            // The turn's own segment; 0 for a row that holds its whole conversation in its
            // state (one the migration could not split, or one a console of schema 4 saved).
            QStringLiteral("ALTER TABLE turn_checkpoints ADD COLUMN segment INTEGER NOT NULL "
                           "DEFAULT 0")};
}

} // namespace

QList<SchemaMigration> journalMigrations()
{
    return {
        {1,
         {QStringLiteral("CREATE TABLE turn_checkpoints ("
                         "conversation_id TEXT NOT NULL, "
                         "request_id TEXT NOT NULL, "
                         "stage TEXT NOT NULL, "
                         "resumable INTEGER NOT NULL, "
                         "state_json TEXT NOT NULL, "
                         "counters_json TEXT NOT NULL, "
                         "created_at TEXT NOT NULL, "
                         "updated_at TEXT NOT NULL, "
                         "PRIMARY KEY (conversation_id, request_id))"),
          QStringLiteral("CREATE INDEX turn_checkpoints_resumable "
                         "ON turn_checkpoints (resumable, created_at)")}},
        // Version 2: a tool result is a row of its own, appended, instead of a re-save of the
        // whole turn; a turn is its checkpoint row plus the results appended since. Version 1
        // files load as they are (no appended rows yet).
        {2,
         {QStringLiteral("CREATE TABLE turn_tool_results ("
                         "conversation_id TEXT NOT NULL, "
                         "request_id TEXT NOT NULL, "
                         "call_index INTEGER NOT NULL, "
                         "record_json TEXT NOT NULL, "
                         "created_at TEXT NOT NULL, "
                         "PRIMARY KEY (conversation_id, request_id, call_index))")}},
        // Version 3: what the history lists and searches, in columns of their own (given by
        // the agent with each save). Rows of older files keep them empty and are not listed.
        {3,
         {QStringLiteral("ALTER TABLE turn_checkpoints ADD COLUMN owner TEXT NOT NULL "
                         "DEFAULT ''"),
          QStringLiteral("ALTER TABLE turn_checkpoints ADD COLUMN title TEXT NOT NULL "
                         "DEFAULT ''"),
          QStringLiteral("ALTER TABLE turn_checkpoints ADD COLUMN outcome TEXT NOT NULL "
                         "DEFAULT ''"),
          QStringLiteral("ALTER TABLE turn_checkpoints ADD COLUMN search_text TEXT NOT NULL "
                         "DEFAULT ''"),
          QStringLiteral("CREATE INDEX turn_checkpoints_owner "
                         "ON turn_checkpoints (owner, conversation_id)")}},
        // Version 4: the scenario run a turn belongs to (empty for staff's own), so that the
        // history lists scenario runs apart and can hide them.
        {4,
         {QStringLiteral("ALTER TABLE turn_checkpoints ADD COLUMN scenario TEXT NOT NULL "
                         "DEFAULT ''")}},
        // Version 5: a checkpoint stores what its turn adds (issue #43 §1). Each row held its
        // whole conversation, so a journal grew with the square of a conversation; now a
        // turn's messages are a segment of their own, after the earlier turns' segments
        // (internal/journalsegments.h). The rows before are split in the same transaction.
        {5, segmentStatements(), splitStoredConversations},
    };
}

namespace {

// An agent's own role (a member of agentconsole_staff named in team_members) reads and writes
// its own rows only; a lead's role also reads its tenant's (a lead may look at an agent's
// conversation, never change it). The role that made the tables is not bound by these.
QStringList teamJournalRowSecurity()
{
    const QString member = QStringLiteral(
        "(SELECT m.tenant_id || '/' || m.staff_id FROM team_members m "
        "WHERE m.role_name = session_user)");
    const QString memberTenant = QStringLiteral(
        "(SELECT m.tenant_id FROM team_members m WHERE m.role_name = session_user)");
    QStringList statements = teamMembersStatements();
    for (const char *table : {"turn_checkpoints", "turn_tool_results", "conversation_segments"}) {
        const QString name = QString::fromLatin1(table);
        statements << QStringLiteral("ALTER TABLE %1 ENABLE ROW LEVEL SECURITY").arg(name)
                   << QStringLiteral("CREATE POLICY own_rows ON %1 TO agentconsole_staff "
                                     "USING (owner = %2) WITH CHECK (owner = %2)")
                          .arg(name, member)
                   << QStringLiteral(
                          "CREATE POLICY lead_reads ON %1 FOR SELECT TO agentconsole_lead "
                          "USING (split_part(owner, '/', 1) = %2 "
                          "AND pg_has_role(session_user, 'agentconsole_staff', 'MEMBER'))")
                          .arg(name, memberTenant)
                   << QStringLiteral(
                          "GRANT SELECT, INSERT, UPDATE, DELETE ON %1 TO agentconsole_staff")
                          .arg(name);
    }
    statements << QStringLiteral("GRANT SELECT ON journal_schema_version TO agentconsole_staff");
    return statements;
}

} // namespace

QList<SchemaMigration> teamJournalMigrations()
{
    return {
        {1,
         {QStringLiteral("CREATE TABLE turn_checkpoints ("
                         "seq BIGINT GENERATED ALWAYS AS IDENTITY, "
                         "owner TEXT NOT NULL, "
                         "tenant_id TEXT NOT NULL GENERATED ALWAYS AS "
                         "(split_part(owner, '/', 1)) STORED, "
                         "conversation_id TEXT NOT NULL, "
                         "request_id TEXT NOT NULL, "
                         "stage TEXT NOT NULL, "
                         "resumable INTEGER NOT NULL, "
                         "state_json TEXT NOT NULL, "
                         "counters_json TEXT NOT NULL, "
                         "created_at TEXT NOT NULL, "
                         "updated_at TEXT NOT NULL, "
                         "title TEXT NOT NULL DEFAULT '', "
                         "outcome TEXT NOT NULL DEFAULT '', "
                         "search_text TEXT NOT NULL DEFAULT '', "
                         "scenario TEXT NOT NULL DEFAULT '', "
                         "segment INTEGER NOT NULL DEFAULT 0, "
                         // The desk that holds the turn (TurnJournal::resumable()): its console
                         // id, its machine's name, and the advisory lock its connection holds
                         // while it runs.
                         "desk TEXT, "
                         "desk_name TEXT, "
                         "desk_lock BIGINT, "
                         "PRIMARY KEY (owner, conversation_id, request_id))"),
          QStringLiteral("CREATE INDEX turn_checkpoints_resumable "
                         "ON turn_checkpoints (owner, resumable, created_at)"),
          QStringLiteral("CREATE INDEX turn_checkpoints_updated "
                         "ON turn_checkpoints (owner, updated_at)"),
          QStringLiteral("CREATE TABLE turn_tool_results ("
                         "owner TEXT NOT NULL, "
                         "conversation_id TEXT NOT NULL, "
                         "request_id TEXT NOT NULL, "
                         "call_index INTEGER NOT NULL, "
                         "record_json TEXT NOT NULL, "
                         "created_at TEXT NOT NULL, "
                         "PRIMARY KEY (owner, conversation_id, request_id, call_index))"),
          QStringLiteral("CREATE TABLE conversation_segments ("
                         "owner TEXT NOT NULL, "
                         "conversation_id TEXT NOT NULL, "
                         "segment INTEGER NOT NULL, "
                         "parent INTEGER NOT NULL, "
                         "start_index BIGINT NOT NULL, "
                         "end_index BIGINT NOT NULL, "
                         "start_hash TEXT NOT NULL, "
                         "end_hash TEXT NOT NULL, "
                         "messages_json TEXT NOT NULL, "
                         "PRIMARY KEY (owner, conversation_id, segment))"),
          QStringLiteral("CREATE INDEX conversation_segments_end "
                         "ON conversation_segments (owner, conversation_id, end_hash)"),
          QStringLiteral("CREATE INDEX conversation_segments_parent "
                         "ON conversation_segments (owner, conversation_id, parent)")}},
        // Version 2: row-level security for agents with a database role of their own
        // (docs/TEAM.md; ledgerschema.h, teamMembersStatements).
        {2, teamJournalRowSecurity()},
    };
}

} // namespace AgentConsole::Internal
