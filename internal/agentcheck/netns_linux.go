//go:build linux

package agentcheck

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"unsafe"
)

// NetNSEnv is set in the environment of a process that ReexecInNetNS
// started inside its own network namespace.
const NetNSEnv = "AGENTCHECK_IN_NETNS"

// InNetNS reports whether this process was started by ReexecInNetNS.
func InNetNS() bool { return os.Getenv(NetNSEnv) == "1" }

// ReexecInNetNS runs this same program again, with the same arguments,
// in a new network namespace that has only a loopback interface, and
// returns its exit code. The child must call BringUpLoopback first. It
// fails where new namespaces are not allowed (not root, or a sandbox
// that forbids them); the caller then runs in place.
func ReexecInNetNS() (int, error) {
	cmd := exec.Command("/proc/self/exe", os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), NetNSEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	return 0, err
}

// ifreqFlags is struct ifreq with the flags member of its union.
type ifreqFlags struct {
	name  [syscall.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

// BringUpLoopback sets the "lo" interface up in the current network
// namespace (a new namespace starts with it down).
func BringUpLoopback() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var req ifreqFlags
	copy(req.name[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&req))); e != 0 {
		return e
	}
	req.flags |= syscall.IFF_UP | syscall.IFF_RUNNING
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&req))); e != 0 {
		return e
	}
	return nil
}
