package ddl

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// selectMutations counts the mutations of some tables of the current
// database still to do, and the parts they have left to rewrite.
const selectMutations = `
SELECT count() AS pending, toUInt64(sum(parts_to_do)) AS parts
FROM system.mutations
WHERE database = currentDatabase() AND has(?, table) AND is_done = 0`

// DeleteStatement is the statement that deletes the rows of table that
// cond (SQL with ? arguments) selects: a lightweight DELETE where the
// server has one, else an ALTER TABLE … DELETE mutation, which runs in the
// background (WaitMutations waits for it).
func DeleteStatement(caps Capabilities, table, cond string) string {
	if caps.LightweightDelete {
		return "DELETE FROM " + table + " WHERE " + cond
	}
	return "ALTER TABLE " + table + " DELETE WHERE " + cond
}

// WaitMutations polls system.mutations until tables have none left to do,
// calling progress (when not nil) with the mutations and parts still to
// do, each state once.
func WaitMutations(ctx context.Context, db DB, tables []string, progress func(mutations, parts uint64)) error {
	last := [2]uint64{1<<64 - 1, 0}
	for {
		var pending, parts uint64
		rows, err := db.Query(ctx, selectMutations, tables)
		if err != nil {
			return fmt.Errorf("query mutations of %s: %w", strings.Join(tables, ", "), err)
		}
		for rows.Next() {
			if err := rows.Scan(&pending, &parts); err != nil {
				rows.Close()
				return fmt.Errorf("scan mutations: %w", err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read mutations: %w", err)
		}
		if progress != nil && [2]uint64{pending, parts} != last {
			progress(pending, parts)
			last = [2]uint64{pending, parts}
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for mutations of %s: %w", strings.Join(tables, ", "), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
