-- agent_instructions in PostgreSQL, and the trigger that tells every harness node about changes.
-- harness only READS this table (the engine's migrations own it); this file is the schema that
-- tests and examples apply (harness.instruction_files.POSTGRES_SCHEMA_SQL, create_schema(url)).
-- Idempotent: it can be applied to a database that already has the table.
--
-- Every committed INSERT, UPDATE and DELETE notifies channel harness_agent_instructions with
-- {"project_id": ..., "agent_slug": ...} (an UPDATE that changes the key notifies the old key
-- and the new one). Where no single key can be named (TRUNCATE, or ids too long for NOTIFY's
-- 8000-byte payload) the payload holds nulls, and a listener drops every row it has cached.
CREATE TABLE IF NOT EXISTS agent_instructions (
    project_id TEXT NOT NULL,
    agent_slug TEXT NOT NULL,
    content    TEXT NOT NULL,
    updated_at TEXT NOT NULL
        DEFAULT (to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')),
    PRIMARY KEY (project_id, agent_slug)
);

CREATE OR REPLACE FUNCTION harness_agent_instructions_notify_key(changed_project TEXT, changed_agent TEXT)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    payload TEXT := json_build_object('project_id', changed_project, 'agent_slug', changed_agent)::text;
BEGIN
    IF octet_length(payload) >= 8000 THEN
        payload := json_build_object('project_id', NULL, 'agent_slug', NULL)::text;
    END IF;
    PERFORM pg_notify('harness_agent_instructions', payload);
END
$$;

CREATE OR REPLACE FUNCTION harness_agent_instructions_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM harness_agent_instructions_notify_key(NULL, NULL);
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM harness_agent_instructions_notify_key(OLD.project_id, OLD.agent_slug);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND (NEW.project_id, NEW.agent_slug)
            IS DISTINCT FROM (OLD.project_id, OLD.agent_slug)) THEN
        PERFORM harness_agent_instructions_notify_key(NEW.project_id, NEW.agent_slug);
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS harness_agent_instructions_changed ON agent_instructions;
CREATE TRIGGER harness_agent_instructions_changed
    AFTER INSERT OR UPDATE OR DELETE ON agent_instructions
    FOR EACH ROW EXECUTE FUNCTION harness_agent_instructions_changed();

DROP TRIGGER IF EXISTS harness_agent_instructions_truncated ON agent_instructions;
CREATE TRIGGER harness_agent_instructions_truncated
    AFTER TRUNCATE ON agent_instructions
    FOR EACH STATEMENT EXECUTE FUNCTION harness_agent_instructions_changed();
