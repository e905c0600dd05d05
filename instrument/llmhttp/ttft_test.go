package llmhttp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/instrument/llmhttp"
	"github.com/convtrace/convtrace/internal/testkit"
)

// slowStream serves an SSE fixture as a slow provider does: its first
// event (no content yet) at once, then, after delay, the events up to the
// last, then, after delay again, the last.
func slowStream(t *testing.T, fixtureName string, delay time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		var events [][]byte
		for _, ev := range bytes.SplitAfter(fixture(t, fixtureName), []byte("\n\n")) {
			if len(bytes.TrimSpace(ev)) > 0 {
				events = append(events, ev)
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i, ev := range events {
			if i == 1 || i == len(events)-1 {
				time.Sleep(delay)
			}
			_, _ = w.Write(ev)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A streamed call's time to first token is recorded on its response turn:
// at least the delay before the first content, and less than the whole
// call, which waited that long once more; a call not streamed records none.
func TestTimeToFirstToken(t *testing.T) {
	const delay = 150 * time.Millisecond
	conn, dsn := testkit.Open(t)
	tp, err := collector.NewTracerProvider(dsn, collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: llmhttp.NewTransport(nil,
		llmhttp.WithRecorder(instrument.NewRecorder(instrument.WithTracerProvider(tp))))}
	calls := []struct{ thread, fixture, path, body string }{
		{"chat", "openai_chat_stream.sse", "/v1/chat/completions",
			`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Weather?"}]}`},
		{"responses", "openai_responses_stream.sse", "/v1/responses",
			`{"model":"gpt-4.1","stream":true,"input":"Say hi."}`},
		{"anthropic", "anthropic_stream.sse", "/v1/messages",
			`{"model":"claude-sonnet-4-5","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Weather?"}]}`},
	}
	for _, c := range calls {
		srv := slowStream(t, c.fixture, delay)
		post(t, client, c.thread, srv.URL+c.path, c.body)
	}
	whole := newFakeServer(t)
	post(t, client, "whole", whole.URL+"/v1/responses", `{"model":"gpt-4.1","input":"Say hi."}`, "X-Fixture", "openai_responses.json")
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	rows, err := conn.Query(context.Background(), `SELECT thread_id, role, ttft_ns, duration_ns
		FROM conversations FINAL WHERE role != 'prompt' ORDER BY thread_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][2]uint64{}
	for rows.Next() {
		var (
			thread, role    string
			ttft, durations uint64
		)
		if err := rows.Scan(&thread, &role, &ttft, &durations); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s %s: ttft %v of %v", thread, role, time.Duration(ttft), time.Duration(durations))
		if role != "response" {
			t.Errorf("%s: a %s row, want only response rows", thread, role)
		}
		got[thread] = [2]uint64{ttft, durations}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		g, ok := got[c.thread]
		if !ok {
			t.Errorf("%s: no response row", c.thread)
			continue
		}
		if ttft, total := time.Duration(g[0]), time.Duration(g[1]); ttft < delay || ttft >= total {
			t.Errorf("%s: time to first token %v of a %v call, want at least %v and less than the call", c.thread, ttft, total, delay)
		}
	}
	if g, ok := got["whole"]; !ok || g[0] != 0 {
		t.Errorf("a call not streamed: row found %v, time to first token %v, want a row with none", ok, time.Duration(g[0]))
	}
}

// post sends body to url on thread and reads the whole answer; headers are
// more header names and values.
func post(t *testing.T, client *http.Client, thread, url, body string, headers ...string) {
	t.Helper()
	ctx := instrument.WithThread(context.Background(), thread)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d", url, resp.StatusCode)
	}
}
