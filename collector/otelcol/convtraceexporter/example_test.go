package convtraceexporter_test

import (
	"fmt"
	"log"

	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"

	"github.com/convtrace/convtrace/collector/otelcol/convtraceexporter"
)

// The exporter in a Collector distribution's factories, as the builder's
// generated components.go lists it; a configuration then names it
// convtrace, with convtrace serve's defaults.
func ExampleNewFactory() {
	exporters, err := otelcol.MakeFactoryMap[exporter.Factory](convtraceexporter.NewFactory())
	if err != nil {
		log.Fatal(err)
	}
	f := exporters[convtraceexporter.Type]
	cfg := f.CreateDefaultConfig().(*convtraceexporter.Config)
	fmt.Println(f.Type(), f.TracesStability(), f.LogsStability(), f.MetricsStability())
	fmt.Println("redact:", cfg.Redact, "join_window:", cfg.JoinWindow, "timeout:", cfg.Timeout)
	// Output:
	// convtrace Alpha Alpha Undefined
	// redact: true join_window: 30s timeout: 5s
}
