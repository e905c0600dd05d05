SELECT toString(toYYYYMM(ts)) AS p
FROM spans
GROUP BY p
HAVING max(start_ns) < ? AND countIf(? != '' AND project != ?) = 0
ORDER BY p
-- $1 = 1700000000000000000
-- $2 = p
-- $3 = p
