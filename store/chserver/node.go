package chserver

import (
	"context"
	"fmt"
	"net"
)

// Node is one server of several that name each other, a cluster's: its
// ports, chosen by the caller before any starts (FreePorts), and the
// configuration it adds to the managed one.
type Node struct {
	TCPPort, HTTPPort int
	// InterserverPort is where replicas fetch parts from this server.
	InterserverPort int
	// Config holds XML elements of <yandex>, written to config.d: the
	// cluster's remote_servers, ZooKeeper, macros, distributed_ddl.
	Config string
	// Profile holds settings of the default profile, written to users.d.
	Profile string
}

// StartNode starts a server in dir as node, like Start.
func StartNode(ctx context.Context, dir string, node Node) (*Server, error) {
	bin, err := FindBinary()
	if err != nil {
		return nil, err
	}
	return start(ctx, dir, bin, []int{node.TCPPort, node.HTTPPort}, &node)
}

// FreePorts returns n loopback ports free at the time of the call.
func FreePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
