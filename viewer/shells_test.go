package viewer_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store"
)

// A thread a prune emptied keeps its shell in the list until the shell's
// retention ends; then it goes for good, title included. A thread with
// turns left keeps its shell.
func TestEmptyShellRemovedAfterRetention(t *testing.T) {
	h, conn := newServer(t)
	ctx := context.Background()
	p, r := call("emptied", "a", "plan", 0, "planner", "openai", "gpt-5", 0, "old q", "old a")
	kp, kr := call("kept", "b", "plan", 0, "planner", "openai", "gpt-5", 0, "old q", "old a")
	np, nr := call("kept", "c", "plan", 0, "planner", "openai", "gpt-5", 0, "new q", "new a")
	np.StartNS, nr.StartNS = uint64(time.Now().UnixNano()), uint64(time.Now().UnixNano())+1
	testkit.InsertTurns(t, conn, p, r, kp, kr, np, nr)
	st := store.New(conn, 100, 5*time.Minute)
	if err := st.ChangeThread(ctx, "emptied", store.ThreadChange{Title: ptrTo("named by hand")}, uint64(time.Now().UnixNano())); err != nil {
		t.Fatal(err)
	}
	listed := func() map[string]store.Thread {
		var page struct{ Threads []store.Thread }
		getJSON(t, h, "/api/threads", http.StatusOK, &page)
		m := map[string]store.Thread{}
		for _, th := range page.Threads {
			m[th.ID] = th
		}
		return m
	}
	listed() // summaries before the prune, as serve has them
	if _, err := st.Prune(ctx, store.PruneScope{BeforeNS: at(60)}, nil); err != nil {
		t.Fatal(err)
	}
	prunedAt := time.Now()
	if th, ok := listed()["emptied"]; !ok || th.PrunedTurns != 2 || th.Title != "named by hand" {
		t.Fatalf("the emptied thread after the prune: %+v (listed %v), want its shell listed", th, ok)
	}

	// Within the shell's retention: kept.
	if n, err := st.RemoveEmptyShells(ctx, "", prunedAt.Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("RemoveEmptyShells of shells older than the prune: %d, %v; want none", n, err)
	}
	if _, ok := listed()["emptied"]; !ok {
		t.Error("the emptied thread is gone within its shell's retention")
	}
	// Past it: the emptied thread goes, the other keeps its shell.
	if n, err := st.RemoveEmptyShells(ctx, "", time.Now().Add(time.Second)); err != nil || n != 1 {
		t.Errorf("RemoveEmptyShells past the retention: %d, %v; want the one emptied thread", n, err)
	}
	got := listed()
	if th, ok := got["emptied"]; ok {
		t.Errorf("the emptied thread past its shell's retention: %+v, want it gone", th)
	}
	if th, ok := got["kept"]; !ok || th.PrunedTurns != 2 || th.Turns != 4 {
		t.Errorf("the thread with turns left: %+v (listed %v), want its shell kept", th, ok)
	}
	for _, table := range []string{"thread_meta", "thread_shells", "thread_summary"} {
		if n := testkit.Strings(t, conn, "SELECT thread_id FROM "+table+" WHERE thread_id = 'emptied'"); len(n) != 0 {
			t.Errorf("%s still holds the emptied thread: %v", table, n)
		}
	}
	if n, err := st.RemoveEmptyShells(ctx, "", time.Now().Add(time.Second)); err != nil || n != 0 {
		t.Errorf("RemoveEmptyShells again: %d, %v; want nothing left to remove", n, err)
	}
}

func ptrTo[T any](v T) *T { return &v }
