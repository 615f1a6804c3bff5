package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"outcore/engine/devprofile"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	_ "outcore/engine/system/all" // registers the variants the form offers
	"outcore/experiments"
	"outcore/store"
	"outcore/store/storetest"
)

// tinyDir holds the tiny dataset, generated once for the package's tests.
var tinyDir string

func TestMain(m *testing.M) {
	if addr := os.Getenv(dialerEnv); addr != "" {
		holdConnections(addr)
		return
	}
	// The tests' servers and runs do not measure the storage (a few
	// seconds per fresh data directory) but where a test turns it back on
	// (devprofile.ProbeEnv).
	os.Setenv(devprofile.ProbeEnv, "off")
	dir, err := os.MkdirTemp("", "web-test-tiny-")
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := dataset.Preset("tiny")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := dataset.GenerateWith(context.Background(), dataset.DatasetsDir(dir), "tiny", cfg,
		dataset.GenOptions{Preset: "tiny", NoIndptr: true}); err != nil {
		log.Fatal(err)
	}
	tinyDir = filepath.Join(dataset.DatasetsDir(dir), "tiny")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// copyDir copies a folder of plain files.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testEnv is a dashboard on a real SQLite store in a temporary data
// directory holding the tiny dataset, with the experiment manager (its
// queue not running: tests play the runner's part through the store).
type testEnv struct {
	t     testing.TB
	dir   string
	st    *store.Store
	mgr   *experiments.Manager
	srv   *Server
	jar   []*http.Cookie
	token string
}

func newEnv(t testing.TB) *testEnv { return newEnvIn(t, t.TempDir()) }

// newEnvIn is newEnv on a data directory the test may have prepared (a
// database written by an older outcore, say).
func newEnvIn(t testing.TB, dir string) *testEnv { return newEnvWith(t, dir, nil) }

// newEnvWith is newEnvIn with the queue's options adjusted by opt.
func newEnvWith(t testing.TB, dir string, opt func(*experiments.Options)) *testEnv {
	t.Helper()
	copyDir(t, tinyDir, filepath.Join(dataset.DatasetsDir(dir), "tiny"))
	ctx := context.Background()
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := experiments.Options{DataDir: dir, Store: st, NoCgroups: true, Binary: "/bin/false"}
	if opt != nil {
		opt(&opts)
	}
	mgr, err := experiments.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(ctx, Config{Store: st, Queue: mgr, DataDir: dir, CSRFKey: []byte("0123456789abcdef0123456789abcdef"),
		Log: log.New(io.Discard, "", 0), Hosts: append([]string{"example.com"}, LoopbackHosts...)})
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, dir: dir, st: st, mgr: mgr, srv: srv}
	t.Cleanup(func() {
		srv.Shutdown(context.Background())
		mgr.Close()
		st.Close()
	})
	return e
}

var csrfMeta = regexp.MustCompile(`name="csrf-token" content="([^"]+)"`)

// request sends a request through app.Test with the env's cookies.
func (e *testEnv) request(req *http.Request) *http.Response {
	e.t.Helper()
	for _, c := range e.jar {
		req.AddCookie(c)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "text/html")
	}
	resp, err := e.srv.App().Test(req, 30000)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	for _, c := range resp.Cookies() {
		e.jar = append(e.jar, c)
	}
	return resp
}

// get fetches a page and returns its status and body.
func (e *testEnv) get(path string) (int, string) {
	e.t.Helper()
	resp := e.request(httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(resp.Body)
	if m := csrfMeta.FindStringSubmatch(string(b)); m != nil {
		e.token = m[1]
	}
	return resp.StatusCode, string(b)
}

// login fetches a page so the env holds a CSRF cookie and token.
func (e *testEnv) login() {
	e.t.Helper()
	if code, _ := e.get("/experiments"); code != 200 || e.token == "" {
		e.t.Fatalf("GET /experiments: %d, token %q", code, e.token)
	}
}

// post sends a form with the CSRF token (unless vals sets _csrf itself).
func (e *testEnv) post(path string, vals url.Values) *http.Response {
	e.t.Helper()
	if vals == nil {
		vals = url.Values{}
	}
	if _, ok := vals["_csrf"]; !ok {
		vals.Set("_csrf", e.token)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(vals.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return e.request(req)
}

func body(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// create makes an experiment through the manager.
func (e *testEnv) create(grid string) store.Experiment {
	e.t.Helper()
	x, err := e.mgr.Create(context.Background(), []byte(grid))
	if err != nil {
		e.t.Fatalf("create %s: %v", grid, err)
	}
	return x
}

func (e *testEnv) runs(expID int64) []store.Run {
	e.t.Helper()
	rs, err := e.st.Runs(context.Background(), store.RunFilter{ExperimentID: expID, Current: true})
	if err != nil {
		e.t.Fatal(err)
	}
	return rs
}

// play acts as the runner for one run: it starts it, reports epochs (with
// their events, as the runner writes them), a sample and a log line, and
// ends it with outcome ("" leaves it running).
func (e *testEnv) play(r store.Run, epochs int, secs float64, outcome string) {
	e.t.Helper()
	ctx := context.Background()
	ev := func(kind, msg string, data any) *store.Event {
		var raw json.RawMessage
		if data != nil {
			raw, _ = json.Marshal(data)
		}
		return &store.Event{ExperimentID: r.ExperimentID, RunID: r.ID, Kind: kind, Msg: msg, Data: raw}
	}
	must := func(err error) {
		if err != nil {
			e.t.Fatal(err)
		}
	}
	must(e.st.Update(ctx, func(tx *store.Tx) error {
		if ok, err := tx.ClaimRun(r.ID); err != nil || !ok {
			return fmt.Errorf("claim run %d: %v %v", r.ID, ok, err)
		}
		return tx.AppendEvent(ev(store.EventStatus, "running", map[string]string{"status": store.StatusRunning}))
	}))
	for i := 0; i < epochs; i++ {
		rec := storetest.Epoch(i, secs)
		must(e.st.Update(ctx, func(tx *store.Tx) error {
			prog := metrics.ProgressRecord{Type: metrics.TypeProgress, Epoch: i, Batch: 8, Batches: 8, Elapsed: rec.WallS}
			pb, _ := json.Marshal(prog)
			if err := tx.SetProgress(r.ID, pb); err != nil {
				return err
			}
			if err := tx.AppendEvent(ev(store.EventProgress, "", prog)); err != nil {
				return err
			}
			smp := metrics.SampleRecord{Type: metrics.TypeSample, T: rec.WallS, CPUPercent: 150, IOWaitPercent: 12, RSSBytes: 50 << 20, CgroupBytes: 80 << 20, DiskReadMBps: 30}
			if err := tx.InsertSamples(r.ID, []metrics.SampleRecord{smp}); err != nil {
				return err
			}
			if err := tx.AppendEvent(ev(store.EventSample, "", smp)); err != nil {
				return err
			}
			if err := tx.AppendEvent(ev(store.EventLog, fmt.Sprintf("log line of epoch %d", i), nil)); err != nil {
				return err
			}
			if err := tx.AppendEvent(ev(store.EventEpoch, fmt.Sprintf("epoch %d", i), rec)); err != nil {
				return err
			}
			return tx.InsertEpoch(r.ID, &rec)
		}))
	}
	if outcome == "" {
		return
	}
	must(e.st.Update(ctx, func(tx *store.Tx) error {
		end := store.RunEnd{Status: outcome, TotalS: float64(epochs) * secs, PeakRSSBytes: 60 << 20}
		if outcome == store.StatusFailed {
			end.Error, end.StderrTail = "=cmd|' /C calc'!A0 crashed", "panic: boom"
		}
		if ok, err := tx.FinishRun(r.ID, end); err != nil || !ok {
			return fmt.Errorf("finish run %d: %v %v", r.ID, ok, err)
		}
		return tx.AppendEvent(ev(store.EventStatus, outcome, map[string]string{"status": outcome}))
	}))
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serveLoopback serves srv on a free 127.0.0.1 port (addr) until cancel,
// which the end of the test calls at the latest; served receives Serve's
// result.
func serveLoopback(t testing.TB, srv *Server) (addr string, cancel context.CancelFunc, served chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served = make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(cancel)
	return ln.Addr().String(), cancel, served
}
