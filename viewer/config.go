package viewer

import (
	"log/slog"
	"time"

	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store"
)

// DefaultThreadLimit is the most threads one page of the threads list
// (and of /api/threads, via its limit parameter) holds when no
// WithThreadLimit option is given.
const DefaultThreadLimit = 200

// DefaultInterruptedAfter is how long a call that has not ended may go
// without a heartbeat before the viewer shows it as interrupted, when no
// WithInterruptedAfter option is given.
const DefaultInterruptedAfter = 5 * time.Minute

// Option configures a Server.
type Option interface{ apply(*config) }

type config struct {
	logger           *slog.Logger
	threadLimit      int
	interruptedAfter time.Duration
	token            string
	readOnly         bool
	pricer           pricing.Prices
	hosts            []string
	dial             store.Dialer
	feedPoll         time.Duration
	feedBeat         time.Duration
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

func newConfig(opts []Option) config {
	cfg := config{logger: slog.Default(), threadLimit: DefaultThreadLimit, interruptedAfter: DefaultInterruptedAfter,
		feedPoll: time.Second, feedBeat: 15 * time.Second}
	for _, o := range opts {
		o.apply(&cfg)
	}
	return cfg
}

// WithLogger sets where the viewer logs failed queries and recovered
// panics. The default is slog.Default(); nil keeps it.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) {
		if l != nil {
			c.logger = l
		}
	})
}

// WithThreadLimit caps how many threads one page of the threads list and
// of /api/threads may hold; pages of 50 are the default below it. Zero or
// less keeps DefaultThreadLimit.
func WithThreadLimit(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.threadLimit = n
		}
	})
}

// WithInterruptedAfter shows a call that has not ended as interrupted
// rather than running once neither its start nor its last heartbeat (see
// collector.WithHeartbeat) is within d: its recording process died. Zero or
// less keeps DefaultInterruptedAfter.
func WithInterruptedAfter(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.interruptedAfter = d
		}
	})
}

// WithToken requires every page and API request to carry token (as
// "Authorization: Bearer TOKEN", or in the cookie that opening the viewer
// once with ?token=TOKEN sets). Empty, the default, requires none; the
// caller then keeps the viewer on a loopback address.
func WithToken(token string) Option {
	return optionFunc(func(c *config) { c.token = token })
}

// WithReadOnly makes the viewer an untouchable audit trail: every request
// that would change the history (rename, archive, delete, notes, import)
// is refused with 403, and the pages show no control that would.
func WithReadOnly() Option {
	return optionFunc(func(c *config) { c.readOnly = true })
}

// WithHosts names the host names the viewer answers to besides IP
// addresses and localhost: the name it listens on, and the host of the
// URL users open it by behind a proxy. A request naming any other host is
// refused, which defeats DNS rebinding.
func WithHosts(names ...string) Option {
	return optionFunc(func(c *config) { c.hosts = append(c.hosts, names...) })
}

// WithReplicas lets the viewer of a cluster reach its servers one by one
// through dial, so that its summaries follow what changed (store's
// WithReplicas) rather than reading every thread on every request.
func WithReplicas(dial store.Dialer) Option {
	return optionFunc(func(c *config) { c.dial = dial })
}
