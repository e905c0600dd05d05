-- What the threads list shows and filters on beyond the counts (0007): when
-- the thread's first turn started (first_ns; its duration runs to last_ns,
-- the start of its last turn, which for a call's answer is when the call
-- ended), how many of its calls failed, how many have not ended
-- (open_calls) and its last sign of life (alive_ns: the newest start or
-- heartbeat of its turns), which tell a running thread from an
-- interrupted one, and its thread attributes: each
-- convtrace.thread.<name> a span set, by name without the prefix, with the
-- latest value and when that value was set (attr_ns), so that a summary
-- and the shells of what prunes removed (0018) combine to the latest.
-- layout is 1 on a summary computed with these columns: the viewer
-- recomputes those computed before. A shell stored before this migration
-- reads its first_ns from the turns it kept the start of.
ALTER TABLE thread_summary ADD COLUMN {{ifNotExists}}first_ns UInt64 DEFAULT if(prompts > 0, least(first_prompt_ns, last_ns), last_ns);
ALTER TABLE thread_summary ADD COLUMN {{ifNotExists}}failed_calls UInt64 DEFAULT 0;
ALTER TABLE thread_summary ADD COLUMN {{ifNotExists}}open_calls UInt64 DEFAULT 0;
ALTER TABLE thread_summary ADD COLUMN {{ifNotExists}}alive_ns UInt64 DEFAULT last_ns;
ALTER TABLE thread_summary ADD COLUMN {{ifNotExists}}attr_keys Array(String) DEFAULT emptyArrayString();
ALTER TABLE thread_summary ADD COLUMN {{ifNotExists}}attr_values Array(String) DEFAULT emptyArrayString();
ALTER TABLE thread_summary ADD COLUMN {{ifNotExists}}attr_ns Array(UInt64) DEFAULT emptyArrayUInt64();
ALTER TABLE thread_summary ADD COLUMN {{ifNotExists}}layout UInt8 DEFAULT 0;
ALTER TABLE thread_shells ADD COLUMN {{ifNotExists}}first_ns UInt64 DEFAULT if(prompts > 0, least(first_prompt_ns, last_ns), last_ns);
ALTER TABLE thread_shells ADD COLUMN {{ifNotExists}}failed_calls UInt64 DEFAULT 0;
ALTER TABLE thread_shells ADD COLUMN {{ifNotExists}}open_calls UInt64 DEFAULT 0;
ALTER TABLE thread_shells ADD COLUMN {{ifNotExists}}alive_ns UInt64 DEFAULT last_ns;
ALTER TABLE thread_shells ADD COLUMN {{ifNotExists}}attr_keys Array(String) DEFAULT emptyArrayString();
ALTER TABLE thread_shells ADD COLUMN {{ifNotExists}}attr_values Array(String) DEFAULT emptyArrayString();
ALTER TABLE thread_shells ADD COLUMN {{ifNotExists}}attr_ns Array(UInt64) DEFAULT emptyArrayUInt64()
