package store

import (
	"context"
	"fmt"
)

// The import lock's claims (import_claims): a claim is written whole each
// time (its latest row counts), and the holder is the live claim claimed
// first, ties broken by holder.
const (
	insertImportClaim = `
INSERT INTO import_claims (holder, claimed_ns, expires_ns, written_ns)
SELECT ?, toUInt64(?), toUInt64(?), toUInt64(?)`

	selectImportHolder = `
SELECT holder
FROM
(
    SELECT holder, argMax(claimed_ns, written_ns) AS claimed, argMax(expires_ns, written_ns) AS expires
    FROM import_claims
    GROUP BY holder
)
WHERE expires > ?
ORDER BY claimed, holder
LIMIT 1`
)

// ClaimImport writes holder's claim on the import lock, claimed at
// claimedNS and live until expiresNS (0: given up), as of writtenNS.
func (s Store) ClaimImport(ctx context.Context, holder string, claimedNS, expiresNS, writtenNS uint64) error {
	if err := s.db.Exec(ctx, insertImportClaim, holder, claimedNS, expiresNS, writtenNS); err != nil {
		return fmt.Errorf("claim the import lock: %w", err)
	}
	return nil
}

// ImportHolder returns the holder of the import lock at nowNS: the live
// claim claimed first, "" when there is none.
func (s Store) ImportHolder(ctx context.Context, nowNS uint64) (string, error) {
	rows, err := s.db.Query(ctx, selectImportHolder, nowNS)
	if err != nil {
		return "", fmt.Errorf("read the import lock: %w", err)
	}
	defer rows.Close()
	var holder string
	if rows.Next() {
		if err := rows.Scan(&holder); err != nil {
			return "", fmt.Errorf("read the import lock: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("read the import lock: %w", err)
	}
	return holder, nil
}
