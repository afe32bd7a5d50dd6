#include "teamschema.h"

namespace AgentConsole::Internal {

namespace {

QStringList isolationsMigration()
{
    return {
        // The group roles; a DBA may have made them already (then no CREATEROLE is needed).
        QStringLiteral("DO $$ BEGIN "
                       "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentconsole_staff') "
                       "THEN CREATE ROLE agentconsole_staff NOLOGIN; END IF; "
                       "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentconsole_lead') "
                       "THEN CREATE ROLE agentconsole_lead NOLOGIN; END IF; "
                       "END $$"),
        QStringLiteral("CREATE TABLE team_isolations ("
                       "id BIGSERIAL PRIMARY KEY, "
                       "dependency TEXT NOT NULL CHECK (length(dependency) BETWEEN 1 AND 200), "
                       "reason TEXT NOT NULL CHECK (length(btrim(reason)) BETWEEN 1 AND 500), "
                       "lead_staff_id TEXT NOT NULL "
                       "CHECK (length(lead_staff_id) BETWEEN 1 AND 128), "
                       "lead_role TEXT NOT NULL, "
                       "isolated_at TIMESTAMPTZ NOT NULL, "
                       "until TIMESTAMPTZ, "
                       "lifted_at TIMESTAMPTZ, "
                       "lifted_by_staff_id TEXT, "
                       "lifted_by_role TEXT, "
                       "CONSTRAINT team_isolations_ends_later "
                       "CHECK (until IS NULL OR until > isolated_at))"),
        // At most one isolation in force per dependency.
        QStringLiteral("CREATE UNIQUE INDEX team_isolations_current ON team_isolations "
                       "(dependency) WHERE lifted_at IS NULL"),
        // The guard: only a lead writes, the database says who and when, a row is only ever
        // lifted, once. It holds for the table's owner too (grants do not bind an owner).
        QStringLiteral(
            "CREATE OR REPLACE FUNCTION team_isolations_guard() RETURNS trigger "
            "LANGUAGE plpgsql AS $$ BEGIN "
            "IF NOT pg_has_role(session_user, 'agentconsole_lead', 'MEMBER') THEN "
            "RAISE EXCEPTION 'only a member of agentconsole_lead may isolate or lift a "
            "dependency' USING ERRCODE = 'insufficient_privilege'; END IF; "
            "IF TG_OP = 'INSERT' THEN "
            "NEW.lead_role := session_user; NEW.isolated_at := now(); "
            "NEW.lifted_at := NULL; NEW.lifted_by_staff_id := NULL; NEW.lifted_by_role := NULL; "
            "RETURN NEW; END IF; "
            "IF OLD.lifted_at IS NOT NULL OR NEW.lifted_by_staff_id IS NULL "
            "OR length(NEW.lifted_by_staff_id) NOT BETWEEN 1 AND 128 "
            "OR (NEW.id, NEW.dependency, NEW.reason, NEW.lead_staff_id, NEW.lead_role, "
            "NEW.isolated_at, NEW.until) IS DISTINCT FROM (OLD.id, OLD.dependency, OLD.reason, "
            "OLD.lead_staff_id, OLD.lead_role, OLD.isolated_at, OLD.until) THEN "
            "RAISE EXCEPTION 'an isolation is only ever lifted, once, by a named lead' "
            "USING ERRCODE = 'check_violation'; END IF; "
            "NEW.lifted_at := now(); NEW.lifted_by_role := session_user; "
            "RETURN NEW; END $$"),
        QStringLiteral("CREATE TRIGGER team_isolations_guard BEFORE INSERT OR UPDATE "
                       "ON team_isolations FOR EACH ROW EXECUTE FUNCTION team_isolations_guard()"),
        QStringLiteral("CREATE OR REPLACE FUNCTION team_isolations_refuse() RETURNS trigger "
                       "LANGUAGE plpgsql AS $$ BEGIN "
                       "RAISE EXCEPTION 'isolations are kept: lift one instead' "
                       "USING ERRCODE = 'insufficient_privilege'; END $$"),
        QStringLiteral(
            "CREATE TRIGGER team_isolations_no_delete BEFORE DELETE "
            "ON team_isolations FOR EACH ROW EXECUTE FUNCTION team_isolations_refuse()"),
        QStringLiteral("CREATE TRIGGER team_isolations_no_truncate BEFORE TRUNCATE "
                       "ON team_isolations FOR EACH STATEMENT "
                       "EXECUTE FUNCTION team_isolations_refuse()"),
        // Every console listening hears of a change when its transaction commits.
        QStringLiteral("CREATE OR REPLACE FUNCTION team_isolations_announce() RETURNS trigger "
                       "LANGUAGE plpgsql AS $$ BEGIN "
                       "PERFORM pg_notify('%1', NEW.dependency); RETURN NULL; END $$")
            .arg(QLatin1String(IsolationChannel)),
        QStringLiteral("CREATE TRIGGER team_isolations_announce AFTER INSERT OR UPDATE "
                       "ON team_isolations FOR EACH ROW "
                       "EXECUTE FUNCTION team_isolations_announce()"),
        QStringLiteral("REVOKE ALL ON team_isolations FROM PUBLIC"),
        QStringLiteral("GRANT SELECT ON team_isolations TO agentconsole_staff, agentconsole_lead"),
        QStringLiteral("GRANT INSERT, UPDATE ON team_isolations TO agentconsole_lead"),
        QStringLiteral("GRANT USAGE ON SEQUENCE team_isolations_id_seq TO agentconsole_lead"),
        QStringLiteral("GRANT SELECT ON %1 TO agentconsole_staff, agentconsole_lead")
            .arg(QLatin1String(TeamSchemaVersionTable)),
    };
}

} // namespace

QList<SchemaMigration> teamControlMigrations()
{
    return {{1, isolationsMigration()}};
}

} // namespace AgentConsole::Internal
