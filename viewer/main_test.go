package viewer_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/demo"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/viewer"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// t0 is when every fixture thread starts.
var t0 = uint64(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC).UnixNano())

// at is t0 plus s seconds.
func at(s int) uint64 { return t0 + uint64(s)*uint64(time.Second) }

func u32(v uint32) *uint32   { return &v }
func f64(v float64) *float64 { return &v }

// call returns the prompt and response rows of one finished provider call,
// as the collector writes them: the prompt at start, the response at end
// carrying duration, tokens and cost.
func call(thread, span, phase string, round uint16, speaker, provider, model string, start int, prompt, response string) (schema.Turn, schema.Turn) {
	base := schema.Turn{
		TraceID: "trace-" + thread, SpanID: span, Project: "proj", ThreadID: thread,
		Phase: phase, Round: round, Speaker: speaker, Operation: schema.OperationChat,
		Provider: provider, Model: model, Status: schema.StatusOK,
	}
	p, r := base, base
	p.TurnID, p.Role, p.Seq, p.StartNS = schema.PromptTurnID(span), schema.RolePrompt, 0, at(start)
	p.Content, p.ContentBytes = prompt, uint32(len(prompt))
	r.TurnID, r.Role, r.Seq, r.StartNS = schema.ResponseTurnID(span, false), schema.RoleResponse, 1, at(start+1)
	r.DurationNS = uint64(time.Second)
	r.Content, r.ContentBytes = response, uint32(len(response))
	return p, r
}

// beating stamps the prompt of a running call with a fresh heartbeat, as
// its recorder does: fixtures start long ago, and without one the call
// shows as interrupted.
func beating(p schema.Turn) schema.Turn {
	p.HeartbeatNS = uint64(time.Now().UnixNano())
	return p
}

type threadMeta struct {
	thread, title string
	archived      bool
	updatedNS     uint64
}

func insertMeta(t *testing.T, conn driver.Conn, metas ...threadMeta) {
	t.Helper()
	ctx := context.Background()
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO thread_meta (thread_id, title, archived, starred, updated_ns)")
	if err != nil {
		t.Fatalf("prepare batch: %v", err)
	}
	defer batch.Close()
	for _, m := range metas {
		var archived uint8
		if m.archived {
			archived = 1
		}
		if err := batch.Append(m.thread, m.title, archived, uint8(0), m.updatedNS); err != nil {
			t.Fatalf("append meta: %v", err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatalf("send batch: %v", err)
	}
}

// newServer returns a viewer over a fresh, migrated database and that
// database's connection.
func newServer(t *testing.T) (http.Handler, *topology.Conn) {
	t.Helper()
	conn, _ := testkit.Open(t)
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	return viewer.New(conn, viewer.WithLogger(log)).Handler(), conn
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

type response struct {
	status int
	header http.Header
	body   string
}

// newRequest is httptest.NewRequest for the viewer: its Host is a loopback
// address, as a browser on the viewer's machine sends, not example.com.
func newRequest(method, target string, body io.Reader) *http.Request {
	req := httptest.NewRequest(method, target, body)
	req.Host = "127.0.0.1:8080"
	return req
}

// send makes a request with a body of contentType to h, the way a page
// script's convtrace.send does, with header's name-value pairs set after
// (an Origin, a Sec-Fetch-Site), and returns the answer.
func send(t *testing.T, h http.Handler, method, path, contentType, body string, header ...string) response {
	t.Helper()
	req := newRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return response{status: rec.Code, header: rec.Header(), body: string(b)}
}

func get(t *testing.T, h http.Handler, path string) response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return response{status: rec.Code, header: rec.Header(), body: string(body)}
}

// getJSON fetches path, wants status, and decodes the body into v.
func getJSON(t *testing.T, h http.Handler, path string, status int, v any) string {
	t.Helper()
	res := get(t, h, path)
	if res.status != status {
		t.Fatalf("GET %s: status %d, want %d; body:\n%s", path, res.status, status, res.body)
	}
	if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("GET %s: Content-Type %q, want application/json", path, ct)
	}
	if err := json.Unmarshal([]byte(res.body), v); err != nil {
		t.Fatalf("GET %s: decode %s: %v", path, res.body, err)
	}
	return res.body
}

// article returns the HTML of the turn card whose anchor is id.
func article(t *testing.T, page, id string) string {
	t.Helper()
	for start := 0; ; {
		at := strings.Index(page[start:], `<article class="turn`)
		if at < 0 {
			break
		}
		start += at
		card := wholeArticle(page[start:])
		if strings.Contains(card[:strings.Index(card, ">")], `id="`+id+`"`) {
			return card
		}
		start++
	}
	t.Fatalf("no turn card with id %q in page:\n%s", id, page)
	return ""
}

// callCard returns the card of the call that holds turn id: its header
// and every turn of the call.
func callCard(t *testing.T, page, id string) string {
	t.Helper()
	at := strings.Index(page, `id="`+id+`"`)
	if at < 0 {
		t.Fatalf("no turn %q in page:\n%s", id, page)
	}
	start := strings.LastIndex(page[:at], `<article class="call`)
	if start < 0 {
		t.Fatalf("turn %q is in no call card:\n%s", id, page)
	}
	return wholeArticle(page[start:])
}

// wholeArticle returns the <article> element s starts with, up to its
// own end tag, the articles inside it included.
func wholeArticle(s string) string {
	depth := 0
	for i := 0; i < len(s); {
		open, end := strings.Index(s[i:], "<article"), strings.Index(s[i:], "</article>")
		switch {
		case end < 0:
			return s
		case open >= 0 && open < end:
			depth++
			i += open + len("<article")
		default:
			depth--
			i += end + len("</article>")
			if depth == 0 {
				return s[:i]
			}
		}
	}
	return s
}

// demoServer returns a viewer over a fresh database holding one run of the
// demo pipeline (recorded through the in-process exporter, as `convtrace
// demo` does), that database's connection, and the demo thread's id.
func demoServer(t *testing.T) (http.Handler, *topology.Conn, string) {
	t.Helper()
	conn, dsn := testkit.Open(t)
	provider, err := demo.StartProvider()
	if err != nil {
		t.Fatalf("start demo provider: %v", err)
	}
	defer provider.Shutdown(context.Background())
	tp, err := collector.NewTracerProvider(dsn, collector.WithProject("demo"))
	if err != nil {
		t.Fatal(err)
	}
	res, runErr := demo.Run(context.Background(), instrument.NewRecorder(instrument.WithTracerProvider(tp)), provider.URL)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatalf("flush demo rows: %v", err)
	}
	if runErr != nil {
		t.Fatalf("demo pipeline: %v", runErr)
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	return viewer.New(conn, viewer.WithLogger(log)).Handler(), conn, res.ThreadID
}

// browserTab returns a headless Chromium tab that ends with the test. A
// browser test calls it first, before building its fixture: without a
// Chromium it skips the test, and nothing should run the demo pipeline
// for a test that then skips.
func browserTab(t *testing.T) context.Context {
	t.Helper()
	return testkit.Browser(t, 2*time.Minute)
}

// serve serves h on a local port until the test ends and returns the
// server's base URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
