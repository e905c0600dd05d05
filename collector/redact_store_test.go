package collector_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
)

// Secrets of the real shapes (none is a live credential) as a pipeline
// might send them to a model or get them back from a tool.
const (
	storedOpenAIKey = "sk-proj-Qr7sT0uV3wX6yZ9aB2cD5eF8gH1iJ4kL7mN0oP3qR6sT9uV2wX5yZ8aB1cD4eF7gH0iJ3kL6mN9oP2qR5sT8uV1wX4y"
	storedAWSKeyID  = "AKIAZ7QW3ERT5YUI2OPL"
	storedPEM       = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oCyJJ5Y\n-----END EC PRIVATE KEY-----"
	storedBearer    = "Authorization: Bearer tok_9f8e7d6c5b4a3f2e1d0c"
)

var storedSecrets = []string{storedOpenAIKey, storedAWSKeyID, "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oCyJJ5Y", "tok_9f8e7d6c5b4a3f2e1d0c"}

// secretsIn counts the secrets and the markers in the stored text query
// selects, one string per row.
func secretsIn(t *testing.T, conn driver.Conn, query string, args ...any) (secrets, markers int, text string) {
	t.Helper()
	rows, err := conn.Query(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var all strings.Builder
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		all.WriteString(v + "\n")
	}
	text = all.String()
	for _, s := range storedSecrets {
		secrets += strings.Count(text, s)
	}
	return secrets, strings.Count(text, "[REDACTED:"), text
}

// checkRedacted fails unless the text query selects holds markers and no
// secret (redaction on), or the secrets and no marker (off).
func checkRedacted(t *testing.T, on bool, what string, conn driver.Conn, query string, args ...any) {
	t.Helper()
	// A joined call may be written by the sweep rather than the request
	// that completed it (another goroutine held it): wait for its rows.
	secrets, markers, text := secretsIn(t, conn, query, args...)
	for deadline := time.Now().Add(10 * time.Second); text == "" && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		secrets, markers, text = secretsIn(t, conn, query, args...)
	}
	switch {
	case on && (secrets > 0 || markers == 0):
		t.Errorf("%s with redaction on: %d secrets, %d markers stored:\n%s", what, secrets, markers, text)
	case !on && (secrets == 0 || markers > 0):
		t.Errorf("%s with redaction off: %d secrets, %d markers stored:\n%s", what, secrets, markers, text)
	}
}

// TestRedactionInProcess records calls whose prompt, answer, tool output
// and error carry secrets through NewTracerProvider: with redaction on
// (the default) ClickHouse holds markers naming the kinds and no secret;
// with WithoutRedaction it holds the content as it was.
func TestRedactionInProcess(t *testing.T) {
	for _, on := range []bool{true, false} {
		conn, dsn := testkit.Open(t)
		opts := []collector.ProviderOption{collector.WithFlushInterval(20 * time.Millisecond), collector.WithLogger(discard())}
		if !on {
			opts = append(opts, collector.WithoutRedaction())
		}
		tp, err := collector.NewTracerProvider(dsn, opts...)
		if err != nil {
			t.Fatal(err)
		}
		rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
		ctx := instrument.WithThread(context.Background(), "th-secrets")
		prompt := `[{"role":"user","content":"deploy with ` + storedOpenAIKey + ` and\n` + storedPEM + `"}]`
		if _, err := rec.Call(ctx, instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: prompt}, chat("use "+storedAWSKeyID, nil)); err != nil {
			t.Fatal(err)
		}
		_, _ = rec.Tool(ctx, instrument.ToolCall{Name: "http", CallID: "c1", Arguments: `{"header":"` + storedBearer + `"}`},
			func(context.Context) (string, error) { return "sent", nil })
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		checkRedacted(t, on, "in-process turns", conn, "SELECT content FROM conversations WHERE thread_id = 'th-secrets'")
		red := tp.Stats().Redactions
		if on && (red["openai_key"] != 1 || red["private_key"] != 1 || red["aws_access_key_id"] != 1 || red["bearer_token"] != 1) {
			t.Errorf("Stats().Redactions = %v, want one of each kind sent", red)
		}
		if !on && red != nil {
			t.Errorf("Stats().Redactions = %v with redaction off", red)
		}
	}
}

// TestRedactionOTLP sends secrets through the Ingester in both OTLP
// forms: content in span attributes (stored in conversations; the spans
// row keeps the span's other attributes, one with a secret too) and
// content as log records (staged in join_staging before their span
// arrives, then joined). Nothing written, staged rows included, holds a
// secret unless redaction is off.
func TestRedactionOTLP(t *testing.T) {
	for _, on := range []bool{true, false} {
		conn, dsn := testkit.Open(t)
		opts := []collector.IngesterOption{collector.WithJoinWindow(time.Second), collector.WithFlushInterval(20 * time.Millisecond), collector.WithLogger(discard())}
		if !on {
			opts = append(opts, collector.WithoutRedaction())
		}
		in, err := collector.NewIngester(dsn, opts...)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()

		withContent := genAISpan("5555555555555555", false)
		withContent[0].ScopeSpans[0].Spans[0].Attributes = append(withContent[0].ScopeSpans[0].Spans[0].Attributes,
			kv("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"key `+storedOpenAIKey+`"}]}]`),
			kv("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"stored `+storedAWSKeyID+`"}]}]`),
			kv("app.debug", "retried with "+storedOpenAIKey))
		if _, err := in.Traces(ctx, withContent); err != nil {
			t.Fatal(err)
		}
		checkRedacted(t, on, "span-attribute turns", conn, "SELECT content FROM conversations WHERE span_id = '5555555555555555'")
		checkRedacted(t, on, "spans row attributes", conn, "SELECT arrayStringConcat(attributes.value, ' ') FROM spans WHERE span_id = '5555555555555555'")

		logs := genAILogs("6666666666666666")
		records := logs[0].ScopeLogs[0].LogRecords
		records[0].Body = &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{
			Values: []*commonpb.KeyValue{kv("content", "my key:\n"+storedPEM)}}}}
		records[1].Attributes = append(records[1].Attributes, kv("http.request.header", storedBearer))
		if _, err := in.Logs(ctx, logs); err != nil {
			t.Fatal(err)
		}
		checkRedacted(t, on, "staged log records", conn, "SELECT payload FROM join_staging WHERE span_id = '6666666666666666' AND kind = 1")
		if _, err := in.Traces(ctx, []*tracepb.ResourceSpans{genAISpan("6666666666666666", false)[0]}); err != nil {
			t.Fatal(err)
		}
		checkRedacted(t, on, "joined turns", conn, "SELECT content FROM conversations WHERE span_id = '6666666666666666' AND role = 'prompt'")
		if err := in.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if st := in.Stats(); on && st.Redactions["private_key"] != 1 {
			t.Errorf("Stats().Redactions = %v, want the staged private key counted once", st.Redactions)
		}
	}
}
