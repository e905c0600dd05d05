//go:build !linux

package agentcheck

import "errors"

// NetNSEnv is set in the environment of a process that ReexecInNetNS
// started inside its own network namespace.
const NetNSEnv = "AGENTCHECK_IN_NETNS"

// InNetNS reports whether this process was started by ReexecInNetNS.
func InNetNS() bool { return false }

// ReexecInNetNS is only available on Linux.
func ReexecInNetNS() (int, error) {
	return 0, errors.New("agentcheck: network namespaces need Linux")
}

// BringUpLoopback is only available on Linux.
func BringUpLoopback() error { return errors.New("agentcheck: network namespaces need Linux") }
