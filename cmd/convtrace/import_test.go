package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/synth"
)

// Two convtrace import processes of overlapping files at once store each
// turn once: the import lock has the second skip what the first stored,
// and the threads list and /api/cost count each turn once.
func TestConcurrentImports(t *testing.T) {
	src, srcDSN := testkit.Open(t)
	if _, err := synth.Generate(context.Background(), src, synth.Config{Turns: 3000, Threads: 20, Days: 5,
		Start: time.Now().UTC().AddDate(0, 0, -7)}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	all, some := filepath.Join(dir, "all.jsonl"), filepath.Join(dir, "some.json")
	for _, args := range [][]string{
		{"export", "--clickhouse", srcDSN, "--format", "jsonl", "--out", all},
		{"export", "--clickhouse", srcDSN, "--thread", synth.Thread1000, "--out", some},
	} {
		if code, _, stderr := runCapture(t, args...); code != 0 {
			t.Fatalf("convtrace %q: %d %s", args, code, stderr)
		}
	}
	dst, dstDSN := testkit.Open(t)
	a := testkit.Start(t, nil, "import", "--clickhouse", dstDSN, all)
	b := testkit.Start(t, nil, "import", "--clickhouse", dstDSN, some, all)
	for _, p := range []*testkit.Process{a, b} {
		if code := p.Wait(t, 2*time.Minute); code != 0 {
			t.Fatalf("import: exit %d: %s", code, p.Output())
		}
	}
	imported := regexp.MustCompile(`imported \d+ threads, (\d+) turns`)
	stored := 0
	for _, m := range imported.FindAllStringSubmatch(a.Output()+b.Output(), -1) {
		n, _ := strconv.Atoi(m[1])
		stored += n
	}
	counts := testkit.Strings(t, dst, `SELECT concat(toString(count()), ' ', toString(uniqExact(turn_id))) FROM conversations`)
	final := testkit.Strings(t, dst, `SELECT toString(count()) FROM conversations FINAL`)
	if counts[0] != "3000 3000" || final[0] != "3000" || stored != 3000 {
		t.Fatalf("rows, distinct turns: %s; FINAL %s; imported %d turns in all (%s %s); want 3000 each",
			counts[0], final[0], stored, a.Output(), b.Output())
	}

	v := testkit.Serve(t, nil, "--clickhouse", dstDSN)
	var list struct {
		Threads []struct {
			Turns   int     `json:"turns"`
			CostUSD float64 `json:"cost_usd"`
		} `json:"threads"`
	}
	getJSON(t, "http://"+v.Viewer+"/api/threads?limit=100", &list)
	turns, listCost := 0, 0.0
	for _, th := range list.Threads {
		turns, listCost = turns+th.Turns, listCost+th.CostUSD
	}
	var cost struct {
		Totals struct {
			Calls   int     `json:"calls"`
			CostUSD float64 `json:"cost_usd"`
		} `json:"totals"`
	}
	getJSON(t, "http://"+v.Viewer+"/api/cost?days=30", &cost)
	var calls int64
	var finalCost float64
	if err := dst.QueryRow(context.Background(), `SELECT toInt64(countIf(cost_source != '')), sum(cost_usd) FROM conversations FINAL`).Scan(&calls, &finalCost); err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }
	if turns != 3000 || int64(cost.Totals.Calls) != calls || !near(cost.Totals.CostUSD, finalCost) || !near(listCost, finalCost) {
		t.Errorf("list: %d turns costing %f; /api/cost: %d calls costing %f; FINAL: %d calls costing %f; want 3000 turns and the same calls and cost",
			turns, listCost, cost.Totals.Calls, cost.Totals.CostUSD, calls, finalCost)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, v) != nil {
		t.Fatalf("GET %s: %d %.300s", url, resp.StatusCode, body)
	}
}

// A zstd bomb (a few hundred MiB of one byte in some KiB) is refused
// within seconds, from a file and from standard input, writing nothing
// decompressed to the temporary folder and holding little memory.
func TestImportZstdBomb(t *testing.T) {
	_, dst := testkit.Open(t)
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.jsonl.zst")
	f, err := os.Create(bomb)
	if err != nil {
		t.Fatal(err)
	}
	zw, err := zstd.NewWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for range 400 {
		if _, err := zw.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(bomb)
	for _, via := range []string{"file", "stdin"} {
		t.Run(via, func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(testkit.Binary(t), "import", "--clickhouse", dst, bomb)
			if via == "stdin" {
				cmd = exec.Command(testkit.Binary(t), "import", "--clickhouse", dst, "-")
				in, err := os.Open(bomb)
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				cmd.Stdin = in
			}
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			tmpPeak := int64(0)
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			watch := time.NewTicker(20 * time.Millisecond)
			defer watch.Stop()
		wait:
			for {
				select {
				case <-done:
					break wait
				case <-watch.C:
					tmpPeak = max(tmpPeak, dirSize(t, tmp))
				case <-time.After(time.Minute):
					_ = cmd.Process.Kill()
					t.Fatalf("import of a %d-byte bomb still running after a minute: %s", st.Size(), out.String())
				}
			}
			took := time.Since(start)
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
			if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(out.String(), "refused as a decompression bomb") {
				t.Errorf("exit %d: %s; want 1 and the bomb refused", code, out.String())
			}
			if took > 20*time.Second || tmpPeak > 2*st.Size()+4096 || rss > 256<<20 {
				t.Errorf("a %d-byte bomb took %s, the temporary folder up to %d bytes, memory up to %d MiB; want under 20 s, its own size, 256 MiB",
					st.Size(), took, tmpPeak, rss>>20)
			}
			t.Logf("%d-byte bomb via %s: refused in %s, temporary folder up to %d bytes, %d MiB resident at most", st.Size(), via, took, tmpPeak, rss>>20)
		})
	}
}

func dirSize(t *testing.T, dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// One rule for times at every door (schema.CheckTime): OTLP refuses spans
// starting at 0, in 1970 or in 2200 with a partial success saying why, and
// keeps those at the bounds; what it stored exports and imports back the
// same; the viewer refuses time parameters outside the rule.
func TestTimesAtEveryDoor(t *testing.T) {
	_, srcDSN := testkit.Open(t)
	v := testkit.Serve(t, nil, "--clickhouse", srcDSN, "--join-window", "1s")
	span := func(id int, start, end uint64) string {
		return fmt.Sprintf(`{"traceId":"5b8efff798038103d269b633813fc6%02x","spanId":"00f067aa0ba902%02x","name":"chat gpt-5","kind":3,
			"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[
			{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.request.model","value":{"stringValue":"gpt-5"}},
			{"key":"convtrace.thread.id","value":{"stringValue":"times-%d"}},
			{"key":"gen_ai.input.messages","value":{"stringValue":"[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"hi\"}]}]"}},
			{"key":"gen_ai.output.messages","value":{"stringValue":"[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"hello\"}]}]"}}]}`,
			id, id, start, end, id)
	}
	const max = uint64(4294967295_000_000_000)
	spans := []string{
		span(1, 1_777_000_000_000_000_000, 1_777_000_001_000_000_000), // 2026
		span(2, 946_684_800_000_000_000, 946_684_801_000_000_000),     // 2000-01-01, the first time stored
		span(3, max-1_000_000_000, max),                               // ends at the last
		span(4, 0, 1_000_000_000),                                     // unset
		span(5, 5_000_000_000, 6_000_000_000),                         // 1970
		span(6, 7_258_118_400_000_000_000, 7_258_118_401_000_000_000), // 2200: ts would wrap to 2064
		span(7, max, max+1_000_000_000),                               // ends after 2106
	}
	body := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"skew"}}]},"scopeSpans":[{"spans":[` +
		strings.Join(spans, ",") + `]}]}]}`
	resp, err := http.Post("http://"+v.OTLPHTTP+"/v1/traces", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"rejectedSpans":"4"`) ||
		!strings.Contains(string(answer), "outside the times convtrace stores, 2000-01-01T00:00:00Z to 2106-02-07T06:28:15Z") {
		t.Fatalf("OTLP answer %d %s; want 200 with 4 spans refused for their times", resp.StatusCode, answer)
	}

	dir := t.TempDir()
	first, again := filepath.Join(dir, "first.jsonl"), filepath.Join(dir, "again.jsonl")
	_, dstDSN := testkit.Open(t)
	var exported string
	deadline := time.Now().Add(time.Minute)
	for {
		if code, _, stderr := runCapture(t, "export", "--clickhouse", srcDSN, "--format", "jsonl", "--out", first); code != 0 {
			t.Fatalf("export: %d %s", code, stderr)
		}
		exported = read(t, first)
		if strings.Count(exported, `{"type":"span"`) == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, id := range []string{"times-1", "times-2", "times-3"} {
		if !strings.Contains(exported, `"thread_id":"`+id+`"`) {
			t.Errorf("thread %s not exported:\n%s", id, exported)
		}
	}
	if code, out, stderr := runCapture(t, "import", "--clickhouse", dstDSN, first); code != 0 || !strings.Contains(out, "imported 3 threads") {
		t.Fatalf("import: %d %s %s", code, out, stderr)
	}
	if code, _, stderr := runCapture(t, "export", "--clickhouse", dstDSN, "--format", "jsonl", "--out", again); code != 0 {
		t.Fatalf("export again: %d %s", code, stderr)
	}
	if noTime(read(t, again)) != noTime(exported) {
		t.Errorf("what OTLP stored does not come back the same:\n%s\nagain:\n%s", exported, read(t, again))
	}

	for _, q := range []string{"to=2300-01-01", "from=1999-12-31", "from=0001-01-01T00:00:00Z", "to=2106-02-08"} {
		resp, err := http.Get("http://" + v.Viewer + "/api/cost?" + q)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "outside the times convtrace stores") {
			t.Errorf("/api/cost?%s: %d %s; want 400 naming the range", q, resp.StatusCode, msg)
		}
	}
}

// Eight imports of a 60 MB line at once share the viewer's import memory
// budget: each is stored or answered 503 with Retry-After, and the
// viewer's memory stays within the budget, not eight times an import's.
func TestViewerImportsShareAMemoryBudget(t *testing.T) {
	_, dsn := testkit.Open(t)
	v := testkit.Serve(t, nil, "--clickhouse", dsn)
	line := `{"type":"header","schemaVersion":1,"exportedAt":"2026-01-01T00:00:00Z"}` + "\n" +
		`{"type":"thread","thread":{"id":"big","project":"p","updated_ns":0}}` + "\n" +
		`{"type":"turn","turn":{"turn_id":"s:prompt:0","thread_id":"big","span_id":"s","role":"prompt","start_ns":1777000000000000000,"content":"` +
		strings.Repeat("x", 60<<20) + `"}}` + "\n"
	statuses := make(chan string, 8)
	for range 8 {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, "http://"+v.Viewer+"/api/import?name=big.jsonl", strings.NewReader(line))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- err.Error()
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			statuses <- fmt.Sprintf("%d %s %.200s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}()
	}
	stored, busy := 0, 0
	for range 8 {
		s := <-statuses
		switch {
		case strings.HasPrefix(s, "200 ") && strings.Contains(s, "content longer than"):
			stored++
		case strings.HasPrefix(s, "503 10 ") && strings.Contains(s, "import busy"):
			busy++
		default:
			t.Errorf("import: %s; want 200 with the line refused, or 503 with Retry-After", s)
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", v.Cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	peak := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(status)
	kb, _ := strconv.Atoi(string(peak[1]))
	t.Logf("%d imports read, %d answered busy; the viewer's peak memory %d MiB", stored, busy, kb>>10)
	if stored == 0 || kb>>10 > 900 {
		t.Errorf("%d imports read, peak memory %d MiB; want some read and at most 900 MiB", stored, kb>>10)
	}
}
