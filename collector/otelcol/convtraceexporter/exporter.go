package convtraceexporter

import (
	"context"
	"log/slog"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/convtrace/convtrace/collector"
)

// convtraceExporter stores what its pipelines export through one Ingester,
// started by the first of them to start and shut down by the last to stop.
type convtraceExporter struct {
	cfg    *Config
	logger *zap.Logger
	opts   []collector.IngesterOption
	done   func() // the last user shut down

	mu    sync.Mutex
	users int
	in    *collector.Ingester
}

func newExporter(cfg *Config, logger *zap.Logger, opts []collector.IngesterOption, done func()) *convtraceExporter {
	return &convtraceExporter{cfg: cfg, logger: logger, opts: opts, done: done}
}

func (e *convtraceExporter) start(context.Context, component.Host) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.users == 0 {
		opts := append([]collector.IngesterOption{collector.WithLogger(slog.New(zapslog.NewHandler(e.logger.Core())))}, e.opts...)
		in, err := collector.NewIngester(string(e.cfg.DSN), opts...)
		if err != nil {
			return err
		}
		e.in = in
	}
	e.users++
	return nil
}

// shutdown writes what is queued once the last user stops; one that never
// started has nothing to stop.
func (e *convtraceExporter) shutdown(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.users == 0 {
		return nil
	}
	if e.users--; e.users > 0 {
		return nil
	}
	e.done()
	return e.in.Shutdown(ctx)
}

// pushTraces returns nil once the spans are stored; an error that is not
// permanent tells exporterhelper to retry.
func (e *convtraceExporter) pushTraces(ctx context.Context, td ptrace.Traces) error {
	rss, err := tracesToOTLP(td, e.cfg.Project)
	if err != nil {
		return consumererror.NewPermanent(err)
	}
	res, err := e.in.Traces(ctx, rss)
	e.refused(res, err)
	return err
}

// pushLogs returns nil once the GenAI records are stored; an error that
// is not permanent tells exporterhelper to retry.
func (e *convtraceExporter) pushLogs(ctx context.Context, ld plog.Logs) error {
	rls, err := logsToOTLP(ld, e.cfg.Project)
	if err != nil {
		return consumererror.NewPermanent(err)
	}
	res, err := e.in.Logs(ctx, rls)
	e.refused(res, err)
	return err
}

// refused logs what the Ingester refused for good: items convtrace does not
// store, which a retry would not change.
func (e *convtraceExporter) refused(res collector.Result, err error) {
	if err == nil && res.Rejected > 0 {
		e.logger.Debug("convtrace: items not stored", zap.Int64("refused", res.Rejected), zap.String("why", res.Message))
	}
}
