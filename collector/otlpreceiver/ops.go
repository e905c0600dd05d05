package otlpreceiver

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// readyTimeout bounds one readiness check, so a probe never hangs on a
// storage that does not answer.
const readyTimeout = 5 * time.Second

// NewOpsHandler serves the operator endpoints: /metrics (reg in the
// Prometheus text format), /healthz (200 "ok" while the process serves) and
// /readyz (200 when ready returns nil, else 503 with its error). A nil ready
// means always ready; a nil reg serves no metrics. Of the options only
// WithToken applies: it guards /metrics, while probes stay open.
func NewOpsHandler(reg *prometheus.Registry, ready func(context.Context) error, opts ...Option) http.Handler {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	tokens := newConfig(opts).tokens
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if !authorized(tokens, r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="convtrace"`)
			http.Error(w, "missing or wrong token: send Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		metrics.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
			defer cancel()
			if err := ready(ctx); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ready\n"))
	})
	return mux
}
