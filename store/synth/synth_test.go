package synth_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/synth"
)

// small is big enough for every kind of row and several chunks, small
// enough to generate in well under a second. Its odd turn count leaves the
// last call with only its prompt.
var small = synth.Config{Turns: 20_001, Threads: 100, ChunkTurns: 7_000}

func generate(t *testing.T, cfg synth.Config) (driver.Conn, synth.Summary) {
	t.Helper()
	conn, _ := testkit.Open(t)
	var progress strings.Builder
	cfg.Progress = &progress
	sum, err := synth.Generate(context.Background(), conn, cfg)
	if err != nil {
		t.Fatalf("generate %+v: %v", cfg, err)
	}
	t.Logf("generated %+v:\n%s", sum, progress.String())
	return conn, sum
}

// queryUint runs a query answering one number.
func queryUint(t *testing.T, conn driver.Conn, query string) uint64 {
	t.Helper()
	var v uint64
	if err := conn.QueryRow(context.Background(), query).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}

func TestGenerate(t *testing.T) {
	conn, sum := generate(t, small)
	if sum.Turns != 20_001 || sum.Calls != 10_001 || sum.Threads != 100 || sum.RareTurns != 20 {
		t.Errorf("summary %+v, want 20001 turns, 10001 calls, 100 threads, 20 rare turns", sum)
	}
	q := func(phrase string) string {
		return fmt.Sprintf("SELECT count() FROM conversations WHERE positionCaseInsensitiveUTF8(content, '%s') > 0", phrase)
	}
	tests := []struct {
		name, query string
		want        uint64
	}{
		{"turns", "SELECT count() FROM conversations", 20_001},
		{"turn ids unique", "SELECT uniqExact(turn_id) FROM conversations", 20_001},
		{"spans, one per call", "SELECT count() FROM spans", 10_001},
		{"threads", "SELECT uniqExact(thread_id) FROM conversations", 100},
		{"threads of spans", "SELECT uniqExact(thread_id) FROM spans", 100},
		{"thread of 10", "SELECT count() FROM conversations WHERE thread_id = '" + synth.Thread10 + "'", 10},
		{"thread of 200", "SELECT count() FROM conversations WHERE thread_id = '" + synth.Thread200 + "'", 200},
		{"thread of 1000", "SELECT count() FROM conversations WHERE thread_id = '" + synth.Thread1000 + "'", 1000},
		{"thread lengths vary (longest ≥ 10 × shortest)",
			"SELECT toUInt64(max(c) >= 10 * min(c)) FROM (SELECT count() AS c FROM conversations GROUP BY thread_id)", 1},
		{"calls that are not a prompt/answer pair sharing a span id (the last call's lone prompt)",
			`SELECT count() FROM (
			     SELECT span_id, arrayStringConcat(arraySort(groupArray(concat(role, toString(seq)))), ',') AS roles
			     FROM conversations GROUP BY span_id)
			 WHERE roles NOT IN ('prompt0,response1', 'error1,prompt0', 'tool_call0,tool_result1')`, 1},
		{"kinds of call", "SELECT uniqExact(role) FROM conversations", 5},
		{"turns without a span", "SELECT count() FROM conversations WHERE span_id NOT IN (SELECT span_id FROM spans)", 0},
		{"spans on another thread than their turns",
			"SELECT count() FROM conversations ANY INNER JOIN (SELECT span_id, thread_id AS span_thread FROM spans) USING span_id WHERE thread_id != span_thread", 0},
		{"phases", "SELECT uniqExact(phase) FROM conversations", 7},
		{"rounds > 0 exist", "SELECT toUInt64(countIf(round > 0) > 0) FROM conversations", 1},
		{"failed calls carry their error", "SELECT countIf(role = 'error' AND (status != 'error' OR error = '')) FROM conversations", 0},
		{"usage on prompts", "SELECT countIf(role != 'response' AND tokens_in IS NOT NULL) FROM conversations", 0},
		{"responses with known tokens", "SELECT toUInt64(countIf(role = 'response' AND tokens_in IS NOT NULL) > 0) FROM conversations", 1},
		{"responses with unknown (NULL) tokens", "SELECT toUInt64(countIf(role = 'response' AND tokens_in IS NULL) > 0) FROM conversations", 1},
		{"known tokens with unknown (NULL) cost", "SELECT toUInt64(countIf(tokens_in IS NOT NULL AND cost_usd IS NULL) > 0) FROM conversations", 1},
		{"content of a few hundred bytes on average", "SELECT toUInt64(avg(length(content)) BETWEEN 150 AND 500) FROM conversations", 1},
		{"content_bytes is the content's length", "SELECT countIf(content_bytes != length(content)) FROM conversations", 0},
		{"days from first to last turn", "SELECT toUInt64(intDiv(max(start_ns) - min(start_ns), 86400000000000)) FROM conversations", 89},
		{"rare Korean phrase", q(synth.RarePhrase), uint64(sum.RareTurns)},
		{"Japanese found", "SELECT toUInt64((" + q("キャッシュ") + ") > 0)", 1},
		{"emoji found", "SELECT toUInt64((" + q("🚀") + ") > 0)", 1},
		{"common word, any case", q(strings.ToUpper(synth.CommonWord)), queryUint(t, conn, q(synth.CommonWord))},
		{"common word in a third of turns or more", "SELECT toUInt64((" + q(synth.CommonWord) + ") * 3 >= 20001)", 1},
	}
	for _, tt := range tests {
		if got := queryUint(t, conn, tt.query); got != tt.want {
			t.Errorf("%s:\n%s\ngot %d, want %d", tt.name, tt.query, got, tt.want)
		}
	}
}

// checksum hashes every generated column of both tables, so two databases
// agree only when they hold the same rows.
const checksum = `
SELECT
    (SELECT sum(cityHash64(turn_id, trace_id, span_id, project, thread_id, session_id, phase, speaker, agent, round,
                           role, seq, operation, provider, model, tool_name, tool_call_id, content, content_bytes,
                           ifNull(toString(tokens_in), 'null'), ifNull(toString(tokens_out), 'null'),
                           ifNull(toString(tokens_cache_read), 'null'), ifNull(toString(tokens_cache_write), 'null'),
                           ifNull(toString(tokens_reasoning), 'null'), ifNull(toString(cost_usd), 'null'),
                           status, error, start_ns, duration_ns))
     FROM conversations)
    +
    (SELECT sum(cityHash64(trace_id, span_id, thread_id, phase, round, speaker, agent, name, start_ns, duration_ns,
                           status, status_message, model, ifNull(toString(tokens_in), 'null'),
                           ifNull(toString(cost_usd), 'null')))
     FROM spans)`

// TestGenerateDeterministic generates the same config twice, in chunks of
// different sizes, and wants the same rows.
func TestGenerateDeterministic(t *testing.T) {
	a, _ := generate(t, small)
	one := small
	one.ChunkTurns = small.Turns
	b, _ := generate(t, one)
	if ca, cb := queryUint(t, a, checksum), queryUint(t, b, checksum); ca != cb {
		t.Errorf("checksum of %+v: %d, of %+v: %d; want equal", small, ca, one, cb)
	}
	other := small
	other.Turns++
	c, _ := generate(t, other)
	if ca, cc := queryUint(t, a, checksum), queryUint(t, c, checksum); ca == cc {
		t.Errorf("checksum of %+v equals that of %+v: %d; the checksum sees nothing", small, other, ca)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  synth.Config
		want string // in the error; "" for none
	}{
		{synth.Config{}, ""},
		{synth.Config{Turns: 10_000_000}, ""},
		{synth.Config{Turns: 1410, Threads: 100}, ""},
		{synth.Config{Turns: 1409, Threads: 100}, "turns: 1409, want at least 1410"},
		{synth.Config{Threads: 3}, "threads: 3"},
		{synth.Config{Turns: 2_000_000_000}, "at most"},
		{synth.Config{Days: -1}, "days"},
		{synth.Config{ChunkTurns: 1}, "chunk turns"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Validate(%+v) = %v, want nil", tt.cfg, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Validate(%+v) = %v, want an error containing %q", tt.cfg, err, tt.want)
		}
	}
}

// Example fills a fresh database with the default million turns, reporting
// progress on stderr.
func Example() {
	ctx := context.Background()
	conn, err := ddl.Open(ctx, "clickhouse://127.0.0.1:9000/convtrace_bench")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	if _, err := ddl.Migrate(ctx, conn); err != nil {
		fmt.Println(err)
		return
	}
	sum, err := synth.Generate(ctx, conn, synth.Config{Progress: os.Stderr})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d turns in %d threads, %d of them with %q\n", sum.Turns, sum.Threads, sum.RareTurns, synth.RarePhrase)
}
