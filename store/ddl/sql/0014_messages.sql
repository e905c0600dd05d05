-- History stored once. An agent's prompt repeats the conversation so far;
-- the collector stores a prompt's messages up to its last assistant
-- message here, each once per thread under the hash of its JSON text
-- (genai.MessageID), and the prompt row keeps their ids in history and
-- only the messages after them in content. Copies of a message (written
-- by two collectors, or again after a restart) have the same sort key and
-- fold. README, "Reading prompts with SQL", puts a prompt back together.
CREATE TABLE IF NOT EXISTS messages
(
    project   {{lc "String"}},
    thread_id String,
    id        String,
    message   String{{codec}}
)
ENGINE = ReplacingMergeTree
ORDER BY (thread_id, id);

ALTER TABLE conversations ADD COLUMN {{ifNotExists}}history Array(String) AFTER content
