package convtraceexporter

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// Type is the exporter's name in a Collector configuration.
var Type = component.MustNewType("convtrace")

const stability = component.StabilityLevelAlpha

// NewFactory returns the factory of the convtrace exporter, for traces and
// logs pipelines.
func NewFactory() exporter.Factory {
	f := &factory{shared: make(map[*Config]*convtraceExporter)}
	return exporter.NewFactory(Type, func() component.Config { return createDefaultConfig() },
		exporter.WithTraces(f.createTraces, stability),
		exporter.WithLogs(f.createLogs, stability))
}

// factory hands the traces and logs exporters of one configured component
// the same convtraceExporter, so that they share one Ingester.
type factory struct {
	mu     sync.Mutex
	shared map[*Config]*convtraceExporter
}

func (f *factory) exporter(set exporter.Settings, cfg *Config) (*convtraceExporter, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.shared[cfg]; ok {
		return e, nil
	}
	opts, err := cfg.ingesterOptions()
	if err != nil {
		return nil, err
	}
	e := newExporter(cfg, set.Logger, opts, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.shared, cfg)
	})
	f.shared[cfg] = e
	return e, nil
}

func (f *factory) createTraces(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
	c := cfg.(*Config)
	e, err := f.exporter(set, c)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewTraces(ctx, set, cfg, e.pushTraces, helperOptions(e, c)...)
}

func (f *factory) createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c := cfg.(*Config)
	e, err := f.exporter(set, c)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewLogs(ctx, set, cfg, e.pushLogs, helperOptions(e, c)...)
}

// helperOptions wraps e in exporterhelper's timeout, sending queue and
// retry, as c configures them.
func helperOptions(e *convtraceExporter, c *Config) []exporterhelper.Option {
	return []exporterhelper.Option{
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
		exporterhelper.WithTimeout(c.TimeoutConfig),
		exporterhelper.WithQueue(c.Queue),
		exporterhelper.WithRetry(c.Retry),
	}
}
