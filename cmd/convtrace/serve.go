package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otlpreceiver"
	"github.com/convtrace/convtrace/store/localstore"
	"github.com/convtrace/convtrace/store/page"
	"github.com/convtrace/convtrace/store/transfer"
	"github.com/convtrace/convtrace/viewer"
)

func serveCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	var rf redactFlags
	rf.register(fs)
	listen := fs.String("listen", "127.0.0.1:8080", "address the viewer listens on")
	otlpHTTP := fs.String("otlp-http", "127.0.0.1:4318", "address of the OTLP/HTTP receiver, also serving /metrics, /healthz and /readyz (empty: off)")
	otlpGRPC := fs.String("otlp-grpc", "127.0.0.1:4317", "address of the OTLP/gRPC receiver (empty: off)")
	maxBody := fs.Int("otlp-max-body", 16<<20, "largest OTLP request accepted, in bytes after decompression")
	joinWindow := fs.Duration("join-window", 30*time.Second, "how long an OTLP call whose content comes as log records waits to be complete before its turns are written with what is known (later records merge into them)")
	withDemo := fs.Bool("demo", false, "record a demo pipeline run before serving, unless the store holds one")
	demoAgain := fs.Bool("demo-again", false, "with --demo, record another demo run even if the store holds one")
	prices := fs.String("prices", "", "price file (YAML or JSON) whose entries add to and override the built-in price table")
	interruptedAfter := fs.Duration("interrupted-after", viewer.DefaultInterruptedAfter, "show a call that has not ended as interrupted once its recorder sent no heartbeat for this long")
	token := fs.String("token", os.Getenv("CONVTRACE_TOKEN"), "token every viewer page and API request must carry (env CONVTRACE_TOKEN), and OTLP requests and /metrics too unless --otlp-token is set; without one the viewer and OTLP listen on loopback only")
	publicURL := fs.String("public-url", os.Getenv("CONVTRACE_PUBLIC_URL"), "URL users open the viewer by when it is not its listen address, e.g. behind a proxy (env CONVTRACE_PUBLIC_URL): requests naming another host than this one's, the listen address's, an IP address or localhost are refused")
	otlpToken := fs.String("otlp-token", os.Getenv("CONVTRACE_OTLP_TOKEN"), "token OTLP requests and /metrics must carry instead of --token (env CONVTRACE_OTLP_TOKEN)")
	memoryLimit := fs.Int64("otlp-memory-limit", otlpreceiver.DefaultMemoryLimit, "memory the OTLP requests in flight may hold, in bytes; beyond it senders are told to retry later")
	storeTimeout := fs.Duration("otlp-store-timeout", otlpreceiver.DefaultStoreTimeout, "how long an OTLP request waits for storage before it is answered retry-later")
	retention := fs.String("retention", "", "prune turns and spans older than this age (180d) now and every day, keeping each thread's shell in the list; where the server has TTL, the tables also get a TTL 7 days longer, in case serve is not running (empty: keep everything)")
	shellRetention := fs.String("shell-retention", "", "with --retention: remove for good a thread a prune left with no turn (its shell, title and summary) this long after that prune (empty: as long as --retention)")
	archiveAfter := fs.String("archive-after", "", "archive the threads idle for this age (30d) to --archive-dir now and every day, then remove them from ClickHouse (empty: off)")
	archiveDir := fs.String("archive-dir", "", "folder of --archive-after's files, one per thread")
	readOnly := fs.Bool("read-only", false, "an untouchable audit trail: the viewer and its JSON API refuse every change (rename, archive, delete, notes, import) and show no control for one")
	summarizeEvery := fs.Duration("summarize-every", 30*time.Second, "how often the cost summaries of past days are brought current in the background, so that the cost report and the cost_cells view read them (0: only when a report asks)")
	return func(ctx context.Context, out streams, _ []string) error {
		ingestToken := cmp.Or(*otlpToken, *token)
		for _, l := range []struct{ flag, addr, token string }{
			{"--listen", *listen, *token}, {"--otlp-http", *otlpHTTP, ingestToken}, {"--otlp-grpc", *otlpGRPC, ingestToken},
		} {
			if err := checkListen(l.flag, l.addr, l.token); err != nil {
				return err
			}
		}
		limitMemory(*memoryLimit)
		p, err := loadPrices(*prices)
		if err != nil {
			return err
		}
		redact, err := rf.option()
		if err != nil {
			return err
		}
		var keep time.Duration
		if *retention != "" {
			if keep, err = page.ParseAge(*retention); err != nil {
				return fmt.Errorf("--retention: %w", err)
			}
			if keep < 24*time.Hour {
				return fmt.Errorf("--retention: %q is less than a day: give a day or more, such as 180d", *retention)
			}
		}
		shells := keep
		if *shellRetention != "" {
			if keep == 0 {
				return fmt.Errorf("--shell-retention: give --retention too: shells are what its prunes keep")
			}
			if shells, err = page.ParseAge(*shellRetention); err != nil {
				return fmt.Errorf("--shell-retention: %w", err)
			}
		}
		var idle time.Duration
		if *archiveAfter != "" {
			if idle, err = page.ParseAge(*archiveAfter); err != nil {
				return fmt.Errorf("--archive-after: %w", err)
			}
			if idle < 24*time.Hour {
				return fmt.Errorf("--archive-after: %q is less than a day: give a day or more, such as 30d", *archiveAfter)
			}
			if *archiveDir == "" {
				return errors.New("--archive-after: name the folder of the files with --archive-dir")
			}
		}
		if sf.dsn == "" && sf.cluster == "" {
			unlock, err := localstore.LockServe(sf.dataDir)
			if err != nil {
				return err
			}
			defer unlock()
		}
		// Every address is taken before anything is recorded: a busy port
		// fails the serve before it records a demo run.
		lns, err := listenAll([]listenAddr{{"convtrace viewer", "--listen", *listen}, {"OTLP/HTTP receiver", "--otlp-http", *otlpHTTP}, {"OTLP/gRPC receiver", "--otlp-grpc", *otlpGRPC}})
		if err != nil {
			return err
		}
		defer closeAll(lns)
		st, err := sf.open(ctx, out.stderr)
		if err != nil {
			return err
		}
		defer st.close()
		superviseCtx, stopSupervising := context.WithCancel(ctx)
		waitSupervisor := st.supervise(superviseCtx, out.stderr)
		defer func() {
			stopSupervising()
			waitSupervisor()
		}()
		var demoThread string
		if *withDemo {
			if demoThread, err = demoOnce(ctx, st, out, redact, *demoAgain); err != nil {
				return err
			}
		}

		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		insertSeconds := newInsertHistogram(reg)
		ing, err := collector.NewIngester(st.dsn, redact,
			collector.WithJoinWindow(*joinWindow),
			collector.WithPrices(p),
			collector.WithFlushInterval(time.Second),
			collector.WithBatchSize(50_000),
			// Requests hold their rows in the queue until stored, and the
			// receivers' memory limit already bounds them.
			collector.WithQueueBytes(*memoryLimit),
			collector.WithSpool(sf.spoolDir()), // stores what convtrace run spooled, and keeps what expires unstored
			collector.WithInsertObserver(func(d time.Duration) { insertSeconds.Observe(d.Seconds()) }),
		)
		if err != nil {
			return err
		}
		registerIngestMetrics(reg, ing)
		defer func() {
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := ing.Shutdown(shutdownCtx); err != nil {
				fmt.Fprintf(out.stderr, "flush collector: %v\n", err)
			}
		}()

		var servers []*http.Server
		served := make(chan error, 3)
		serveHTTP := func(ln net.Listener, h http.Handler, what string) string {
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
			servers = append(servers, srv)
			go func() { served <- srv.Serve(ln) }()
			fmt.Fprintf(out.stdout, "%s on http://%s\n", what, ln.Addr())
			return ln.Addr().String()
		}
		hosts, err := viewerHosts(*listen, *publicURL)
		if err != nil {
			return err
		}
		viewOpts := []viewer.Option{viewer.WithToken(*token), viewer.WithPrices(p), viewer.WithInterruptedAfter(*interruptedAfter),
			viewer.WithHosts(hosts...), viewer.WithReplicas(st.replicaDialer())}
		if *readOnly {
			viewOpts = append(viewOpts, viewer.WithReadOnly())
		}
		v := viewer.New(st.conn, viewOpts...)
		viewerAddr := serveHTTP(lns[0], v.Handler(), "convtrace viewer")
		if *summarizeEvery > 0 {
			go v.KeepSummarized(ctx, *summarizeEvery)
		}
		if keep > 0 {
			go keepRetention(ctx, st.conn, keep, shells, out.stderr)
		}
		if idle > 0 {
			go keepArchived(ctx, st.conn, idle, *archiveDir, out.stderr)
		}
		local := localstore.Endpoints{PID: os.Getpid(), Viewer: "http://" + viewerAddr}
		recvOpts := []otlpreceiver.Option{otlpreceiver.WithRegistry(reg), otlpreceiver.WithMaxBodySize(int64(*maxBody)),
			otlpreceiver.WithMemoryLimit(*memoryLimit), otlpreceiver.WithStoreTimeout(*storeTimeout), otlpreceiver.WithToken(ingestToken)}
		if lns[1] != nil {
			mux := http.NewServeMux()
			mux.Handle("/v1/", otlpreceiver.NewHTTPHandler(ing, recvOpts...))
			mux.Handle("/", otlpreceiver.NewOpsHandler(reg, ing.Ready, otlpreceiver.WithToken(ingestToken)))
			local.OTLPHTTP = "http://" + serveHTTP(lns[1], mux, "OTLP/HTTP receiver")
		}
		var grpcSrv *grpc.Server
		if ln := lns[2]; ln != nil {
			grpcSrv = otlpreceiver.NewGRPCServer(ing, recvOpts...)
			go func() { served <- grpcSrv.Serve(ln) }()
			fmt.Fprintf(out.stdout, "OTLP/gRPC receiver on %s\n", ln.Addr())
			local.OTLPGRPC = ln.Addr().String()
		}
		if sf.dsn == "" {
			// convtrace status, and the next command, find this serve.
			if err := localstore.WriteEndpoints(sf.dataDir, local); err != nil {
				fmt.Fprintf(out.stderr, "record the endpoints in %s: %v\n", sf.dataDir, err)
			}
			defer localstore.RemoveEndpoints(sf.dataDir, local.PID)
		}
		if demoThread != "" {
			fmt.Fprintf(out.stdout, "open the demo run: %s%s\n", local.Viewer, threadPath(demoThread))
		}
		fmt.Fprintln(out.stdout, "Ctrl-C stops")

		var serveErr error
		select {
		case err := <-served:
			serveErr = fmt.Errorf("serve: %w", err)
		case <-ctx.Done():
		}
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if grpcSrv != nil {
			grpcSrv.GracefulStop()
		}
		_ = v.Shutdown(shutdownCtx) // ends the change feed's streams, which srv.Shutdown waits for
		for _, srv := range servers {
			if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
				serveErr = errors.Join(serveErr, fmt.Errorf("shut down: %w", err))
			}
		}
		return serveErr
	}
}

// checkListen refuses an address other than loopback for what flag
// serves when no token guards it: the viewer shows everything the agents
// said, and OTLP lets anyone write. An empty address serves nothing.
// listenAddr is an address serve listens on: what for, and its flag.
type listenAddr struct{ what, flag, addr string }

// listenAll listens on every address, nil for an empty one; a busy port
// says which flag moves it.
func listenAll(addrs []listenAddr) ([]net.Listener, error) {
	lns := make([]net.Listener, len(addrs))
	for i, a := range addrs {
		if a.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", a.addr)
		if err != nil {
			closeAll(lns)
			if errors.Is(err, syscall.EADDRINUSE) {
				return nil, fmt.Errorf("%s: %s is in use by another program: give another address, such as %s 127.0.0.1:0 (any free port), or stop that program",
					a.flag, a.addr, a.flag)
			}
			return nil, fmt.Errorf("listen for %s: %w", a.what, err)
		}
		lns[i] = ln
	}
	return lns, nil
}

// closeAll closes the listeners not handed to a server yet (closing one
// twice does no harm).
func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

func checkListen(flag, addr, token string) error {
	if token != "" || addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %w", flag, addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s %s is not a loopback address: set --token (or CONVTRACE_TOKEN) to serve beyond this machine", flag, addr)
}

// limitMemory sets the Go runtime's soft memory limit from the OTLP memory
// limit, unless GOMEMLIMIT sets it: twice the requests' share, for the
// write queue, batches and garbage not yet collected, the imports' budget
// (transfer.MemoryBudget) and 128 MiB for the rest. The collector then
// collects garbage sooner instead of growing.
func limitMemory(requests int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(2*requests + transfer.MemoryBudget + 128<<20)
	}
}

// viewerHosts are the host names the viewer answers to besides addresses
// and localhost: its listen address's, and --public-url's.
func viewerHosts(listen, publicURL string) ([]string, error) {
	var hosts []string
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || u.Hostname() == "" {
			return nil, fmt.Errorf("--public-url: %q is not a URL such as https://convtrace.example.com", publicURL)
		}
		hosts = append(hosts, u.Hostname())
	}
	return hosts, nil
}

// threadPath is a thread's page on the viewer.
func threadPath(id string) string { return "/threads/" + url.PathEscape(id) }
