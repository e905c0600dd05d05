package collector

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/demo"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// Every prompt of every fixture and of the demo, stored through the writer
// with its history once, reads back byte for byte as it was recorded:
// through the viewer's queries (a turn's content, a page of turns, the
// trace page's turns) and through the README's SQL. Each history message
// is stored once however many prompts repeat it.
func TestHistoryStoredOnceReadsBack(t *testing.T) {
	conn, dsn := testkit.Open(t)
	ctx := context.Background()

	want := demoTurns(t)
	goldens, err := filepath.Glob("testdata/*/*.turns.json")
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, g := range goldens {
		want = append(want, fixtureTurns(t, strings.TrimSuffix(g, ".turns.json"))...)
	}
	cfg, err := configure([]Option{WithLogger(discardLogger()), WithoutRedaction()}, Option.applyExporter)
	if err != nil {
		t.Fatal(err)
	}
	w := newWriter(dialDSN(dsn), cfg)
	// Twice, as a re-delivery would: copies fold, messages too.
	for range 2 {
		if err := w.writeWait(ctx, item{turns: append([]schema.Turn(nil), want...)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	st := store.New(conn, 100, time.Minute)
	sqlContent := map[string]string{}
	rows, err := conn.Query(ctx, "SELECT turn_id, "+schema.WholeContentSQL+" AS whole_content FROM conversations "+schema.HistoryJoinSQL)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, content string
		if err := rows.Scan(&id, &content); err != nil {
			t.Fatal(err)
		}
		sqlContent[id] = content
	}
	rows.Close()

	split, prompts := 0, 0
	for _, tu := range want {
		if tu.Role != schema.RolePrompt {
			continue
		}
		prompts++
		var stored []string
		if err := conn.QueryRow(ctx, "SELECT history FROM conversations WHERE turn_id = ? LIMIT 1", tu.TurnID).Scan(&stored); err != nil {
			t.Fatalf("%s: %v", tu.TurnID, err)
		}
		if len(stored) > 0 {
			split++
		}
		whole, err := st.TurnContent(ctx, tu.ThreadID, tu.TurnID)
		if err != nil {
			t.Fatal(err)
		}
		page, err := st.Turns(ctx, tu.ThreadID, store.TurnFilter{TurnID: tu.TurnID}, 1, store.AllContent)
		if err != nil || len(page) != 1 {
			t.Fatalf("%s: %d turns, %v", tu.TurnID, len(page), err)
		}
		span, err := st.SpanTurns(ctx, tu.TraceID, tu.SpanID)
		if err != nil {
			t.Fatal(err)
		}
		for what, got := range map[string]string{"TurnContent": whole, "Turns": page[0].Content, "the README's SQL": sqlContent[tu.TurnID]} {
			if got != tu.Content {
				t.Errorf("%s of %s (history of %d):\n got %q\nwant %q", what, tu.TurnID, len(stored), got, tu.Content)
			}
		}
		for _, st := range span {
			if st.TurnID == tu.TurnID && !strings.HasPrefix(tu.Content, st.Content) {
				t.Errorf("trace page's %s is not the start of the prompt: %q", tu.TurnID, st.Content)
			}
		}
	}
	if split == 0 || split == prompts {
		t.Errorf("%d of %d prompts stored with history: the fixtures and the demo should have both kinds", split, prompts)
	}
	var copies int64
	if err := conn.QueryRow(ctx, "SELECT count() - uniqExact(thread_id, id) FROM messages").Scan(&copies); err != nil {
		t.Fatal(err)
	}
	if copies != 0 {
		t.Errorf("%d history messages stored more than once by one writer", copies)
	}
	t.Logf("%d prompts, %d stored with their history once", prompts, split)
}

// demoTurns records the demo pipeline and maps its spans as the writer
// would, without storing them.
func demoTurns(t *testing.T) []schema.Turn {
	t.Helper()
	srv := httptest.NewServer(demo.NewProvider())
	defer srv.Close()
	sr := tracetest.NewSpanRecorder()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(sr))
	if _, err := demo.Run(context.Background(), instrument.NewRecorder(instrument.WithTracerProvider(tp)), srv.URL+"/v1"); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, _ := rowsOf(&mapping.SDKReader{}, sr.Ended())
	return r.Turns
}
