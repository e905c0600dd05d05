package collector_test

import (
	"context"
	"log"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
)

// A Go pipeline exporting in-process: every call lands in the conversations
// table of the database the DSN names.
func ExampleNewTracerProvider() {
	tp, err := collector.NewTracerProvider("clickhouse://127.0.0.1:9000/convtrace", collector.WithProject("shipcode"))
	if err != nil {
		log.Fatal(err)
	}
	defer tp.Shutdown(context.Background()) // flushes
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))

	ctx := instrument.WithPhase(instrument.WithThread(context.Background(), "issue-42"), "review")
	_, _ = rec.Call(ctx, instrument.Turn{Provider: "openai", Model: "gpt-5", Speaker: "codex-reviewer", Prompt: "Review the plan"},
		func(ctx context.Context) (instrument.Response, error) {
			return instrument.Response{Content: "Approved."}, nil
		})
}

// An exporter for a tracer provider assembled by hand.
func ExampleNewExporter() {
	exp, err := collector.NewExporter("clickhouse://127.0.0.1:9000/convtrace")
	if err != nil {
		log.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	log.Printf("%+v", exp.Stats())
}
