-- agent_instructions: one row per (project_id, agent_slug) holding that agent's instructions
-- for that project. harness only READS this table (the engine's migrations own it); this file
-- is the schema that tests and examples use to create it (harness.instruction_files.SCHEMA_SQL,
-- harness.instruction_files.create_schema).
CREATE TABLE IF NOT EXISTS agent_instructions (
    project_id TEXT NOT NULL,
    agent_slug TEXT NOT NULL,
    content    TEXT NOT NULL,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (project_id, agent_slug)
);
