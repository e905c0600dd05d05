SELECT holder
FROM
(
    SELECT holder, argMax(claimed_ns, written_ns) AS claimed, argMax(expires_ns, written_ns) AS expires
    FROM import_claims
    GROUP BY holder
)
WHERE expires > ?
ORDER BY claimed, holder
LIMIT 1
-- $1 = 9
