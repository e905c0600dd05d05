package chcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/convtrace/convtrace/store/chserver"
)

// ErrNoZooKeeper means ZooKeeper or java is not installed.
var ErrNoZooKeeper = errors.New("no ZooKeeper: java and /usr/share/java/zookeeper.jar are needed; on Debian: apt-get install zookeeper")

// zooKeeperJar is where Debian's zookeeper package puts the server; its
// manifest names the jars it needs.
const zooKeeperJar = "/usr/share/java/zookeeper.jar"

// ZooKeeper is a standalone ZooKeeper server this process started.
type ZooKeeper struct {
	Port   int
	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// StartZooKeeper starts a standalone ZooKeeper with its data in dir on a
// free loopback port and waits until it answers.
func StartZooKeeper(ctx context.Context, dir string) (*ZooKeeper, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, ErrNoZooKeeper
	}
	if _, err := os.Stat(zooKeeperJar); err != nil {
		return nil, ErrNoZooKeeper
	}
	ports, err := chserver.FreePorts(1)
	if err != nil {
		return nil, err
	}
	zk := &ZooKeeper{Port: ports[0], dir: dir, exited: make(chan struct{})}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, fmt.Errorf("create zookeeper folder: %w", err)
	}
	cfg := fmt.Sprintf(`tickTime=500
initLimit=10
syncLimit=5
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr
`, filepath.Join(dir, "data"), zk.Port)
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, fmt.Errorf("write zookeeper config: %w", err)
	}
	log, err := os.Create(filepath.Join(dir, "zookeeper.log"))
	if err != nil {
		return nil, fmt.Errorf("create zookeeper log: %w", err)
	}
	defer log.Close()
	zk.cmd = exec.Command(java, "-Xmx256m", "-XX:+UseSerialGC", "-Dzookeeper.log.dir="+dir,
		"-cp", zooKeeperJar, "org.apache.zookeeper.server.ZooKeeperServerMain", cfgPath)
	zk.cmd.Stdout, zk.cmd.Stderr = log, log
	zk.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := zk.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start zookeeper: %w", err)
	}
	go func() {
		_ = zk.cmd.Wait()
		close(zk.exited)
	}()
	if err := zk.waitReady(ctx); err != nil {
		zk.Stop()
		return nil, err
	}
	return zk, nil
}

func (zk *ZooKeeper) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		if zk.serving(ctx) {
			return nil
		}
		select {
		case <-zk.exited:
			return fmt.Errorf("zookeeper exited during start-up: %s", zk.logTail())
		case <-ctx.Done():
			return fmt.Errorf("zookeeper not ready: %w: %s", ctx.Err(), zk.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// serving asks ZooKeeper whether it serves clients: "ruok" answers as
// soon as it listens, a moment before it takes sessions (ClickHouse 18.16
// then fails its handshake and crashes later), "srvr" names its mode only
// once it does.
func (zk *ZooKeeper) serving(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", zk.Port))
	if err != nil {
		return false
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	if _, err := io.WriteString(c, "srvr"); err != nil {
		return false
	}
	b, _ := io.ReadAll(c)
	return strings.Contains(string(b), "Mode: standalone")
}

func (zk *ZooKeeper) logTail() string {
	b, _ := os.ReadFile(filepath.Join(zk.dir, "zookeeper.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// Stop kills ZooKeeper and waits for it to exit; it keeps no state a
// clean stop would save. It is safe to call more than once.
func (zk *ZooKeeper) Stop() {
	select {
	case <-zk.exited:
		return
	default:
	}
	_ = zk.cmd.Process.Kill()
	<-zk.exited
}
