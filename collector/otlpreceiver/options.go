package otlpreceiver

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
)

// DefaultMaxBodySize bounds a request body after decompression.
const DefaultMaxBodySize = 16 << 20

// DefaultRetryAfter is how long a sender is asked to wait after a request
// that could not be stored.
const DefaultRetryAfter = 5 * time.Second

// DefaultMemoryLimit bounds the memory the requests being received and
// stored hold together (see WithMemoryLimit).
const DefaultMemoryLimit = 256 << 20

// DefaultStoreTimeout bounds how long a request waits for storage before
// it is answered retry-later: under the 10 s the OTel SDKs wait for an
// answer.
const DefaultStoreTimeout = 5 * time.Second

// Option configures NewHTTPHandler and NewGRPCServer.
type Option interface{ apply(*config) }

type config struct {
	maxBody      int64
	memoryLimit  int64
	storeTimeout time.Duration
	tokens       []string
	registry     *prometheus.Registry
	retryAfter   time.Duration
	logger       *slog.Logger
	grpcOpts     []grpc.ServerOption
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

func newConfig(opts []Option) config {
	c := config{maxBody: DefaultMaxBodySize, retryAfter: DefaultRetryAfter, memoryLimit: DefaultMemoryLimit, storeTimeout: DefaultStoreTimeout}
	for _, o := range opts {
		o.apply(&c)
	}
	// Zero values mean the defaults, so a flag left at 0 is never a
	// receiver that refuses everything.
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxBodySize
	}
	if c.retryAfter <= 0 {
		c.retryAfter = DefaultRetryAfter
	}
	if c.memoryLimit <= 0 {
		c.memoryLimit = DefaultMemoryLimit
	}
	if c.storeTimeout <= 0 {
		c.storeTimeout = DefaultStoreTimeout
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.registry == nil {
		c.registry = prometheus.NewRegistry()
	}
	return c
}

// WithMaxBodySize bounds a request after decompression (default 16 MiB);
// larger requests get HTTP 413 or gRPC ResourceExhausted. n <= 0 means the
// default.
func WithMaxBodySize(n int64) Option { return optionFunc(func(c *config) { c.maxBody = n }) }

// WithRegistry registers the receiver's metrics in reg, typically the one
// NewOpsHandler serves. Receivers sharing a registry share their metrics,
// told apart by the transport label. Without it the metrics go to a private
// registry nobody reads.
func WithRegistry(reg *prometheus.Registry) Option {
	return optionFunc(func(c *config) { c.registry = reg })
}

// WithRetryAfter sets how long a sender is asked to wait after a request
// that could not be stored (default 5 s): the HTTP Retry-After header and
// the gRPC RetryInfo delay. d <= 0 means the default.
func WithRetryAfter(d time.Duration) Option { return optionFunc(func(c *config) { c.retryAfter = d }) }

// WithLogger logs requests that could not be stored to l instead of
// slog.Default(). The sender is told only that storage is unavailable.
func WithLogger(l *slog.Logger) Option { return optionFunc(func(c *config) { c.logger = l }) }

// WithGRPCServerOptions adds options to the server NewGRPCServer builds,
// e.g. TLS credentials or an authentication interceptor. They must not
// force another codec: the receiver's own codec is what lets it repair
// invalid UTF-8 and answer InvalidArgument to malformed requests.
func WithGRPCServerOptions(opts ...grpc.ServerOption) Option {
	return optionFunc(func(c *config) { c.grpcOpts = append(c.grpcOpts, opts...) })
}

// WithMemoryLimit bounds the memory that requests being received and stored
// hold together, counted as a multiple of their decoded size (default 256
// MiB). A request that does not fit is answered retry-later (HTTP 503 with
// Retry-After, gRPC ResourceExhausted with RetryInfo) instead of growing
// the process. n <= 0 means the default.
func WithMemoryLimit(n int64) Option { return optionFunc(func(c *config) { c.memoryLimit = n }) }

// WithStoreTimeout bounds how long a request waits for storage before it
// is answered retry-later (default 5 s). d <= 0 means the default.
func WithStoreTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.storeTimeout = d })
}

// WithToken makes the receivers, and NewOpsHandler's /metrics, accept only
// requests that carry one of tokens as "Authorization: Bearer TOKEN" (the
// gRPC metadata key authorization). Empty tokens are ignored; with none
// every request is accepted.
func WithToken(tokens ...string) Option {
	return optionFunc(func(c *config) {
		for _, t := range tokens {
			if t != "" {
				c.tokens = append(c.tokens, t)
			}
		}
	})
}
