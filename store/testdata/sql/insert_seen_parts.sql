INSERT INTO seen_parts (summary, computed_ns, partitions, min_blocks, max_blocks)
SELECT ?, greatest(?, (SELECT max(computed_ns) + 1 FROM seen_parts WHERE summary = ?)),
       ?, ?, ?
-- $1 = cost
-- $2 = 1
-- $3 = cost
-- $4 = [202611]
-- $5 = [1]
-- $6 = [2]
