-- Who may store an import into this database (convtrace import, POST
-- /api/import): one import at a time, so that each skips what those before
-- it stored instead of both storing what neither found. Each import claims
-- by a row of its own; the live claim (expires_ns not past) with the
-- lowest claimed_ns holds the lock. A holder renews its claim while it
-- stores and expires it when done; one killed frees it when it expires. A
-- claim's latest row (highest written_ns) counts.
CREATE TABLE IF NOT EXISTS import_claims
(
    holder     String,
    claimed_ns UInt64,
    expires_ns UInt64,
    written_ns UInt64
)
ENGINE = ReplacingMergeTree(written_ns)
ORDER BY holder
