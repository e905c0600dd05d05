package viewer_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/klauspost/compress/zstd"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/transfer"
	"github.com/convtrace/convtrace/viewer"
)

type importAnswer struct {
	transfer.Result
	Error string `json:"error"`
}

// postImport sends body to POST /api/import as a page of the viewer does.
func postImport(t *testing.T, h http.Handler, body io.Reader, header ...string) (int, importAnswer) {
	t.Helper()
	req := newRequest(http.MethodPost, "/api/import", body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var a importAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("POST /api/import: %d %q: %v", rec.Code, rec.Body.String(), err)
	}
	return rec.Code, a
}

// A thread's export downloads as an attachment, JSON or JSONL; the import
// endpoint stores it in another viewer's database once, refuses what is
// not an export or too large, and follows the rules of every write.
func TestExportImportAPI(t *testing.T) {
	src, _, thread := demoServer(t)
	path := "/api/threads/" + url.PathEscape(thread) + "/export"
	res := get(t, src, path)
	if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Disposition"), `attachment; filename="convtrace-`) ||
		res.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %v", path, res.status, res.header)
	}
	var env struct {
		SchemaVersion int `json:"schemaVersion"`
		Threads       []struct {
			Thread struct {
				ID string `json:"id"`
			} `json:"thread"`
			Turns []json.RawMessage `json:"turns"`
			Spans []json.RawMessage `json:"spans"`
		} `json:"threads"`
	}
	if err := json.Unmarshal([]byte(res.body), &env); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}
	if env.SchemaVersion != transfer.SchemaVersion || len(env.Threads) != 1 || env.Threads[0].Thread.ID != thread ||
		len(env.Threads[0].Turns) == 0 || len(env.Threads[0].Spans) == 0 {
		t.Fatalf("export: version %d, %d threads", env.SchemaVersion, len(env.Threads))
	}
	lines := get(t, src, path+"?format=jsonl")
	if lines.header.Get("Content-Type") != "application/x-ndjson" || !strings.HasPrefix(lines.body, `{"type":"header","schemaVersion":1,`) {
		t.Errorf("JSONL export: %v %.80s", lines.header, lines.body)
	}
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/api/threads/no-such-thread/export", http.StatusNotFound},
		{path + "?format=xml", http.StatusBadRequest},
	} {
		if r := get(t, src, c.path); r.status != c.status || r.header.Get("Content-Disposition") != "" {
			t.Errorf("GET %s: %d %v, want %d without an attachment", c.path, r.status, r.header, c.status)
		}
	}

	dst, _ := newServer(t)
	status, a := postImport(t, dst, strings.NewReader(res.body))
	if status != http.StatusOK || a.Imported.Threads != 1 || a.Imported.Turns != int64(len(env.Threads[0].Turns)) {
		t.Fatalf("import: %d %+v", status, a)
	}
	if got, want := get(t, dst, "/api/threads/"+url.PathEscape(thread)+"/turns").body, get(t, src, "/api/threads/"+url.PathEscape(thread)+"/turns").body; got != want {
		t.Errorf("imported thread's turns differ:\n%s\n%s", got, want)
	}
	status, a = postImport(t, dst, strings.NewReader(lines.body))
	if status != http.StatusOK || a.Imported != (transfer.Counts{}) || a.Skipped.Turns != int64(len(env.Threads[0].Turns)) {
		t.Errorf("second import (JSONL): %d %+v", status, a)
	}
	// An archive file (convtrace archive: JSONL compressed with zstd) is
	// taken as it is.
	status, a = postImport(t, dst, bytes.NewReader(zstdOf(t, lines.body)))
	if status != http.StatusOK || a.Skipped.Turns != int64(len(env.Threads[0].Turns)) {
		t.Errorf("import of the export compressed with zstd: %d %+v", status, a)
	}
	bad := lines.body + "not json\n"
	if status, a = postImport(t, dst, strings.NewReader(bad)); status != http.StatusOK || a.BadLineCount != 1 ||
		a.BadLines[0].Line != int64(strings.Count(lines.body, "\n")+1) {
		t.Errorf("import with a bad line: %d %+v", status, a)
	}

	empty, emptyConn := newServer(t)
	newer := strings.Replace(res.body, `"schemaVersion":1`, `"schemaVersion":2`, 1)
	for _, c := range []struct {
		name   string
		body   io.Reader
		header []string
		status int
		want   string
	}{
		{"newer", strings.NewReader(newer), nil, http.StatusBadRequest, "schemaVersion 2 is newer than this convtrace reads (schemaVersion 1)"},
		{"malformed", strings.NewReader(res.body[:len(res.body)/2]), nil, http.StatusBadRequest, "invalid export"},
		{"too large", io.MultiReader(strings.NewReader(res.body), bytes.NewReader(make([]byte, 64<<20))), nil,
			http.StatusRequestEntityTooLarge, "larger than 64 MiB: import it with convtrace import FILE"},
		// An archive file whose content passes the limit once decompressed.
		{"too large compressed", bytes.NewReader(zstdOf(t, res.body+whitespace(64<<20))), nil,
			http.StatusRequestEntityTooLarge, "larger than 64 MiB"},
		{"zstd bomb", bytes.NewReader(zstdOf(t, strings.Repeat(" ", 60<<20))), nil,
			http.StatusBadRequest, "refused as a decompression bomb"},
		// One check of the version, whatever the format.
		{"version -1", strings.NewReader(strings.Replace(lines.body, `"schemaVersion":1`, `"schemaVersion":-1`, 1)), nil,
			http.StatusBadRequest, "schemaVersion -1 is not a version"},
		{"cross-site", strings.NewReader(res.body), []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, "cross-origin"},
		{"form", strings.NewReader(res.body), []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType, "application/json"},
	} {
		status, a := postImport(t, empty, c.body, c.header...)
		if status != c.status || !strings.Contains(a.Error, c.want) {
			t.Errorf("%s: %d %q, want %d saying %q", c.name, status, a.Error, c.status, c.want)
		}
	}
	var n uint64
	if err := emptyConn.QueryRow(t.Context(), "SELECT count() FROM conversations").Scan(&n); err != nil || n != 0 {
		t.Errorf("refused imports stored %d turns (%v)", n, err)
	}

	// A viewer with a token wants it for an import too.
	locked := viewer.New(emptyConn, viewer.WithToken("s3cret")).Handler()
	req := newRequest(http.MethodPost, "/api/import", strings.NewReader(res.body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	locked.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("import without the token: %d, want 401", rec.Code)
	}
}

// whitespace is n bytes of JSON whitespace in no pattern: what zstd
// compresses some times, not thousands.
func whitespace(n int) string {
	rnd := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = " \t\r\n"[rnd.IntN(4)]
	}
	return string(b)
}

// The threads page's Import button uploads a file and shows what it
// stored; the thread page links its export.
func TestImportButtonInBrowser(t *testing.T) {
	ctx := browserTab(t)
	src, _, thread := demoServer(t)
	file := filepath.Join(t.TempDir(), "demo.json")
	if err := os.WriteFile(file, []byte(get(t, src, "/api/threads/"+url.PathEscape(thread)+"/export").body), 0o600); err != nil {
		t.Fatal(err)
	}
	dst, _ := newServer(t)
	base := serve(t, dst)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("input.import-file"))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("input.import-file"), []string{file})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the import's result", `document.querySelector(".import-status").textContent.startsWith("Imported 1 threads")`)
	status, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".import-status").textContent`))
	if err != nil || !strings.Contains(status, "0 turns were already stored") {
		t.Errorf("import status %q (%v)", status, err)
	}
	testkit.Screenshot(ctx, t, "threads-import")
	// Again: everything is stored already.
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("input.import-file"), []string{file})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the second import's result", `document.querySelector(".import-status").textContent.startsWith("Imported 0 threads")`)

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/"+url.PathEscape(thread)), chromedp.WaitVisible(chromedp.CSS("a.export-thread"))); err != nil {
		t.Fatal(err)
	}
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("a.export-thread").getAttribute("href")`))
	if want := "/api/threads/" + url.PathEscape(thread) + "/export"; err != nil || href != want {
		t.Errorf("Export thread link %q (%v), want %q", href, err, want)
	}
}

// zstdOf compresses s as convtrace archive does.
func zstdOf(t *testing.T, s string) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll([]byte(s), nil)
}
