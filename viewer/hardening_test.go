package viewer_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/viewer"
)

// A page whose name was rebound to the viewer's address (DNS rebinding)
// sends its own name as Host: it can neither read nor change anything.
// Addresses, localhost and the names given with WithHosts are answered.
func TestHostMustNameTheViewer(t *testing.T) {
	conn, _ := testkit.Open(t)
	h := viewer.New(conn, viewer.WithHosts("convtrace.internal")).Handler()
	p, r := call("th-host", "h1", "plan", 0, "planner", "openai", "gpt-5", 10, "secret plan", "ok")
	testkit.InsertTurns(t, conn, p, r)

	do := func(method, host, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Host = host
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Origin", "http://"+host)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, host := range []string{"evil.example:8080", "evil.example", "127.0.0.1.evil.example:8080", "localhost.evil.example"} {
		for _, path := range []string{"/", "/api/threads", "/threads/th-host", "/api/threads/th-host/turns", "/static/app.js"} {
			if rec := do(http.MethodGet, host, path, ""); rec.Code != http.StatusMisdirectedRequest || strings.Contains(rec.Body.String(), "secret plan") {
				t.Errorf("GET %s with Host %s: status %d, want 421 and nothing of the thread", path, host, rec.Code)
			}
		}
		if rec := do(http.MethodPatch, host, "/api/threads/th-host", `{"title":"pwned"}`); rec.Code != http.StatusMisdirectedRequest {
			t.Errorf("PATCH with Host %s: status %d, want 421", host, rec.Code)
		}
	}
	for _, host := range []string{"127.0.0.1:8080", "[::1]:8080", "localhost:8080", "app.localhost", "10.1.2.3:8080", "CONVTRACE.internal:443"} {
		if rec := do(http.MethodGet, host, "/api/threads", ""); rec.Code != http.StatusOK {
			t.Errorf("GET /api/threads with Host %s: status %d, want 200", host, rec.Code)
		}
	}
	var titles struct{ Threads []store.Thread }
	getJSON(t, h, "/api/threads", http.StatusOK, &titles)
	if len(titles.Threads) != 1 || titles.Threads[0].Title != "secret plan" {
		t.Errorf("threads after the refused PATCH: %+v, want the title unchanged", titles.Threads)
	}
}

// A cost CSV opened in a spreadsheet runs no formula a model name, a
// speaker or a thread id carries.
func TestCostCSVNeutralisesFormulas(t *testing.T) {
	h, conn := costServer(t)
	var turns []schema.Turn
	for i, name := range []string{"=HYPERLINK(\"http://evil\")", "+1+2", "-2+3", "@SUM(A1)", "\tx", "\rx"} {
		p, r := call(name, fmt.Sprint("f", i), "plan", 0, name, "openai", name, i, "p", "r")
		turns = append(turns, p, usage(r, 10, 5, 0, f64(0.001), schema.CostProvided))
	}
	testkit.InsertTurns(t, conn, turns...)
	for _, table := range []string{"model", "speaker", "threads"} {
		res := get(t, h, costPath("/api/cost/csv", "&table="+table))
		records, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
		if err != nil || len(records) != 7 {
			t.Fatalf("table %s: %d records (%v):\n%s", table, len(records), err, res.body)
		}
		for _, rec := range records[1:] {
			if c := rec[0]; c == "" || strings.ContainsRune("=+-@\t\r", rune(c[0])) {
				t.Errorf("table %s: cell %q starts a formula", table, c)
			}
		}
	}
}

// Every route answers an oversized parameter with 400 naming it, never a
// 500 or a query of 100 KB.
func TestParametersHaveLengthLimits(t *testing.T) {
	h, conn := newServer(t)
	p, r := call("th-long-param", "l1", "plan", 0, "planner", "openai", "gpt-5", 10, "p", "r")
	testkit.InsertTurns(t, conn, p, r)
	huge := strings.Repeat("x", 100<<10)
	long := strings.Repeat("y", 5<<10)
	routes := []string{"/", "/api/threads", "/threads/th-long-param", "/api/threads/th-long-param/turns",
		"/api/threads/th-long-param", "/search", "/api/search", "/cost", "/api/cost", "/api/cost/csv",
		"/traces/trace-th-long-param", "/api/traces/trace-th-long-param", "/api/threads/th-long-param/context"}
	for _, route := range routes {
		for _, q := range []string{"q=" + huge, "q=" + long, "phase=" + long, "project=" + huge, strings.Repeat("phase=a&", 100)} {
			res := get(t, h, route+"?"+q)
			if res.status != http.StatusBadRequest {
				t.Errorf("GET %s?%s…: status %d, want 400; body %.200s", route, q[:12], res.status, res.body)
			}
		}
	}
	if res := get(t, h, "/api/threads/"+url.PathEscape(huge)); res.status != http.StatusBadRequest {
		t.Errorf("GET a 100 KB thread id: status %d, want 400", res.status)
	}
	if res := get(t, h, "/api/threads?q=short"); res.status != http.StatusOK {
		t.Errorf("GET a short query: status %d, want 200", res.status)
	}
}

// A span with 100,000 attributes (and long values) keeps the thread page
// and its JSON small; the attributes are all one link away.
func TestAttributesCappedPerTurn(t *testing.T) {
	h, conn := newServer(t)
	p, r := call("th-attrs", "a1", "plan", 0, "planner", "openai", "gpt-5", 10, "p", "r")
	for i := range 100_000 {
		r.Attributes = append(r.Attributes, schema.Attr{Key: fmt.Sprintf("k%06d", i), Value: strings.Repeat("v", 100)})
	}
	r.Attributes[0].Value = strings.Repeat("w", 10_000)
	r.Attributes[1].Value = strings.Repeat("é", 2_000) // cut on a character, never inside one
	testkit.InsertTurns(t, conn, p, r)

	page := get(t, h, "/threads/th-attrs")
	if page.status != http.StatusOK || len(page.body) > 200<<10 {
		t.Errorf("thread page: status %d, %d bytes; want 200 under 200 KiB", page.status, len(page.body))
	}
	if !strings.Contains(page.body, "50 of 100000 shown") || !strings.Contains(page.body, "/api/threads/th-attrs/turns/"+r.TurnID+"/attributes") {
		t.Errorf("thread page has no show-all link for the attributes")
	}
	var turns struct{ Turns []store.Turn }
	body := getJSON(t, h, "/api/threads/th-attrs/turns", http.StatusOK, &turns)
	if len(body) > 200<<10 {
		t.Errorf("turns JSON is %d bytes, want under 200 KiB", len(body))
	}
	var resp *store.Turn
	for i := range turns.Turns {
		if turns.Turns[i].TurnID == r.TurnID {
			resp = &turns.Turns[i]
		}
	}
	if resp == nil || len(resp.Attributes) != 50 || resp.AttributesTotal != 100_000 || len(resp.Attributes["k000000"]) != 1024 ||
		resp.Attributes["k000001"] != strings.Repeat("é", 1024) {
		t.Fatalf("response turn attributes: %v", resp)
	}
	var all struct {
		Attributes map[string]string `json:"attributes"`
	}
	res := get(t, h, "/api/threads/th-attrs/turns/"+r.TurnID+"/attributes")
	if err := json.Unmarshal([]byte(res.body), &all); err != nil || len(all.Attributes) != 100_000 || len(all.Attributes["k000000"]) != 10_000 {
		t.Errorf("all attributes: status %d, %d attributes (%v)", res.status, len(all.Attributes), err)
	}
}

func TestFormatUSDKeepsSignificantDigits(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{
		{0, "0.00"}, {0.0000066, "0.0000066"}, {0.004, "0.004"}, {0.00456, "0.0046"},
		{0.01, "0.01"}, {0.5, "0.50"}, {1.23456, "1.2346"}, {12, "12.00"},
	} {
		if got := store.FormatUSD(tt.v); got != tt.want {
			t.Errorf("FormatUSD(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// The thread page has its JSON twin at /api/threads/ID, as every page has.
func TestThreadJSONTwin(t *testing.T) {
	h, conn := newServer(t)
	p, r := call("th-twin", "t1", "plan", 0, "planner", "openai", "gpt-5", 10, "plan it", "the plan")
	p2, r2 := call("th-twin", "t2", "review", 0, "critic", "ollama", "qwen", 20, "review it", "fine")
	r = usage(r, 100, 10, 0, f64(0.01), schema.CostProvided)
	r2.CostSource = schema.CostNone
	testkit.InsertTurns(t, conn, p, r, p2, r2)
	var got struct {
		ThreadID    string             `json:"thread_id"`
		Turns       []store.Turn       `json:"turns"`
		Phases      []store.PhaseCount `json:"phases"`
		CostByPhase []store.PhaseTotal `json:"cost_by_phase"`
		Traces      []string           `json:"traces"`
		Facets      store.Facets       `json:"facets"`
	}
	getJSON(t, h, "/api/threads/th-twin", http.StatusOK, &got)
	if got.ThreadID != "th-twin" || len(got.Turns) != 4 || len(got.Phases) != 2 || len(got.CostByPhase) != 2 ||
		got.CostByPhase[1].Calls != 1 || len(got.Traces) != 1 || len(got.Facets.Speakers) != 2 {
		t.Errorf("GET /api/threads/th-twin = %+v", got)
	}
	getJSON(t, h, "/api/threads/th-twin?phase=review", http.StatusOK, &got)
	if len(got.Turns) != 2 {
		t.Errorf("GET /api/threads/th-twin?phase=review has %d turns, want 2", len(got.Turns))
	}
	if res := get(t, h, "/api/threads/nope"); res.status != http.StatusNotFound {
		t.Errorf("GET /api/threads/nope: status %d, want 404", res.status)
	}
}
