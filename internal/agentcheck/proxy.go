package agentcheck

import (
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/convtrace/convtrace/internal/testkit"
)

// BlackholeProxy is an HTTP proxy on 127.0.0.1 that refuses every request
// and records where it was meant to go. Given to a CLI as HTTPS_PROXY (with
// NO_PROXY for loopback) it shows which outside hosts the CLI tries to
// reach, without any traffic leaving the machine.
type BlackholeProxy struct {
	srv     *httptest.Server
	mu      sync.Mutex
	targets []string
}

// NewBlackholeProxy starts the proxy.
func NewBlackholeProxy() *BlackholeProxy {
	p := &BlackholeProxy{}
	p.srv = testkit.LoopbackServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := r.Host
		if r.Method != http.MethodConnect && r.URL.IsAbs() {
			target = r.URL.Scheme + "://" + r.URL.Host + r.URL.Path
		}
		p.mu.Lock()
		p.targets = append(p.targets, r.Method+" "+target)
		p.mu.Unlock()
		http.Error(w, "agentcheck: outside traffic refused", http.StatusForbidden)
	}))
	return p
}

// URL is the proxy URL, http://127.0.0.1:PORT.
func (p *BlackholeProxy) URL() string { return p.srv.URL }

// Close stops the proxy.
func (p *BlackholeProxy) Close() { p.srv.Close() }

// Targets lists every refused request as "METHOD host-or-URL".
func (p *BlackholeProxy) Targets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}
