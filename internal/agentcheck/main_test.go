package agentcheck

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the package's tests in a network namespace of their own
// when it can (root on Linux), so that the CLIs under test can reach
// nothing but loopback. Set AGENTCHECK_NO_NETNS=1 to run in place.
func TestMain(m *testing.M) {
	if InNetNS() {
		if err := BringUpLoopback(); err != nil {
			fmt.Fprintf(os.Stderr, "agentcheck: bring up loopback: %v\n", err)
			os.Exit(2)
		}
		os.Exit(m.Run())
	}
	if os.Getenv("AGENTCHECK_NO_NETNS") == "" && os.Geteuid() == 0 {
		code, err := ReexecInNetNS()
		if err == nil {
			os.Exit(code)
		}
		fmt.Fprintf(os.Stderr, "agentcheck: no network namespace (%v); running in place\n", err)
	}
	os.Exit(m.Run())
}
