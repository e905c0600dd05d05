package chcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/convtrace/convtrace/store/chserver"
)

// Cluster is ZooKeeper and shards × replicas ClickHouse servers.
type Cluster struct {
	Name      string
	ZooKeeper *ZooKeeper
	// Shards[i][j] is replica j+1 of shard i+1.
	Shards [][]*chserver.Server
}

// Start starts ZooKeeper and a cluster named name of shards × replicas
// servers, with their data under dir, and waits until every server
// answers. On error it stops what it started.
func Start(ctx context.Context, dir, name string, shards, replicas int) (*Cluster, error) {
	if _, err := chserver.FindBinary(); err != nil {
		return nil, err
	}
	zk, err := StartZooKeeper(ctx, filepath.Join(dir, "zookeeper"))
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: name, ZooKeeper: zk}
	ports, err := chserver.FreePorts(3 * shards * replicas)
	if err != nil {
		c.Stop(ctx)
		return nil, err
	}
	nodes := make([][]chserver.Node, shards)
	for s := range nodes {
		nodes[s] = make([]chserver.Node, replicas)
		for r := range nodes[s] {
			p := ports[3*(s*replicas+r):]
			nodes[s][r] = chserver.Node{TCPPort: p[0], HTTPPort: p[1], InterserverPort: p[2]}
		}
	}
	remote := remoteServers(name, nodes)
	c.Shards = make([][]*chserver.Server, shards)
	for s := range nodes {
		c.Shards[s] = make([]*chserver.Server, replicas)
	}
	// Servers start side by side: each takes seconds, mostly waiting.
	var wg sync.WaitGroup
	errs := make([]error, shards*replicas)
	for s := range nodes {
		for r := range nodes[s] {
			n := nodes[s][r]
			n.Config = remote + fmt.Sprintf(`
<zookeeper><node><host>127.0.0.1</host><port>%d</port></node><session_timeout_ms>10000</session_timeout_ms></zookeeper>
<macros><shard>%d</shard><replica>s%dr%d</replica></macros>
<distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
<merge_tree><zookeeper_session_expiration_check_period>2</zookeeper_session_expiration_check_period></merge_tree>`, zk.Port, s+1, s+1, r+1)
			n.Profile = Profile
			wg.Add(1)
			go func(s, r int) {
				defer wg.Done()
				dir := filepath.Join(dir, fmt.Sprintf("s%dr%d", s+1, r+1))
				c.Shards[s][r], errs[s*replicas+r] = chserver.StartNode(ctx, dir, n)
			}(s, r)
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Stop(ctx)
		return nil, err
	}
	for _, srv := range c.Servers() {
		if err := waitZooKeeper(ctx, srv); err != nil {
			c.Stop(ctx)
			return nil, err
		}
	}
	return c, nil
}

// waitZooKeeper waits until srv has its ZooKeeper session and the
// distributed DDL queue exists. ClickHouse 18.16 answers queries before
// it has a session, and crashes on a distributed DDL statement then.
func waitZooKeeper(ctx context.Context, srv *chserver.Server) error {
	q := url.Values{"query": {"SELECT count() FROM system.zookeeper WHERE path = '/clickhouse/task_queue' AND name = 'ddl'"}}
	u := fmt.Sprintf("http://127.0.0.1:%d/?%s", srv.HTTPPort, q.Encode())
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		if res, err := http.DefaultClient.Do(req); err == nil {
			body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
			res.Body.Close()
			if last = strings.TrimSpace(string(body)); res.StatusCode == http.StatusOK && last == "1" {
				return nil
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("clickhouse on port %d has no ZooKeeper session or DDL queue (%s): %w", srv.TCPPort, last, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Profile is the user profile convtrace needs on a cluster, set in the
// servers' users configuration since clickhouse-go sends 18.16 no string
// setting. Why each setting: README, "Scaling out"; docs/architecture.md,
// "Cluster".
const Profile = `<distributed_product_mode>global</distributed_product_mode>
<load_balancing>in_order</load_balancing>
<allow_experimental_low_cardinality_type>1</allow_experimental_low_cardinality_type>`

// remoteServers is the remote_servers section every node shares: a
// replica of a shard is written to once and replicates the rest itself
// (internal_replication).
func remoteServers(name string, nodes [][]chserver.Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<remote_servers><%s>", name)
	for _, shard := range nodes {
		b.WriteString("<shard><internal_replication>true</internal_replication>")
		for _, n := range shard {
			fmt.Fprintf(&b, "<replica><host>127.0.0.1</host><port>%d</port></replica>", n.TCPPort)
		}
		b.WriteString("</shard>")
	}
	fmt.Fprintf(&b, "</%s></remote_servers>", name)
	return b.String()
}

// Servers returns every server, shard by shard.
func (c *Cluster) Servers() []*chserver.Server {
	var all []*chserver.Server
	for _, shard := range c.Shards {
		all = append(all, shard...)
	}
	return all
}

// DSN is a DSN for database on the first replica of the first shard.
func (c *Cluster) DSN(database string) string { return c.Shards[0][0].DSN(database) }

// Stop stops every server (resumed first, should one be frozen), then
// ZooKeeper, each bounded by ctx and chserver's own limit. It is safe to
// call more than once.
func (c *Cluster) Stop(ctx context.Context) {
	var wg sync.WaitGroup
	for _, srv := range c.Servers() {
		if srv == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = srv.Signal(syscall.SIGCONT)
			_ = srv.Stop(ctx)
		}()
	}
	wg.Wait()
	if c.ZooKeeper != nil {
		c.ZooKeeper.Stop()
	}
}
