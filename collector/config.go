package collector

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/convtrace/convtrace/schema/pricing"
)

// Each constructor takes only the options that apply to it, so an option
// that would be ignored does not compile (docs/design/writer.md, "Options
// per constructor").

// ExporterOption configures NewExporter.
type ExporterOption interface{ applyExporter(*config) }

// IngesterOption configures NewIngester.
type IngesterOption interface{ applyIngester(*config) }

// ProviderOption configures NewTracerProvider.
type ProviderOption interface{ applyProvider(*config) }

// Option configures the writer: it applies to NewExporter, NewIngester and
// NewTracerProvider.
type Option interface {
	ExporterOption
	IngesterOption
	ProviderOption
}

// RedactOption configures redaction, wherever rows are written: the
// writer, and SpoolSpans.
type RedactOption interface {
	Option
	applySpool(*config)
}

// PendingOption configures NewPendingProcessor and NewTracerProvider.
type PendingOption interface {
	ProviderOption
	applyPending(*config)
}

type config struct {
	project       string
	logger        *slog.Logger
	queueRows     int
	queueBytes    int64
	bufferBytes   int64
	spoolDir      string
	durableSpool  bool
	batchRows     int
	flushInterval time.Duration
	writeTimeout  time.Duration
	pendingAfter  time.Duration
	heartbeat     time.Duration
	joinWindow    time.Duration
	observeInsert func(time.Duration)
	prices        pricing.Prices
	redact        bool
	redactExtra   []RedactPattern
}

// optionFunc is every option; the constructors above say which it is.
type optionFunc func(*config)

func (f optionFunc) applyExporter(c *config) { f(c) }
func (f optionFunc) applyIngester(c *config) { f(c) }
func (f optionFunc) applyProvider(c *config) { f(c) }
func (f optionFunc) applySpool(c *config)    { f(c) }
func (f optionFunc) applyPending(c *config)  { f(c) }

// configure returns the defaults with opts applied by apply, validated.
func configure[O any](opts []O, apply func(O, *config)) (config, error) {
	c := config{
		project:       "default",
		logger:        slog.Default(),
		queueRows:     100_000,
		queueBytes:    64 << 20,
		bufferBytes:   64 << 20,
		batchRows:     10_000,
		flushInterval: 500 * time.Millisecond,
		writeTimeout:  30 * time.Second,
		pendingAfter:  time.Second,
		heartbeat:     time.Minute,
		joinWindow:    30 * time.Second,
		prices:        pricing.DefaultPrices(),
		redact:        true,
	}
	for _, o := range opts {
		apply(o, &c)
	}
	return c, c.validate()
}

func (c config) validate() error {
	var errs []error
	if c.project == "" {
		errs = append(errs, errors.New("project must not be empty"))
	}
	if c.logger == nil {
		errs = append(errs, errors.New("logger must not be nil"))
	}
	for name, n := range map[string]int{"queue size": c.queueRows, "batch size": c.batchRows} {
		if n <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, n))
		}
	}
	for name, n := range map[string]int64{"queue bytes": c.queueBytes, "buffer size": c.bufferBytes} {
		if n <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, n))
		}
	}
	for name, d := range map[string]time.Duration{"flush interval": c.flushInterval, "write timeout": c.writeTimeout, "pending delay": c.pendingAfter, "heartbeat": c.heartbeat, "join window": c.joinWindow} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, d))
		}
	}
	if c.durableSpool && c.spoolDir == "" {
		errs = append(errs, errors.New("durable spool needs a folder"))
	}
	for _, p := range c.redactExtra {
		if p.Regexp == nil || !kindName.MatchString(p.Kind) {
			errs = append(errs, fmt.Errorf("redact pattern %q: want a kind of letters, digits, _ . - and a regexp", p.Kind))
		}
	}
	return errors.Join(errs...)
}

// WithProject names the project the spans belong to (the service.name and
// convtrace.project resource attributes of NewTracerProvider). Default
// "default".
func WithProject(name string) ProviderOption { return optionFunc(func(c *config) { c.project = name }) }

// WithLogger logs storage errors to l instead of slog.Default().
func WithLogger(l *slog.Logger) Option { return optionFunc(func(c *config) { c.logger = l }) }

// WithQueueSize bounds how many rows may wait for storage (default 100,000);
// past it rows are refused as past WithQueueBytes.
func WithQueueSize(rows int) Option { return optionFunc(func(c *config) { c.queueRows = rows }) }

// WithQueueBytes bounds the approximate memory of the rows waiting for
// storage (default 64 MiB). Past it the ingester answers "not stored", so
// the sender retries; the exporter's rows are dropped and counted.
func WithQueueBytes(n int64) Option { return optionFunc(func(c *config) { c.queueBytes = n }) }

// WithBufferSize bounds the approximate memory of the rows nobody waits for
// (the exporter's) kept while ClickHouse fails (default 64 MiB). Past it the
// oldest go to the spool, or without one are dropped and counted.
func WithBufferSize(bytes int64) Option { return optionFunc(func(c *config) { c.bufferBytes = bytes }) }

// WithSpool keeps in dir, fsynced, the rows past WithBufferSize and those
// unstored at Shutdown, stored later by this or the next process on dir;
// damaged bytes go to dir/damaged, never deleted. A kill loses what is
// still in memory; WithDurableSpool does not (docs/design/writer.md).
func WithSpool(dir string) Option {
	return optionFunc(func(c *config) { c.spoolDir, c.durableSpool = dir, false })
}

// WithDurableSpool is WithSpool(dir), and every row nobody waits for is
// fsynced to the spool before it is queued: once ExportSpans returns, its
// rows survive a kill -9 or a power loss. Each ExportSpans pays for a write
// and an fsync. The ingester's rows are not journaled: their sender retries.
func WithDurableSpool(dir string) Option {
	return optionFunc(func(c *config) { c.spoolDir, c.durableSpool = dir, true })
}

// WithBatchSize writes a batch as soon as it holds this many rows (default
// 10,000).
func WithBatchSize(rows int) Option { return optionFunc(func(c *config) { c.batchRows = rows }) }

// WithFlushInterval writes a batch at the latest this long after its first
// row arrived (default 500 ms).
func WithFlushInterval(d time.Duration) Option {
	return optionFunc(func(c *config) { c.flushInterval = d })
}

// WithWriteTimeout bounds one connect-and-write to ClickHouse (default 30 s).
func WithWriteTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.writeTimeout = d })
}

// WithPendingAfter sets how long a call runs before PendingProcessor stores
// its prompt (default 1 s).
func WithPendingAfter(d time.Duration) PendingOption {
	return optionFunc(func(c *config) { c.pendingAfter = d })
}

// WithHeartbeat sets how often PendingProcessor refreshes the stored
// prompt of a call still running (default 1 min), which tells the viewer
// the call is alive: one with no heartbeat for long shows as interrupted.
func WithHeartbeat(d time.Duration) PendingOption {
	return optionFunc(func(c *config) { c.heartbeat = d })
}

// WithJoinWindow sets how long an OTLP call whose content comes as log
// records waits for its span, its input and its answer before its turns
// are written with what is known (default 30 s; a complete call is written
// at once). Records arriving later are merged into the same turns. An
// Ingester bounds each write to ClickHouse by the window too.
func WithJoinWindow(d time.Duration) IngesterOption {
	return optionFunc(func(c *config) { c.joinWindow = d })
}

// WithInsertObserver calls f with the duration of every insert into
// ClickHouse, e.g. to feed a latency histogram.
func WithInsertObserver(f func(time.Duration)) Option {
	return optionFunc(func(c *config) { c.observeInsert = f })
}

// WithPrices prices turns that report tokens but no cost with p instead of
// the built-in table (pricing.DefaultPrices). Use pricing.LoadPrices to put a user's file
// over the built-in table.
func WithPrices(p pricing.Prices) Option { return optionFunc(func(c *config) { c.prices = p }) }

// WithoutRedaction stores content as it comes. By default well-known
// secrets (OpenAI, Anthropic, Google and AWS keys, GitHub tokens, bearer
// tokens, private key blocks) are replaced by [REDACTED:kind] before
// storage, and counted in Stats.Redactions.
func WithoutRedaction() RedactOption { return optionFunc(func(c *config) { c.redact = false }) }

// WithRedactPatterns redacts what ps match too, after the built-in
// patterns (LoadRedactPatterns reads them from a file).
func WithRedactPatterns(ps ...RedactPattern) RedactOption {
	return optionFunc(func(c *config) { c.redactExtra = append(c.redactExtra, ps...) })
}
