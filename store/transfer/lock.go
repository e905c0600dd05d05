package transfer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/convtrace/convtrace/store"
)

// The database's import lock (import_claims): the live claim made first holds
// it. Two imports whose clocks differ by more than lockSettle could both hold
// it, and what both store is folded as any copy (docs/design/transfer.md).
const (
	lockLease  = 30 * time.Second // a holder killed frees the lock after this
	lockSettle = time.Second
	lockPoll   = 250 * time.Millisecond
	// lockWrite bounds a renewal or a release, which the holder makes
	// whatever its context.
	lockWrite = 5 * time.Second
)

// lockImports takes conn's database's import lock, waiting at most wait
// (< 0: as long as ctx allows), and returns what frees it.
func lockImports(ctx context.Context, st store.Store, wait time.Duration) (unlock func(), err error) {
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	holder, claimed := hex.EncodeToString(id), time.Now()
	claim := func(ctx context.Context, expires time.Time) error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lockWrite)
		defer cancel()
		var until uint64
		if !expires.IsZero() {
			until = uint64(expires.UnixNano())
		}
		return st.ClaimImport(ctx, holder, uint64(claimed.UnixNano()), until, uint64(time.Now().UnixNano()))
	}
	if err := claim(ctx, claimed.Add(lockLease)); err != nil {
		return nil, err
	}
	waitCtx, cancel := waiting(ctx, wait)
	defer cancel()
	renewed, next := claimed, time.After(lockSettle)
	for {
		select {
		case <-waitCtx.Done():
			_ = claim(ctx, time.Time{})
			if ctx.Err() == nil {
				return nil, fmt.Errorf("%w: another import is storing into this database", ErrBusy)
			}
			return nil, ctx.Err()
		case <-next:
		}
		first, err := st.ImportHolder(ctx, uint64(time.Now().UnixNano()))
		if err != nil {
			_ = claim(ctx, time.Time{})
			return nil, err
		}
		if first == holder {
			break
		}
		if time.Since(renewed) > lockLease/3 {
			renewed = time.Now()
			if err := claim(ctx, renewed.Add(lockLease)); err != nil {
				return nil, err
			}
		}
		next = time.After(lockPoll)
	}
	return hold(ctx, claim), nil
}

// hold renews a claim until the returned function gives it up.
func hold(ctx context.Context, claim func(context.Context, time.Time) error) (unlock func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(lockLease / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				// A renewal that fails lets the lease run out: at worst
				// another import stores what this one does too.
				_ = claim(ctx, time.Now().Add(lockLease))
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		_ = claim(ctx, time.Time{})
	}
}
