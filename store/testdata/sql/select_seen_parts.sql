SELECT partitions, min_blocks, max_blocks
FROM seen_parts
WHERE summary = ?
ORDER BY computed_ns DESC
LIMIT 1
-- $1 = cost
