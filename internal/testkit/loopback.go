package testkit

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
)

// LoopbackServer starts h on a free port of 127.0.0.1, never the IPv6
// loopback httptest may pick, so that processes under test reach it by the
// address they are given. Like httptest.NewServer it panics when it cannot
// listen.
func LoopbackServer(h http.Handler) *httptest.Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("testkit: listen on loopback: %v", err))
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	return srv
}
