INSERT INTO import_claims (holder, claimed_ns, expires_ns, written_ns)
SELECT ?, toUInt64(?), toUInt64(?), toUInt64(?)
-- $1 = h
-- $2 = 1
-- $3 = 2
-- $4 = 3
