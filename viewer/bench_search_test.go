package viewer_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/convtrace/convtrace/store/synth"
)

// BenchmarkSearchWithoutWord measures searches by filters alone over the
// million synthetic turns beside the word searches and the baselines they
// are read against, in one run: the newest Bash calls, every starred turn
// (50 stars spread over the three months, so every month is read), the
// failed calls, the running calls and one phase's turns. A filter reads
// the key and metadata columns, then the content of the page's rows only.
func BenchmarkSearchWithoutWord(b *testing.B) {
	h, conn := benchServer(b)
	ctx := context.Background()
	// The stars, the same 50 turns on every run (a note row again folds).
	if err := conn.Exec(ctx, `
INSERT INTO turn_notes (thread_id, turn_id, starred, memo, updated_ns)
SELECT thread_id, turn_id, 1, '', 1
FROM conversations
WHERE cityHash64(turn_id) % 20000 = 7
ORDER BY turn_id
LIMIT 50`); err != nil {
		b.Fatal(err)
	}
	var total uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM conversations").Scan(&total); err != nil {
		b.Fatal(err)
	}
	routes := []struct{ name, path string }{
		{"FilterToolAPI", "/api/search?role=tool_call&tool=bash"},
		{"FilterToolPage", "/search?role=tool_call&tool=bash"},
		{"FilterStarredAPI", "/api/search?starred=1"},
		{"FilterErrorAPI", "/api/search?status=error"},
		{"FilterRunningAPI", "/api/search?status=running"},
		{"FilterPhaseAPI", "/api/search?phase=verify"},
		{"SearchCommonAPI", "/api/search?q=" + url.QueryEscape(synth.CommonWord)},
		{"SearchRareAPI", "/api/search?q=" + url.QueryEscape(synth.RarePhrase)},
	}
	for _, r := range routes {
		b.Run(r.name, func(b *testing.B) { benchRoute(b, h, r.path, total) })
	}
	b.Run("BaselineContentScan", func(b *testing.B) {
		benchCount(b, conn, 0, "SELECT count() FROM conversations WHERE positionCaseInsensitiveUTF8(content, ?) > 0", synth.RarePhrase)
	})
	// The floor of a filter: one pass over the columns it reads.
	b.Run("BaselineToolScan", func(b *testing.B) {
		benchCount(b, conn, 0, "SELECT count() FROM conversations WHERE role = 'tool_call' AND tool_name = 'bash'")
	})
	// A filter reads no content but its page's: well under a scan of it.
	printRatios(b, total, []ratio{
		{"FilterToolAPI", "BaselineContentScan", "< 1×"},
		{"FilterToolPage", "BaselineContentScan", "< 1×"},
		{"FilterStarredAPI", "BaselineContentScan", "< 1×"},
		{"FilterErrorAPI", "BaselineContentScan", "< 1×"},
		{"FilterRunningAPI", "BaselineContentScan", "< 1×"},
		{"FilterPhaseAPI", "BaselineContentScan", "< 1×"},
		{"SearchCommonAPI", "BaselineContentScan", "≤ 1 s"},
		{"SearchRareAPI", "BaselineContentScan", "≤ 0.3 s"},
		{"FilterToolAPI", "SearchCommonAPI", "< 1×"},
		{"FilterToolAPI", "BaselineToolScan", "—"},
	})
}
