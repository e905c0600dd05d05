package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.uber.org/goleak"

	"github.com/convtrace/convtrace/internal/testkit"
)

func TestReadLine(t *testing.T) {
	tests := []struct {
		in        string
		limit     int
		want      []string // texts, "<nil>" for one not kept
		wantSizes []int
	}{
		{"a\nbc\n", 10, []string{"a", "bc", ""}, []int{1, 2, 0}}, // then EOF
		{" {} \r\n\nlast", 10, []string{"{}", "", "last"}, []int{5, 0, 4}},
		{"0123456789ab\nok\n", 10, []string{"<nil>", "ok", ""}, []int{12, 2, 0}},
		{strings.Repeat("x", 100) + "\nok", 50, []string{"<nil>", "ok"}, []int{100, 2}}, // past the 16-byte buffer
	}
	for _, tt := range tests {
		br := bufio.NewReaderSize(strings.NewReader(tt.in), 16)
		var got []string
		var sizes []int
		for {
			text, size, err := readLine(br, tt.limit)
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			if text == nil && size > 0 {
				got = append(got, "<nil>")
			} else {
				got = append(got, string(text))
			}
			sizes = append(sizes, size)
			if err != nil {
				break
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) || fmt.Sprint(sizes) != fmt.Sprint(tt.wantSizes) {
			t.Errorf("readLine(%.40q, limit %d): %q of sizes %v; want %q of %v", tt.in, tt.limit, got, sizes, tt.want, tt.wantSizes)
		}
	}
}

func TestReadMessage(t *testing.T) {
	longID := strings.Repeat("i", maxIDBytes+1)
	tests := []struct {
		name   string
		line   string
		size   int // 0: the line's
		code   int64
		wantID string // the refusal's id
	}{
		{"a request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, 0, ""},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, 0, ""},
		{"a response", `{"jsonrpc":"2.0","id":"s1","result":{}}`, 0, 0, ""},
		{"over the frame bound", "", MaxFrameBytes + 1, jsonrpc.CodeParseError, "null"},
		{"not JSON", `{not json`, 0, jsonrpc.CodeParseError, "null"},
		{"two values", `{} {}`, 0, jsonrpc.CodeParseError, "null"},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 0, jsonrpc.CodeInvalidRequest, "null"},
		{"a number", `42`, 0, jsonrpc.CodeInvalidRequest, "null"},
		{"version 1", `{"jsonrpc":"1.0","id":"a","method":"ping"}`, 0, jsonrpc.CodeInvalidRequest, `"a"`},
		{"neither method nor id", `{"jsonrpc":"2.0"}`, 0, jsonrpc.CodeInvalidRequest, "null"},
		{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, 0, jsonrpc.CodeInvalidRequest, "null"},
		{"a number method", `{"jsonrpc":"2.0","id":-3,"method":5}`, 0, jsonrpc.CodeInvalidRequest, "-3"},
		{"a long id", `{"jsonrpc":"2.0","id":"` + longID + `","method":"ping"}`, 0, jsonrpc.CodeInvalidRequest, "null"},
		{"a long id, no method", `{"jsonrpc":"2.0","id":"` + longID + `"}`, 0, jsonrpc.CodeInvalidRequest, "null"},
	}
	for _, tt := range tests {
		size := tt.size
		if size == 0 {
			size = len(tt.line)
		}
		msg, bad := readMessage([]byte(tt.line), size)
		switch {
		case tt.code == 0 && (bad != nil || msg == nil):
			t.Errorf("%s: %.100q refused (%+v), want a message", tt.name, tt.line, bad)
		case tt.code == 0:
		case bad == nil:
			t.Errorf("%s: %.100q read as %T, want refused with %d", tt.name, tt.line, msg, tt.code)
		default:
			b, err := json.Marshal(bad)
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":`, tt.wantID, tt.code); !strings.HasPrefix(string(b), want) {
				t.Errorf("%s: %.100q answered %s, want %s…", tt.name, tt.line, b, want)
			}
		}
	}
}

func TestCutMiddle(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789", 10, "0123456789"},
		{"abcdefghijklmnopqrstuvwxyz", 10, "abcde … [16 bytes left out] … vwxyz"},
		{"데이터데이터", 8, "데 … [12 bytes left out] … 터"}, // never half a character
	}
	for _, tt := range tests {
		if got := cutMiddle(tt.s, tt.n); got != tt.want {
			t.Errorf("cutMiddle(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// Write cuts an error's text and sends an error in place of an answer
// over MaxAnswerBytes, the request's id kept.
func TestWriteBounds(t *testing.T) {
	id, err := jsonrpc.MakeID("r1")
	if err != nil {
		t.Fatal(err)
	}
	big, err := json.Marshal(map[string]string{"text": strings.Repeat("x", MaxAnswerBytes)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		msg  *jsonrpc.Response
		code int64
		want string
	}{
		{"a long error", &jsonrpc.Response{ID: id, Error: fmt.Errorf("%w: %q", &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}, strings.Repeat("m", 1<<20))},
			jsonrpc.CodeMethodNotFound, "bytes left out"},
		{"a long answer", &jsonrpc.Response{ID: id, Result: big}, jsonrpc.CodeInternalError, "over the 262144 this server sends"},
		{"an answer that fits", &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"ok":true}`)}, 0, `"result":{"ok":true}`},
	}
	for _, tt := range tests {
		var out strings.Builder
		c := &conn{w: &out}
		if err := c.Write(context.Background(), tt.msg); err != nil {
			t.Fatal(err)
		}
		var got struct {
			ID    string         `json:"id"`
			Error *jsonrpc.Error `json:"error"`
		}
		if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
			t.Fatalf("%s: %.200q: %v", tt.name, out.String(), err)
		}
		code := int64(0)
		if got.Error != nil {
			code = got.Error.Code
		}
		if out.Len() > MaxAnswerBytes || got.ID != "r1" || code != tt.code || !strings.Contains(out.String(), tt.want) {
			t.Errorf("%s: %d bytes, %.300q; want at most %d, id r1, code %d, saying %q", tt.name, out.Len(), out.String(), MaxAnswerBytes, tt.code, tt.want)
		}
	}
}

// Read answers each bad line and returns the next message; closing the
// connection and its input ends the reading goroutine.
func TestTransportRead(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	in, client := io.Pipe()
	out := new(testkit.Buffer)
	c, err := NewTransport(in, out).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		io.WriteString(client, "{not json\n\n"+strings.Repeat("x", MaxFrameBytes+1)+"\n")
		io.WriteString(client, `{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n")
	}()
	msg, err := c.Read(context.Background())
	if req, ok := msg.(*jsonrpc.Request); err != nil || !ok || req.Method != "ping" {
		t.Fatalf("Read: %+v, %v; want the ping", msg, err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"code":-32700`) || !strings.Contains(lines[1], "a line of 4194305 bytes") {
		t.Errorf("answers to a line not JSON, a blank one and one too long: %q; want two parse errors", lines)
	}
	c.Close()
	client.Close()
	if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("Read after Close: %v, want EOF", err)
	}
}
