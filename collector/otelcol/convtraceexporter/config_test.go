package convtraceexporter_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/convtrace/convtrace/collector/otelcol/convtraceexporter"
)

const dsn = "clickhouse://127.0.0.1:9000/convtrace"

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		conf map[string]any
		want string // in the error; none when empty
	}{
		{"dsn only", map[string]any{"dsn": dsn}, ""},
		{"cluster", map[string]any{"dsn": dsn + "?cluster=convtrace", "project": "shipcode", "join_window": "5s"}, ""},
		{"no dsn", map[string]any{}, "dsn: required, such as clickhouse://"},
		{"http dsn", map[string]any{"dsn": "http://127.0.0.1:8123/convtrace"}, "scheme must be clickhouse://"},
		{"join window", map[string]any{"dsn": dsn, "join_window": "0s"}, "join_window: must be positive"},
		{"patterns unredacted", map[string]any{"dsn": dsn, "redact": false, "redact_patterns": "secrets.txt"}, "redact_patterns: needs redact: true"},
		{"persistent queue waiting", map[string]any{"dsn": dsn, "sending_queue": map[string]any{"storage": "file_storage", "wait_for_result": true}}, "wait_for_result"},
	} {
		cfg := convtraceexporter.NewFactory().CreateDefaultConfig()
		if err := confmap.NewFromStringMap(c.conf).Unmarshal(cfg); err != nil {
			t.Fatalf("%s: unmarshal %v: %v", c.name, c.conf, err)
		}
		err := confmap.Validate(cfg)
		if got := errString(err); (c.want == "") != (err == nil) || !strings.Contains(got, c.want) {
			t.Errorf("%s: %v validates with %q, want %q", c.name, c.conf, got, c.want)
		}
	}
}

// The files a valid configuration names are read when the exporter is
// created, and an unreadable one fails it with the setting's name.
func TestCreateReadsFiles(t *testing.T) {
	for _, c := range []struct {
		name string
		conf map[string]any
		want string
	}{
		{"prices", map[string]any{"prices": "testdata/missing-prices.yaml"}, "prices: "},
		{"redact patterns", map[string]any{"redact_patterns": "testdata/missing-patterns.txt"}, "redact_patterns: "},
	} {
		f := convtraceexporter.NewFactory()
		cfg := f.CreateDefaultConfig()
		c.conf["dsn"] = dsn
		if err := confmap.NewFromStringMap(c.conf).Unmarshal(cfg); err != nil {
			t.Fatal(err)
		}
		_, err := f.CreateTraces(context.Background(), exportertest.NewNopSettings(convtraceexporter.Type), cfg)
		if got := errString(err); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: created with %v: %q, want an error starting %q", c.name, c.conf, got, c.want)
		}
	}
}

// The README's Collector configuration configures this exporter validly.
func TestReadmeConfig(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "### Through an OpenTelemetry Collector")
	m := regexp.MustCompile("(?s)```yaml\n(extensions:.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("README's Through an OpenTelemetry Collector section has no Collector configuration")
	}
	r, err := confmap.NewRetrievedFromYAML([]byte(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	conf, err := r.AsConf()
	if err != nil {
		t.Fatal(err)
	}
	sub, err := conf.Sub("exporters::convtrace")
	if err != nil {
		t.Fatal(err)
	}
	cfg := convtraceexporter.NewFactory().CreateDefaultConfig()
	if err := sub.Unmarshal(cfg); err != nil {
		t.Fatalf("the README's exporters::convtrace: %v", err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Errorf("the README's exporters::convtrace: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
