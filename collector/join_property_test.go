package collector

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// joinCall is one generated GenAI call sent the way the official OTel
// instrumentations send it: a span without content, and each message a
// log record of its own.
type joinCall struct {
	traceID, spanID []byte
	span            *tracepb.Span // nil: the span never arrives
	lateSpan        bool          // the span arrives after the join window
	logs            []*logspb.LogRecord
}

var propResource = &resourcepb.Resource{Attributes: []*commonpb.KeyValue{strKV("service.name", "prop-agents")}}

func strKV(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func bodyOf(kvs ...*commonpb.KeyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: kvs}}}
}

// genCall makes call i. Its input messages share one timestamp, and so do
// its last user message and its answer, so that only the records' order in
// their requests and their kinds can put them in conversation order.
func genCall(r *rand.Rand, i int) joinCall {
	c := joinCall{traceID: make([]byte, 16), spanID: make([]byte, 8)}
	for j := range c.traceID {
		c.traceID[j] = byte(r.IntN(255) + 1)
	}
	for j := range c.spanID {
		c.spanID[j] = byte(r.IntN(255) + 1)
	}
	t0 := uint64(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC).UnixNano()) + uint64(i)*uint64(time.Second)
	failed := r.IntN(10) == 0
	log := func(ts uint64, name string, body *commonpb.AnyValue) {
		c.logs = append(c.logs, &logspb.LogRecord{TimeUnixNano: ts, EventName: name, TraceId: c.traceID, SpanId: c.spanID, Body: body})
	}
	if r.IntN(3) > 0 {
		log(t0, "gen_ai.system.message", bodyOf(strKV("content", fmt.Sprintf("You are agent %d.", i))))
	}
	log(t0, "gen_ai.user.message", bodyOf(strKV("content", fmt.Sprintf("Question %d?", i))))
	last := t0
	if r.IntN(2) == 0 {
		log(t0+1, "gen_ai.assistant.message", bodyOf(strKV("content", fmt.Sprintf("Earlier answer %d.", i))))
		last = t0 + 2
		log(last, "gen_ai.user.message", bodyOf(strKV("content", fmt.Sprintf("Follow-up %d?", i))))
	}
	if !failed {
		msg := &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{strKV("content", fmt.Sprintf("Answer %d.", i))}}}}
		log(last, "gen_ai.choice", bodyOf(&commonpb.KeyValue{Key: "index", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{}}},
			strKV("finish_reason", "stop"), &commonpb.KeyValue{Key: "message", Value: msg}))
	}
	switch n := r.IntN(10); {
	case n == 0:
		return c // logs only
	case n == 1:
		c.lateSpan = true
	}
	c.span = &tracepb.Span{TraceId: c.traceID, SpanId: c.spanID, Name: "chat gpt-4o", Kind: tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: t0 - uint64(time.Millisecond), EndTimeUnixNano: last + uint64(time.Millisecond),
		Attributes: []*commonpb.KeyValue{strKV("gen_ai.operation.name", "chat"), strKV("gen_ai.provider.name", "openai"),
			strKV("gen_ai.request.model", "gpt-4o"), strKV("gen_ai.conversation.id", fmt.Sprintf("conv-%d", i)),
			{Key: "gen_ai.usage.input_tokens", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 40}}}}}
	if failed {
		c.span.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "rate limited"}
	}
	return c
}

// wantTurns maps the call as if it came whole, in order, in one request.
func (c joinCall) wantTurns() []schema.Turn {
	logs := logsFromOTLP([]*logspb.ResourceLogs{{Resource: propResource, ScopeLogs: []*logspb.ScopeLogs{{LogRecords: c.logs}}}})
	if c.span == nil {
		return mapping.Turns(logsOnly(logs))
	}
	s := spansFromOTLP([]*tracepb.ResourceSpans{{Resource: propResource, ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{c.span}}}}})[0]
	s.AttachLogs(logs)
	return mapping.Turns(s)
}

// delivery is one OTLP request, sent once or twice.
type delivery struct {
	spans []*tracepb.Span
	logs  []*logspb.LogRecord
	twice bool
	to    int // the instance it is sent to (and to the other the second time)
}

// deliveries splits the calls' records into requests: log records of
// several calls shuffled into requests of one to four, each request in
// the order the records were emitted; spans in requests of one to three;
// one in seven requests sent twice. Late spans come in a last group.
func deliveries(r *rand.Rand, calls []joinCall) (now, late []delivery) {
	type ref struct{ call, msg int }
	var refs []ref
	for ci, c := range calls {
		for mi := range c.logs {
			refs = append(refs, ref{ci, mi})
		}
	}
	r.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
	for len(refs) > 0 {
		n := min(len(refs), 1+r.IntN(4))
		chunk := refs[:n]
		refs = refs[n:]
		slices.SortFunc(chunk, func(a, b ref) int { return cmpRef(a.call, a.msg, b.call, b.msg) })
		d := delivery{twice: r.IntN(7) == 0, to: r.IntN(2)}
		for _, x := range chunk {
			d.logs = append(d.logs, calls[x.call].logs[x.msg])
		}
		now = append(now, d)
	}
	var spans, lateSpans []*tracepb.Span
	for _, c := range calls {
		switch {
		case c.span == nil:
		case c.lateSpan:
			lateSpans = append(lateSpans, c.span)
		default:
			spans = append(spans, c.span)
		}
	}
	for len(spans) > 0 {
		n := min(len(spans), 1+r.IntN(3))
		now = append(now, delivery{spans: spans[:n], twice: r.IntN(7) == 0, to: r.IntN(2)})
		spans = spans[n:]
	}
	r.Shuffle(len(now), func(i, j int) { now[i], now[j] = now[j], now[i] })
	for _, s := range lateSpans {
		late = append(late, delivery{spans: []*tracepb.Span{s}})
	}
	return now, late
}

func cmpRef(ac, am, bc, bm int) int {
	if ac != bc {
		return ac - bc
	}
	return am - bm
}

// instances are collector instances on one database; restart replaces the
// first while requests go on.
type instances struct {
	t   *testing.T
	dsn string
	mu  sync.RWMutex
	all []*Ingester
}

func (is *instances) start() *Ingester {
	in, err := NewIngester(is.dsn, WithJoinWindow(2*time.Second), WithFlushInterval(10*time.Millisecond), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		is.t.Fatal(err)
	}
	return in
}

func (is *instances) send(ctx context.Context, pick int, d delivery) error {
	is.mu.RLock()
	defer is.mu.RUnlock()
	in := is.all[pick%len(is.all)]
	if len(d.spans) > 0 {
		_, err := in.Traces(ctx, []*tracepb.ResourceSpans{{Resource: propResource, ScopeSpans: []*tracepb.ScopeSpans{{Spans: d.spans}}}})
		return err
	}
	_, err := in.Logs(ctx, []*logspb.ResourceLogs{{Resource: propResource, ScopeLogs: []*logspb.ScopeLogs{{LogRecords: d.logs}}}})
	return err
}

func (is *instances) restart(ctx context.Context) {
	is.mu.Lock()
	defer is.mu.Unlock()
	if err := is.all[0].Shutdown(ctx); err != nil {
		is.t.Errorf("shutdown: %v", err)
	}
	is.all[0] = is.start()
}

// TestJoinDeliveryVariants sends generated calls through two real
// ingesters on one ClickHouse database in every way the halves of a call
// can arrive: either order, split over requests, records of several calls
// in one request, requests delivered twice, the span missing or later than
// the window, an instance restarted midway. Every call must end as exactly
// the turns it makes when it comes whole in one request, each turn stored
// with one sort key.
func TestJoinDeliveryVariants(t *testing.T) {
	conn, dsn := testkit.Open(t)
	ctx := context.Background()
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 42))
			calls := make([]joinCall, 60)
			for i := range calls {
				calls[i] = genCall(r, int(seed)*1000+i)
			}
			now, late := deliveries(r, calls)
			is := &instances{t: t, dsn: dsn}
			is.all = []*Ingester{is.start(), is.start()}
			defer func() {
				for _, in := range is.all {
					_ = in.Shutdown(ctx)
				}
			}()

			began := time.Now()
			jobs := make(chan delivery)
			var wg sync.WaitGroup
			var sent, failed int
			var mu sync.Mutex
			for range 8 {
				wg.Go(func() {
					for d := range jobs {
						for n := range 1 + boolInt(d.twice) {
							err := is.send(ctx, d.to+n, d)
							mu.Lock()
							sent++
							if err != nil {
								failed++
								t.Errorf("request not stored: %v", err)
							}
							mu.Unlock()
						}
					}
				})
			}
			for i, d := range now {
				if i == len(now)/2 {
					is.restart(ctx)
				}
				jobs <- d
			}
			close(jobs)
			wg.Wait()
			sending := time.Since(began)
			time.Sleep(2200 * time.Millisecond) // past the window: these spans are late
			for _, d := range late {
				if err := is.send(ctx, 0, d); err != nil {
					t.Errorf("late span not stored: %v", err)
				}
			}

			want := map[string]schema.Turn{}
			for _, c := range calls {
				for _, tu := range c.wantTurns() {
					want[tu.TurnID] = tu
				}
			}
			got := waitTurns(t, conn, want)
			t.Logf("%d calls, %d requests sent in %s (%d late spans), %d failed; %d turns wanted, %d found after %s", len(calls), sent, sending.Round(time.Millisecond), len(late), failed, len(want), len(got), time.Since(began).Round(time.Millisecond))
			for id, w := range want {
				g, ok := got[id]
				switch {
				case !ok:
					t.Errorf("turn %s missing", id)
				case g.Content != w.Content || g.Role != w.Role || g.Error != w.Error:
					t.Errorf("turn %s:\n got %s %q (error %q)\nwant %s %q (error %q)", id, g.Role, g.Content, g.Error, w.Role, w.Content, w.Error)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d turns stored, want %d", len(got), len(want))
			}
			var rows, unique uint64
			if err := conn.QueryRow(ctx, "SELECT count(), uniqExact(turn_id) FROM conversations FINAL").Scan(&rows, &unique); err != nil {
				t.Fatal(err)
			}
			if rows != unique {
				t.Errorf("conversations FINAL holds %d rows of %d turns: some turn has two sort keys", rows, unique)
				twoKeys(t, conn, calls)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// waitTurns reads the stored turns of the wanted calls as the viewer
// does, the highest revision of each, until every wanted turn is stored
// whole or 15 s pass.
func waitTurns(t *testing.T, conn driver.Conn, want map[string]schema.Turn) map[string]schema.Turn {
	t.Helper()
	var spanIDs []string
	for _, w := range want {
		spanIDs = append(spanIDs, w.SpanID)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := map[string]schema.Turn{}
		rows, err := conn.Query(context.Background(), `
SELECT turn_id, role, `+schema.WholeContentSQL+` AS whole_content, error
FROM conversations `+schema.HistoryJoinSQL+`
WHERE has(?, span_id)
ORDER BY turn_id, revision DESC
LIMIT 1 BY turn_id`, spanIDs)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var tu schema.Turn
			if err := rows.Scan(&tu.TurnID, &tu.Role, &tu.Content, &tu.Error); err != nil {
				t.Fatal(err)
			}
			got[tu.TurnID] = tu
		}
		rows.Close()
		whole := len(got) == len(want)
		for id, w := range want {
			if g := got[id]; g.Content != w.Content || g.Error != w.Error {
				whole = false
			}
		}
		if whole || time.Now().After(deadline) {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// twoKeys logs the turns stored under more than one sort key.
func twoKeys(t *testing.T, conn driver.Conn, calls []joinCall) {
	t.Helper()
	rows, err := conn.Query(context.Background(), `
SELECT turn_id, groupArray(tuple(thread_id, start_ns, revision))
FROM conversations
GROUP BY turn_id
HAVING uniqExact(thread_id, start_ns) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var keys [][]any
		if err := rows.Scan(&id, &keys); err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			if strings.HasPrefix(id, hex.EncodeToString(c.spanID)) {
				t.Logf("turn %s has keys %v (span %v, late %v)", id, keys, c.span != nil, c.lateSpan)
			}
		}
	}
}
