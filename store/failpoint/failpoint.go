// Package failpoint kills the process at a named step of a multi-step change,
// so that tests can check that running it again ends in the same state.
// CONVTRACE_FAILPOINT=NAME kills at the first Hit(NAME), NAME@N at the N-th;
// unset, Hit costs one comparison.
package failpoint

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Env is the variable naming the failpoint to kill at.
const Env = "CONVTRACE_FAILPOINT"

var (
	config = sync.OnceValues(func() (string, int64) {
		name, nth, _ := strings.Cut(os.Getenv(Env), "@")
		n, err := strconv.ParseInt(nth, 10, 64)
		if err != nil || n < 1 {
			n = 1
		}
		return name, n
	})
	hits atomic.Int64
)

// Hit is a step boundary named name: the process is killed there when the
// environment asks for it.
func Hit(name string) {
	want, n := config()
	if want == "" || want != name || hits.Add(1) != n {
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}
