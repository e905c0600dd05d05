package convtraceexporter

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store/topology"
)

// Config is the convtrace exporter's configuration: where and how rows are
// stored (the options of convtrace serve), and exporterhelper's timeout,
// sending queue and retry.
type Config struct {
	// DSN names the ClickHouse database, clickhouse://HOST:9000/DATABASE,
	// with ?cluster=NAME when the tables are spread over a cluster.
	DSN configopaque.String `mapstructure:"dsn"`
	// Project is stored as the project of resources that name none with
	// convtrace.project; without it their service.name is.
	Project string `mapstructure:"project"`
	// Redact replaces well-known secrets by [REDACTED:kind] before storage.
	Redact bool `mapstructure:"redact"`
	// RedactPatterns is a file of more secrets to redact, one a line: a
	// kind name, blank space, a Go regexp.
	RedactPatterns string `mapstructure:"redact_patterns"`
	// Prices is a price file (YAML or JSON) over the built-in table.
	Prices string `mapstructure:"prices"`
	// JoinWindow is how long a call whose content comes as log records
	// waits for its span and records before its turns are written.
	JoinWindow time.Duration `mapstructure:"join_window"`

	exporterhelper.TimeoutConfig `mapstructure:",squash"`
	Queue                        configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	Retry                        configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`
}

func createDefaultConfig() *Config {
	return &Config{
		Redact:        true,
		JoinWindow:    30 * time.Second,
		TimeoutConfig: exporterhelper.NewDefaultTimeoutConfig(),
		Queue:         configoptional.Some(exporterhelper.NewDefaultQueueConfig()),
		Retry:         configretry.NewDefaultBackOffConfig(),
	}
}

// Validate reports every setting that cannot work; the files are read
// when the exporter is created.
func (c *Config) Validate() error {
	var errs []error
	if c.DSN == "" {
		errs = append(errs, errors.New("dsn: required, such as clickhouse://127.0.0.1:9000/convtrace"))
	} else if _, err := topology.Parse(string(c.DSN)); err != nil {
		errs = append(errs, fmt.Errorf("dsn: %w", err))
	}
	if c.JoinWindow <= 0 {
		errs = append(errs, fmt.Errorf("join_window: must be positive, got %s", c.JoinWindow))
	}
	if !c.Redact && c.RedactPatterns != "" {
		errs = append(errs, errors.New("redact_patterns: needs redact: true"))
	}
	return errors.Join(errs...)
}

// ingesterOptions reads the files c names and returns the options of the
// Ingester it configures.
func (c *Config) ingesterOptions() ([]collector.IngesterOption, error) {
	prices := pricing.DefaultPrices()
	if c.Prices != "" {
		var err error
		if prices, err = pricing.LoadPrices(c.Prices, prices); err != nil {
			return nil, fmt.Errorf("prices: %w", err)
		}
	}
	redact := collector.WithoutRedaction()
	if c.Redact {
		var patterns []collector.RedactPattern
		if c.RedactPatterns != "" {
			var err error
			if patterns, err = collector.LoadRedactPatterns(c.RedactPatterns); err != nil {
				return nil, fmt.Errorf("redact_patterns: %w", err)
			}
		}
		redact = collector.WithRedactPatterns(patterns...)
	}
	return []collector.IngesterOption{redact, collector.WithPrices(prices), collector.WithJoinWindow(c.JoinWindow)}, nil
}
