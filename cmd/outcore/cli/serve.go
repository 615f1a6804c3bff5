package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/experiments"
	"outcore/experiments/executors"
	"outcore/experiments/grid"
	"outcore/experiments/studies"
	"outcore/report"
	"outcore/store"
	"outcore/web"
	"outcore/web/views"
)

// Default dataset and example made on first start.
const (
	defaultDataset = "default"
	defaultPreset  = "small"
	exampleFile    = "example-memory-limits.json"
)

// serveCmd is `outcore serve`.
func serveCmd() *Command {
	var dataDir string
	fs := newFlagSet("serve", &dataDir)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port)")
	concurrency := fs.Int("concurrency", 1, "local runs that may run at the same time (other executors' runs: their own limit)")
	dropCaches := fs.Bool("drop-caches", false, "drop the page cache before each run (needs root)")
	sf := addExecutorFlags(fs, "executors this server offers, the first the default of grids that name none: "+executorNames(", ")+" (local: children of this server), or several (local,NAME: the first is the default); a grid naming another is refused")
	allowedHosts := fs.String("allowed-hosts", "", "comma-separated host names (and addresses) requests may name, besides the loopback names")
	authFile := fs.String("auth-file", "", `credentials required of every request: lines "token <secret>" or "<user>:<password>" (mode 0600)`)
	insecure := fs.Bool("insecure", false, "serve off loopback without --auth-file (anyone who reaches the port controls the runs)")
	trusted := fs.String("trusted-proxies", "", "comma-separated addresses or CIDR ranges of reverse proxies whose X-Forwarded-Host/-For headers count (default: none)")
	maxConns := fs.Int("max-conns", 0, "open connections at most (default 2048, and always below the file-descriptor limit)")
	maxConnsClient := fs.Int("max-conns-per-client", 0, "open connections of one client address at most (default 128)")
	systemsFile := fs.String("systems", "", systemsFlagHelp)
	preset := fs.String("default-preset", defaultPreset, "preset of the default dataset made on first start (tiny, small, medium, ...)")
	return &Command{
		Name:  "serve",
		Args:  "[--addr 127.0.0.1:8080] [--data-dir DIR] [--allowed-hosts NAMES] [--auth-file FILE] [--trusted-proxies ADDRS] [flags]",
		Short: "serve the experiment dashboard",
		Long: `Serves the experiment dashboard and runs the experiment queue (one run at a
time by default). On first start it creates the default dataset (preset
"small", named "default") and a ready-to-start example experiment, which the
experiment list offers with a Start button (nothing runs until you start it).
When another server runs the queue of the same data directory, this one
shows the experiments and takes the queue over when that one stops.

It binds 127.0.0.1 unless --addr names another address. Requests must name
one of the allowed hosts (Host header): the loopback names, plus
--allowed-hosts (default off loopback: the address bound, or every address
of the machine for 0.0.0.0, and its host name). Off loopback the dashboard
refuses to start without --auth-file (tokens, or users and passwords; see the
README) unless --insecure is given; put TLS in front with a reverse proxy
(README) and name it in --trusted-proxies: X-Forwarded-* headers count only
from there. Requests are limited before authentication (body 4 MiB, head
8 KiB, 30 s to send a request, connections per client and in all); wrong
credentials make their sender wait, and the count of them is logged when
the server stops (docs/SECURITY.md).

` + executorHelp(func(r executors.Registration) string { return r.ServeHelp }),
		Flags: fs,
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			if *concurrency < 1 {
				return usagef("--concurrency must be at least 1")
			}
			executor, execOpts, err := sf.options()
			if err != nil {
				return err
			}
			_, offered, _ := sf.executors()
			if _, err := dataset.Preset(*preset); err != nil {
				return usagef("--default-preset: %v", err)
			}
			guard := serveGuard{insecure: *insecure, preset: *preset}
			if *authFile != "" {
				a, err := web.LoadAuthFile(*authFile)
				if err != nil {
					return usagef("--auth-file: %v", err)
				}
				guard.auth = a
			}
			if guard.hosts, err = splitHosts(*allowedHosts); err != nil {
				return err
			}
			if guard.proxies, err = web.ParseProxies(strings.Split(*trusted, ",")); err != nil {
				return usagef("--trusted-proxies: %v", err)
			}
			if *maxConns < 0 || *maxConnsClient < 0 {
				return usagef("--max-conns and --max-conns-per-client must be positive")
			}
			guard.limits = web.Limits{MaxConns: *maxConns, MaxConnsPerClient: *maxConnsClient}
			if !isLoopbackAddr(*addr) && guard.auth == nil && !guard.insecure {
				return usagef("refusing to serve on %s, which other machines can reach, without authentication: give --auth-file FILE (see the README, \"Serving beyond this machine\"), or --insecure to serve without it", *addr)
			}
			reg, err := loadSystems(dataset.ResolveDataDir(dataDir), *systemsFile)
			if err != nil {
				return err
			}
			return serve(ctx, s, dataset.ResolveDataDir(dataDir), *addr, guard, experiments.Options{
				Concurrency: *concurrency, DropCaches: *dropCaches, Executor: executor, Executors: offered, ExecutorOptions: execOpts,
				External: reg})
		},
	}
}

// serveGuard is who may use the dashboard: --allowed-hosts, --auth-file,
// --insecure.
type serveGuard struct {
	preset   string // of the default dataset made on first start ("" = small)
	hosts    []string
	auth     *web.Auth
	insecure bool
	proxies  *web.Proxies
	limits   web.Limits
}

// serve runs the dashboard and the queue until ctx ends.
// opts holds the queue's choices (concurrency, page cache, executor); the
// data directory, store and log are filled in here.
func serve(ctx context.Context, s Streams, dir, addr string, guard serveGuard, opts experiments.Options) error {
	logger := log.New(s.Err, "serve: ", log.LstdFlags)
	if err := firstStart(ctx, dir, guard.preset, s.Err, logger); err != nil {
		return err
	}
	if err := writePaperExamples(dir, logger); err != nil {
		return err
	}
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	opts.DataDir, opts.Store = dir, st
	opts.Finished = func(ctx context.Context, id int64) error { return report.StoreRunDigest(ctx, st, id) }
	opts.Logf = func(format string, a ...any) { logger.Printf(format, a...) }
	mgr, err := experiments.New(opts)
	if err != nil {
		return err
	}
	defer mgr.Close()
	// One descriptor per connection: take every one the system allows, and
	// keep the connection cap below them (web.ConnCap).
	fdLimit, ferr := web.RaiseFDLimit()
	if ferr != nil {
		logger.Printf("raising the open-file limit: %v (limit %d)", ferr, fdLimit)
	}
	lim := guard.limits.WithDefaults()
	lim.MaxConns = web.ConnCap(lim.MaxConns, fdLimit)
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	ln := web.NewGuardedListener(tcp, lim.MaxConns, lim.MaxConnsPerClient, logger)
	ln.Exempt = guard.proxies.Trusts // every client comes through a proxy
	defer ln.Close()
	// Host names requests may carry (no DNS rebinding): always checked.
	hosts := append([]string(nil), web.LoopbackHosts...)
	hostList := guard.hosts
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
		if len(hostList) == 0 {
			hostList = defaultHosts(host)
		}
		if guard.auth == nil {
			logger.Printf("warning: listening on %s, reachable from other machines, WITHOUT authentication (--insecure)", ln.Addr())
		}
	}
	hosts = append(hosts, hostList...)
	logger.Printf("answering requests for hosts %s", strings.Join(hosts, ", "))
	if ps := guard.proxies.Strings(); len(ps) > 0 {
		logger.Printf("X-Forwarded-* headers count from the trusted proxies %s only", strings.Join(ps, ", "))
	}
	logger.Printf("at most %d connections (%d per client; open-file limit %d)", lim.MaxConns, lim.MaxConnsPerClient, fdLimit)
	// This host's storage, measured once in the background when it has no
	// profile (DESIGN §11): runs wait for it, pages show its progress.
	mgr.ProbeStorage(ctx)
	storage := func() views.StorageState {
		st := mgr.StorageStatus()
		return views.StorageState{State: st.State, Step: st.Step, Steps: st.Steps, What: st.What, Note: st.Note, Filled: st.Filled}
	}
	srv, err := web.New(ctx, web.Config{Store: st, Queue: mgr, DataDir: dir, Log: logger, Hosts: hosts, Auth: guard.auth,
		TrustedProxies: guard.proxies, Limits: lim, Storage: storage})
	if err != nil {
		return err
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Another server on this data directory may run the queue; this one
		// then stands by and takes the queue over when that one stops.
		if err := mgr.Standby(ctx, time.Second, func(err error) {
			logger.Printf("queue: %v; this server shows experiments and takes the queue over when that process stops", err)
		}); err != nil {
			logger.Printf("queue stopped: %v", err)
		}
	}()
	fmt.Fprintf(s.Err, "outcore dashboard: http://%s  (data directory %s; Ctrl-C stops)\n", ln.Addr(), dir)
	err = srv.Serve(ctx, ln)
	wg.Wait() // running children are stopped and recorded as interrupted
	if guard.auth != nil {
		wrong, blocked := guard.auth.FailedLogins()
		logger.Printf("refused %d failed logins (wrong credentials) and %d attempts made while backing off", wrong, blocked)
	}
	if n, shed, e := ln.Refused(), ln.Shed(), ln.AcceptErrors(); n > 0 || shed > 0 || e > 0 {
		logger.Printf("refused %d connections over the caps, closed %d idle ones for new ones; survived %d accept errors", n, shed, e)
	}
	return err
}

// splitHosts reads --allowed-hosts: comma-separated names or addresses,
// without ports.
func splitHosts(s string) ([]string, error) {
	var out []string
	for _, h := range strings.Split(s, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		h = strings.Trim(h, "[]")
		if strings.ContainsAny(h, "/ @") || (strings.Contains(h, ":") && net.ParseIP(h) == nil) {
			return nil, usagef("--allowed-hosts: %q is not a host name or address (give names without port or scheme)", h)
		}
		out = append(out, h)
	}
	return out, nil
}

// isLoopbackAddr reports whether a listen address binds loopback only.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// defaultHosts are the names a server bound to host answers without
// --allowed-hosts: the address itself (every address of the machine for a
// wildcard) and the machine's host name.
func defaultHosts(host string) []string {
	var out []string
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		out = append(out, strings.ToLower(host))
	} else if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() {
				out = append(out, ipn.IP.String())
			}
		}
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		out = append(out, strings.ToLower(name))
		if short, _, ok := strings.Cut(name, "."); ok {
			out = append(out, strings.ToLower(short))
		}
	}
	return out
}

// firstStart creates the default dataset (preset "" = small) and the
// example experiment's grid file when the data directory has no dataset
// yet.
func firstStart(ctx context.Context, dir, preset string, progress io.Writer, logger *log.Logger) error {
	entries, err := dataset.ListEntries(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return nil
	}
	if preset == "" {
		preset = defaultPreset
	}
	cfg, err := dataset.Preset(preset)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "first start: generating the default dataset %q (preset %s: %s) in %s\n",
		defaultDataset, preset, dataset.PresetDoc(preset), dataset.DatasetsDir(dir))
	if _, err := dataset.GenerateWith(ctx, dataset.DatasetsDir(dir), defaultDataset, cfg,
		dataset.GenOptions{Progress: progress, Preset: preset, NoIndptr: true}); err != nil {
		return fmt.Errorf("first start: %w", err)
	}
	fmt.Fprintln(progress)
	grid, err := exampleGrid(dir)
	if err != nil {
		return err
	}
	wrote, err := web.WriteExample(dir, exampleFile, grid)
	if err != nil {
		return err
	}
	if wrote {
		logger.Printf("first start: example experiment ready to start: %s", filepath.Join(web.ExamplesDir(dir), exampleFile))
	}
	return nil
}

// writePaperExamples puts the study registry's examples (the papers'
// micro-experiments, experiments/studies) into the data directory's
// examples/ folder as grid files, each unless a file of its name is there
// (a researcher's edits stay).
func writePaperExamples(dir string, logger *log.Logger) error {
	for _, s := range studies.Examples() {
		name := s.ID + ".json"
		wrote, err := web.WriteExample(dir, name, s.GridFile())
		if err != nil {
			return err
		}
		if wrote && logger != nil {
			logger.Printf("example experiment ready to start: %s", filepath.Join(web.ExamplesDir(dir), name))
		}
	}
	return nil
}

// exampleGrid is the example experiment on the default dataset of dir:
// every registered variant of a paper (the baseline included, the
// reference pipeline not), in display order, at the memory limits
// web.ExampleLimits picks from the variants' floors on that dataset
// (train.MinMemoryFor, the check every run passes): shares of its
// features from the lowest floor up to one every variant starts in. The
// cells below a variant's floor are skipped and shown as refused
// (skip_infeasible), so Start always starts. Two epochs, two repeats,
// evaluation on 2,000 nodes: the README says how many runs that is.
func exampleGrid(dir string) ([]byte, error) {
	var systems []string
	for _, v := range train.Variants() {
		if v.Paper != "" && v.Name != train.ReferenceName {
			systems = append(systems, v.Name)
		}
	}
	if len(systems) == 0 {
		return nil, errors.New("first start: no system variant is registered")
	}
	meta, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(dir), defaultDataset))
	if err != nil {
		return nil, fmt.Errorf("first start: %w", err)
	}
	cfg := train.DefaultConfig()
	cfg.Dataset, cfg.DataDir, cfg.Model = defaultDataset, dir, "sage"
	fanout := web.ExampleFanout()
	cfg.Batch, cfg.Fanout, cfg.Layers = web.ExampleBatch, fanout, len(fanout)
	var floors []int64
	for _, s := range systems {
		cfg.System = s
		floors = append(floors, train.MinMemoryFor(cfg, meta))
	}
	g := map[string]any{
		"name":            "Example: epoch time vs memory limit",
		"dataset":         defaultDataset,
		"model":           "sage",
		"epochs":          exampleEpochs,
		"eval_max_nodes":  2000,
		"skip_infeasible": true,
		"axes": map[string]any{
			"system":     systems,
			"mem_limit":  web.ExampleLimits(meta, floors),
			"batch_size": []int{web.ExampleBatch},
			"fanout":     []string{grid.FormatFanout(fanout)},
			"repeat":     exampleRepeats,
		},
	}
	return json.MarshalIndent(g, "", "  ")
}

// The example's settings (README "Quick start" counts its runs from
// them); its batch size and fanout are web.ExampleBatch and
// web.ExampleFanout, the form's first values too.
const (
	exampleEpochs  = 2
	exampleRepeats = 2
)
