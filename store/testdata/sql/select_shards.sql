SELECT shard_num, host_address, port
FROM system.clusters
WHERE cluster = ?
ORDER BY shard_num, replica_num
-- $1 = c
