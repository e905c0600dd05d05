package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// A key of OpenAI's shape (not a live one) and a host a user's pattern
// names.
const (
	serveOpenAIKey  = "sk-proj-Lm4nOp7qRs0tUv3wXy6zAb9cDe2fGh5iJk8lMn1oPq4rSt7uVw0xYz3aBc6dEf9gHi2jKl5mNo8pQr1sTu4vWx7yZa"
	serveSecretHost = "db-7.corp.example.com"
)

// TestServeRedacts sends a call whose prompt holds an OpenAI key and a
// host matched by a --redact-patterns file over OTLP: serve stores
// markers and counts them on /metrics; with --redact=off it stores the
// content as it came.
func TestServeRedacts(t *testing.T) {
	patterns := filepath.Join(t.TempDir(), "patterns")
	if err := os.WriteFile(patterns, []byte("# our hosts\ninternal_host \\b[a-z0-9-]+\\.corp\\.example\\.com\\b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--redact-patterns", patterns}, `key [REDACTED:openai_key] on [REDACTED:internal_host]`},
		{[]string{"--redact=off"}, `key ` + serveOpenAIKey + ` on ` + serveSecretHost},
	} {
		s := startServe(t, tc.flags...)
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(httpExp2(t, s.otlpHTTP)))
		emitGenAICall(tp, "gpt-4o-redact", "key "+serveOpenAIKey+" on "+serveSecretHost, "ok")
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := turnsOfModel(t, s.conn, "gpt-4o-redact")
		if len(got) != 2 || !strings.Contains(got[0].Content, `"content":"`+tc.want+`"`) {
			t.Errorf("serve %v stored %+v, want a prompt of %q", tc.flags, got, tc.want)
		}
		resp, err := http.Get("http://" + s.otlpHTTP + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		metrics := string(b)
		// Each secret is stored once, in the prompt turn: the spans row
		// leaves out the gen_ai.input.messages its turns hold.
		counted := strings.Contains(metrics, `convtrace_redactions_total{kind="openai_key"} 1`) &&
			strings.Contains(metrics, `convtrace_redactions_total{kind="internal_host"} 1`) &&
			strings.Contains(metrics, `convtrace_redactions_total{kind="private_key"} 0`)
		if off := tc.flags[0] == "--redact=off"; counted == off || off && strings.Contains(metrics, "convtrace_redactions_total") {
			t.Errorf("serve %v: /metrics redaction counts wrong:\n%s", tc.flags, grepLines(metrics, "redactions"))
		}
	}
}

func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestRedactFlagsRefuseBadValues: a value other than on or off, a
// patterns file that does not parse, and patterns with redaction off are
// refused before anything starts.
func TestRedactFlagsRefuseBadValues(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("kind (unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"demo", "--redact=maybe"}, 2, `"maybe": want on or off`},
		{[]string{"demo", "--clickhouse", "clickhouse://127.0.0.1:1/x", "--redact-patterns", bad}, 1, "line 1"},
		{[]string{"serve", "--clickhouse", "clickhouse://127.0.0.1:1/x", "--redact=off", "--redact-patterns", bad}, 1, "--redact-patterns needs --redact=on"},
		{[]string{"run", "--redact-patterns", filepath.Join(t.TempDir(), "none"), "--", "true"}, 1, "no such file"},
	} {
		var stderr strings.Builder
		code := run(context.Background(), tc.args, streams{io.Discard, &stderr, strings.NewReader("")})
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("convtrace %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
