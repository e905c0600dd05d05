SELECT name, partition_id, min_block_number, max_block_number
FROM system.parts
WHERE database = currentDatabase() AND table = ? AND active
-- $1 = conversations_local
