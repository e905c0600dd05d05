package transfer_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/transfer"
)

// stored counts the rows of every table an import writes.
func stored(t *testing.T, conn driver.Conn) string {
	t.Helper()
	return dump(t, conn, `
SELECT (SELECT count() FROM conversations) AS turns, (SELECT count() FROM spans) AS spans,
       (SELECT count() FROM messages) AS messages, (SELECT count() FROM turn_notes) AS notes,
       (SELECT count() FROM thread_meta) AS meta, (SELECT count() FROM cost_days) AS days`)
}

const nothing = "turns=0\tspans=0\tmessages=0\tnotes=0\tmeta=0\tdays=0\t\n"

// A file that is not a valid export, or is of a newer schemaVersion, is
// refused whole, with where and why, and nothing is stored.
func TestImportRefusesWhole(t *testing.T) {
	src, _ := fixture(t)
	good := exportAll(t, src, transfer.JSON)
	lines := exportAll(t, src, transfer.JSONL)
	newer := bytes.Replace(good, []byte(`{"schemaVersion":1,`), []byte(`{"schemaVersion":2,`), 1)
	// A bad record in the last thread: found by the check before the
	// first thread is stored.
	i := bytes.LastIndex(good, []byte(`"turn_id":"`)) + len(`"turn_id":"`)
	lateBad := append(append(append([]byte{}, good[:i]...), `\u0001`...), good[i:]...)
	cases := []struct {
		name   string
		file   []byte
		format transfer.Format
		want   string // in the error
	}{
		{"newer JSON", newer, transfer.JSON, "schemaVersion 2 is newer than this convtrace reads (schemaVersion 1)"},
		{"newer JSONL", bytes.Replace(lines, []byte(`"schemaVersion":1`), []byte(`"schemaVersion":7`), 1), transfer.JSONL,
			"schemaVersion 7 is newer than this convtrace reads (schemaVersion 1)"},
		{"version last", append(bytes.TrimSuffix(bytes.Replace(newer, []byte(`"schemaVersion":2,`), nil, 1), []byte("}\n")), `,"schemaVersion":3}`...),
			transfer.JSON, "schemaVersion 3 is newer"},
		{"no version", bytes.Replace(good, []byte(`"schemaVersion":1,`), nil, 1), transfer.JSON, "no schemaVersion"},
		// One check of the version, whatever the format.
		{"version -1 JSON", bytes.Replace(good, []byte(`"schemaVersion":1`), []byte(`"schemaVersion":-1`), 1), transfer.JSON,
			"schemaVersion -1 is not a version"},
		{"version -1 JSONL", bytes.Replace(lines, []byte(`"schemaVersion":1`), []byte(`"schemaVersion":-1`), 1), transfer.JSONL,
			"schemaVersion -1 is not a version"},
		{"version 0 JSONL", bytes.Replace(lines, []byte(`"schemaVersion":1`), []byte(`"schemaVersion":0`), 1), transfer.JSONL,
			"no schemaVersion"},
		{"cut short", good[:len(good)*2/3], transfer.JSON, "unexpected EOF"},
		{"syntax error late", bytes.Replace(good, []byte(`"notes":[`), []byte(`"notes":[,`), 1), transfer.JSON, "invalid character ','"},
		{"bad record late", lateBad, transfer.JSON, "control character"},
		{"unknown field", bytes.Replace(good, []byte(`"revision":`), []byte(`"color":1,"revision":`), 1), transfer.JSON, `unknown field "color"`},
		{"not an export", []byte("hello"), transfer.JSON, "invalid export"},
		{"JSONL without header", lines[bytes.IndexByte(lines, '\n')+1:], transfer.JSONL, "line 1: not a header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst, _ := testkit.Open(t)
			_, err := transfer.Import(context.Background(), dst, bytes.NewReader(c.file), "export."+string(c.format))
			if err == nil || !errors.Is(err, transfer.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("import: error %v, want ErrInvalid saying %q", err, c.want)
			}
			if got := stored(t, dst); got != nothing {
				t.Errorf("refused import stored rows: %s", got)
			}
		})
	}
}

// A JSONL export's bad lines are reported by number and reason, and every
// other record is stored.
func TestImportJSONLBadLines(t *testing.T) {
	src, _ := fixture(t)
	lines := strings.Split(strings.TrimSuffix(string(exportAll(t, src, transfer.JSONL)), "\n"), "\n")
	type bad struct {
		line   int // 1-based
		reason string
	}
	var wantBad []bad
	turns := 0
	for i := range lines {
		if strings.HasPrefix(lines[i], `{"type":"turn"`) {
			turns++
			switch turns {
			case 3:
				lines[i] = lines[i][:len(lines[i])/2] // cut
				wantBad = append(wantBad, bad{i + 1, "unexpected EOF"})
			case 5:
				lines[i] = strings.Replace(lines[i], `"role":"`, `"role":"`+`\u0007`, 1)
				wantBad = append(wantBad, bad{i + 1, "role holds the control character U+0007"})
			case 8:
				lines[i] = strings.Replace(lines[i], `"start_ns":`, `"start_ns":0,"x":`, 1)
				wantBad = append(wantBad, bad{i + 1, `unknown field "x"`})
			}
		}
	}
	lines = append(lines, `{"type":"turn"}`, `{"type":"comment","note":{}}`, "", `[1,2]`)
	n := len(lines)
	wantBad = append(wantBad, bad{n - 3, `a turn record without its "turn" field`}, bad{n - 2, `type "comment" is not one of`},
		bad{n, "cannot unmarshal array"})
	dst, _ := testkit.Open(t)
	res := importBytes(t, dst, []byte(strings.Join(lines, "\n")), transfer.JSONL)
	if res.BadLineCount != int64(len(wantBad)) || len(res.BadLines) != len(wantBad) {
		t.Fatalf("bad lines %+v, want %d: %+v", res.BadLines, len(wantBad), wantBad)
	}
	for i, w := range wantBad {
		if got := res.BadLines[i]; got.Line != int64(w.line) || !strings.Contains(got.Reason, w.reason) {
			t.Errorf("bad line %d: %+v, want line %d saying %q", i, got, w.line, w.reason)
		}
	}
	if res.Imported.Turns != int64(turns-3) {
		t.Errorf("imported %d turns, want the %d good ones", res.Imported.Turns, turns-3)
	}
	// Importing the whole export then stores exactly the three turns left.
	res = importBytes(t, dst, exportAll(t, src, transfer.JSONL), transfer.JSONL)
	if res.Imported.Turns != 3 || res.Imported.Spans != 0 || res.Imported.Notes != 0 {
		t.Errorf("whole import after: %+v, want the 3 turns refused before", res)
	}
}
