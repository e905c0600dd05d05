package transfer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/semaphore"
)

// MemoryBudget is the memory the imports of one process hold together: the
// viewer's import endpoint and convtrace import reserve their share of it
// before reading, and wait (WithWait) or are refused (ErrBusy) when it
// has no room.
const MemoryBudget = 512 << 20

// memoryPerByte is how many bytes of memory an import holds per byte it
// holds of the export: the line being read and its decoded record, the
// batch being read and the one being stored, with its insert's columns.
const memoryPerByte = 4

// ErrBusy means an import found no room in the memory budget, or the
// database's import lock taken, for longer than it may wait: retry later.
var ErrBusy = errors.New("import busy")

// imports is the process's memory budget.
var imports = semaphore.NewWeighted(MemoryBudget)

// memoryFor is the share of the budget an import of at most n bytes
// (decompressed) reserves: what it can hold at once, two batches and the
// longest line. One larger than the whole budget takes all of it, so
// that it still goes through, alone.
func memoryFor(n int64) int64 {
	held := min(n, 2*batchBytes+min(n, maxLine))
	return min(memoryPerByte*held, MemoryBudget)
}

// reserve takes n bytes of the budget, waiting at most wait (< 0: as long
// as ctx allows), and returns what gives them back.
func reserve(ctx context.Context, n int64, wait time.Duration) (release func(), err error) {
	if !imports.TryAcquire(n) {
		waitCtx, cancel := waiting(ctx, wait)
		defer cancel()
		if err := imports.Acquire(waitCtx, n); err != nil {
			if ctx.Err() == nil {
				return nil, fmt.Errorf("%w: the imports of this process hold their memory budget (%d MiB) for now", ErrBusy, MemoryBudget>>20)
			}
			return nil, err
		}
	}
	return func() { imports.Release(n) }, nil
}

// waiting is ctx, ended after wait unless wait < 0.
func waiting(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	if wait < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, wait)
}
