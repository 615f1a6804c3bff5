package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"outcore/engine/dataset"
	"outcore/experiments/grid"
)

// TestPanickingHandlerAnswers500: a handler that panics is answered 500
// and the server goes on serving.
func TestPanickingHandlerAnswers500(t *testing.T) {
	e := newEnv(t)
	e.srv.App().Get("/boom", func(c *fiber.Ctx) error { panic("handler bug") })
	code, page := e.get("/boom")
	if code != http.StatusInternalServerError || !strings.Contains(page, "handler bug") {
		t.Fatalf("GET /boom: %d %s", code, page)
	}
	if code, _ := e.get("/experiments"); code != 200 {
		t.Fatalf("after the panic GET /experiments: %d", code)
	}
}

// TestPanickingJobFailsOnlyItself: an importer that panics (a crafted
// file) fails its job; the server and the next job go on.
func TestPanickingJobFailsOnlyItself(t *testing.T) {
	e := newEnv(t)
	jobHook = func(kind, name string) {
		if name == "bad" {
			panic("importer bug")
		}
	}
	defer func() { jobHook = nil }()
	j := e.srv.jobs
	j.Import("linqs", "bad", t.TempDir())
	j.Generate("good", "tiny", mustPreset(t, "tiny"), nil)
	j.Wait()
	states := map[string]JobState{}
	for _, s := range j.List() {
		states[s.Name] = s
	}
	if s := states["bad"]; s.State != JobFailed || !strings.Contains(s.Message, "internal error: importer bug") {
		t.Fatalf("panicking job: %+v", s)
	}
	if s := states["good"]; s.State != JobDone {
		t.Fatalf("next job: %+v", s)
	}
}

func mustPreset(t *testing.T, name string) dataset.GenConfig {
	cfg, err := dataset.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestQueuedJobKeepsItsParameters: a dataset job queued behind a blocked
// one is started from the values of its own request, not from whatever
// later requests left in the buffers fasthttp reuses.
func TestQueuedJobKeepsItsParameters(t *testing.T) {
	e := newEnv(t)
	e.login()
	release := make(chan struct{})
	var mu sync.Mutex
	var names []string
	jobHook = func(kind, name string) {
		mu.Lock()
		names = append(names, name)
		mu.Unlock()
		if name == "blocker" {
			<-release
		}
	}
	defer func() { jobHook = nil }()
	post := func(name string) {
		resp := e.post("/datasets/generate", url.Values{"preset": {"tiny"}, "name": {name}, "seed": {"7"}})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("generate %s: %d %s", name, resp.StatusCode, body(t, resp))
		}
	}
	post("blocker")
	waitFor(t, 10*time.Second, "the blocker to start", func() bool { mu.Lock(); defer mu.Unlock(); return len(names) == 1 })
	post("queuedone")
	// Requests that fill the reused buffers with other bytes.
	for i := 0; i < 20; i++ {
		v := validForm()
		v.Set("name", strings.Repeat("Z", 9))
		v.Set("preset", "XXXXXXXXX")
		e.post("/experiments/preview", v)
		e.post("/datasets/generate", url.Values{"preset": {"nopreset"}, "name": {"../evil.."}})
	}
	close(release)
	e.srv.jobs.Wait()
	for _, s := range e.srv.jobs.List() {
		if s.State != JobDone {
			t.Errorf("job %q: %s %s", s.Name, s.State, s.Message)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(names) != 2 || names[1] != "queuedone" {
		t.Fatalf("jobs ran as %q", names)
	}
	m, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(e.dir), "queuedone"))
	if err != nil || m.Source.Preset != "tiny" {
		t.Fatalf("queued job's dataset: %+v %v", m.Source, err)
	}
}

// TestShutdownDoesNotWaitForABlockedJob: SIGTERM (ctx cancelled) stops the
// server within its grace even when a dataset job is blocked in a call that
// ignores cancellation, and no request changes anything once it began.
func TestShutdownDoesNotWaitForABlockedJob(t *testing.T) {
	e := newEnv(t)
	blocked := make(chan struct{})
	unblock := make(chan struct{})
	var srv *Server
	defer func() {
		// Let the abandoned job end before the temporary data directory is
		// removed (it still writes there once unblocked).
		close(unblock)
		if srv != nil {
			srv.jobs.Wait()
		}
	}()
	jobHook = func(string, string) {
		close(blocked)
		<-unblock // blocked in the kernel: deaf to the job's context
	}
	defer func() { jobHook = nil }()
	srv, err := New(context.Background(), Config{Store: e.st, Queue: e.mgr, DataDir: e.dir, CSRFKey: []byte("0123456789abcdef0123456789abcdef"),
		Log: log.New(io.Discard, "", 0), JobGrace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	addr, cancel, served := serveLoopback(t, srv)
	srv.jobs.Generate("stuck", "tiny", mustPreset(t, "tiny"), nil)
	<-blocked
	base := "http://" + addr
	createJSON := func() (int, error) {
		req, _ := http.NewRequest(http.MethodPost, base+"/experiments", strings.NewReader(tinyGrid))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := createJSON(); err != nil || code != http.StatusForbidden { // no CSRF token: refused, but served
		t.Fatalf("before shutdown: %d %v", code, err)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return with a dataset job blocked")
	}
	t.Logf("shut down in %.2f s with the job still blocked", time.Since(start).Seconds())
	if code, err := createJSON(); err == nil {
		t.Fatalf("after shutdown a request was answered %d", code)
	}
	if n := experimentCount(t, e); n != 0 {
		t.Fatalf("%d experiments created", n)
	}
}

// TestDrainingRefusesChanges: once shutdown has begun, requests that
// change state get 503 and change nothing; pages still load.
func TestDrainingRefusesChanges(t *testing.T) {
	e := newEnv(t)
	e.login()
	e.srv.draining.Store(true)
	resp := e.post("/experiments", validForm())
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body(t, resp), "shutting down") {
		t.Fatalf("POST while draining: %d", resp.StatusCode)
	}
	if n := experimentCount(t, e); n != 0 {
		t.Fatalf("%d experiments created while draining", n)
	}
	if code, _ := e.get("/experiments"); code != 200 {
		t.Fatalf("GET while draining: %d", code)
	}
}

// TestHostIsAlwaysChecked: without a configured list the server answers
// only the loopback names.
func TestHostIsAlwaysChecked(t *testing.T) {
	e := newEnv(t)
	srv, err := New(context.Background(), Config{Store: e.st, Queue: e.mgr, DataDir: e.dir, CSRFKey: []byte("0123456789abcdef0123456789abcdef"),
		Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]int{"evil.example": 421, "127.0.0.1:8080": 200, "localhost": 200, "[::1]:80": 200, "127.0.0.1.evil.example": 421} {
		req := httptest.NewRequest(http.MethodGet, "/experiments", nil)
		req.Host = host
		resp, err := srv.App().Test(req, 10000)
		if err != nil || resp.StatusCode != want {
			t.Errorf("Host %q: %v %v, want %d", host, resp.StatusCode, err, want)
		}
	}
}

// TestAuthRequiresACredential: with an auth file every request needs a
// token or the basic-auth user and password.
func TestAuthRequiresACredential(t *testing.T) {
	e := newEnv(t)
	a, err := ParseAuth([]byte("# users\nalice:correct horse\ntoken 0123456789abcdef-token\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), Config{Store: e.st, Queue: e.mgr, DataDir: e.dir, CSRFKey: []byte("0123456789abcdef0123456789abcdef"),
		Log: log.New(io.Discard, "", 0), Hosts: []string{"example.com"}, Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
	for _, tc := range []struct {
		path, auth string
		want       int
	}{
		{"/experiments", "", 401},
		{"/static/app.js", "", 401},
		{"/experiments", basic("alice", "correct horse"), 200},
		{"/experiments", basic("alice", "wrong horse"), 401},
		{"/experiments", basic("bob", "correct horse"), 401},
		{"/experiments", "Bearer 0123456789abcdef-token", 200},
		{"/experiments", "Bearer 0123456789abcdef-tokeX", 401},
		{"/experiments", "Bearer ", 401},
		{"/experiments", "Basic !!!", 401},
	} {
		req := httptest.NewRequest(http.MethodGet, tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := srv.App().Test(req, 10000)
		if err != nil || resp.StatusCode != tc.want {
			t.Errorf("%s with %q: %v %v, want %d", tc.path, tc.auth, resp.StatusCode, err, tc.want)
			continue
		}
		if tc.want == 401 && !strings.Contains(resp.Header.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("401 without a basic-auth challenge: %q", resp.Header.Get("WWW-Authenticate"))
		}
	}
	for _, bad := range []string{"", "# only a comment\n", "token short\n", "alice:short\n", ":password1\n", "alice:password1\nalice:password2\n", "no colon here\n"} {
		if _, err := ParseAuth([]byte(bad)); !errors.Is(err, ErrAuthFile) {
			t.Errorf("ParseAuth(%q) = %v", bad, err)
		}
	}
	p := filepath.Join(t.TempDir(), "auth")
	os.WriteFile(p, []byte("alice:correct horse\n"), 0o644)
	if _, err := LoadAuthFile(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable auth file: %v", err)
	}
	os.Chmod(p, 0o600)
	if _, err := LoadAuthFile(p); err != nil {
		t.Errorf("auth file 0600: %v", err)
	}
}

// FuzzParseAuth: any auth file content is refused with ErrAuthFile or
// gives credentials; nothing else matches them.
func FuzzParseAuth(f *testing.F) {
	f.Add([]byte("alice:correct horse\ntoken 0123456789abcdef0123\n"))
	f.Add([]byte("# x\n\n:\n"))
	f.Add([]byte("token \t\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseAuth(b)
		if err != nil {
			if !errors.Is(err, ErrAuthFile) {
				t.Fatalf("error without ErrAuthFile: %v", err)
			}
			return
		}
		if a.Allows("") || a.Allows("Bearer ") || a.Allows("Basic ") {
			t.Fatal("an empty credential is allowed")
		}
	})
}

// TestImportRefusesLinksOutOfTheFolder: a symbolic link inside the import
// folder that leads out of it (to a file, or to a folder that leads out)
// is refused, and so is a FIFO, which would block the job.
func TestImportRefusesLinksOutOfTheFolder(t *testing.T) {
	e := newEnv(t)
	e.login()
	root := filepath.Join(e.dir, "imports")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.content"), []byte("p1 1 0 A\n"), 0o644)
	mk := func(name string, setup func(dir string)) {
		dir := filepath.Join(root, name)
		os.MkdirAll(dir, 0o755)
		setup(dir)
	}
	mk("linkfile", func(d string) {
		os.Symlink(filepath.Join(outside, "secret.content"), filepath.Join(d, "x.content"))
		os.WriteFile(filepath.Join(d, "x.cites"), nil, 0o644)
	})
	mk("linkdir", func(d string) { os.Symlink(outside, filepath.Join(d, "derived")) })
	mk("hop", func(d string) { os.Symlink(filepath.Join(root, "linkdir"), filepath.Join(d, "sub")) })
	mk("fifo", func(d string) { syscall.Mkfifo(filepath.Join(d, "x.content"), 0o644) })
	mk("fine", func(d string) {
		os.WriteFile(filepath.Join(d, "real.content"), []byte("p1 1 0 A\np2 0 1 B\n"), 0o644)
		os.Symlink(filepath.Join(d, "real.content"), filepath.Join(d, "x.content"))
	})
	for name, want := range map[string]string{"linkfile": "symbolic link", "linkdir": "symbolic link", "hop": "symbolic link", "fifo": "not a regular file"} {
		resp := e.post("/datasets/import", url.Values{"kind": {"linqs"}, "path": {name}, "name": {"imp" + name}})
		page := body(t, resp)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, want) {
			t.Errorf("import %s: %d, want 422 saying %q", name, resp.StatusCode, want)
		}
	}
	if err := CheckImportTree(root, filepath.Join(root, "fine")); err != nil {
		t.Errorf("a link inside the folder: %v", err)
	}
}

// TestExampleWithOverflowingRunCount: an example grid of 4 variants ×
// repeat 2^62 is listed with its problem, not as "-2 runs" (or 0).
func TestExampleWithOverflowingRunCount(t *testing.T) {
	e := newEnv(t)
	if _, err := WriteExample(e.dir, "huge.json", []byte(`{"name":"huge","dataset":"tiny","axes":{"system":["pyg+","ginex","gnndrive","reference"],"repeat":4611686018427387904}}`)); err != nil {
		t.Fatal(err)
	}
	exs := listExamples(e.dir)
	if len(exs) != 1 || exs[0].Runs != 0 || !strings.Contains(exs[0].Problem, "more runs than can be counted") {
		t.Fatalf("example %+v", exs)
	}
	_, page := e.get("/experiments")
	if strings.Contains(page, "-2 runs") || !strings.Contains(page, "more runs than can be counted") {
		t.Fatalf("the list shows the example wrongly")
	}
}

var internalField = regexp.MustCompile(`axes\.|\[\d+\]`)

// TestJSONAPIListsEveryProblemInWords: the JSON API is held to the form's
// limits and answers every problem with its field, in words.
func TestJSONAPIListsEveryProblemInWords(t *testing.T) {
	e := newEnv(t)
	e.login()
	gridText := `{"name":"` + strings.Repeat("n", 150) + `","dataset":"tiny","epochs":100000,"hidden":1000000000,"unknown_key":1,
		"axes":{"system":["pyg+","pyg+"],"fanout":[[5000]],"mem_limit":["1e30"],"batch_size":[7,7],"repeat":1000}}`
	req := httptest.NewRequest(http.MethodPost, "/experiments", strings.NewReader(gridText))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(CSRFHeader, e.token)
	req.Header.Set("Accept", "application/json")
	resp := e.request(req)
	var out struct {
		Error    string         `json:"error"`
		Field    string         `json:"field"`
		Problems []grid.Problem `json:"problems"`
	}
	if err := json.Unmarshal([]byte(body(t, resp)), &out); err != nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	fields := map[string]bool{}
	for _, p := range out.Problems {
		fields[p.Field] = true
		if internalField.MatchString(p.Message) {
			t.Errorf("internal field name in %q", p.Message)
		}
	}
	for _, f := range []string{"name", "epochs", "hidden", "unknown_key", "system", "fanout", "mem_limit", "batch_size", "repeat"} {
		if !fields[f] {
			t.Errorf("no problem about %s in %+v", f, out.Problems)
		}
	}
	// The form gives the same words for the same grid values.
	v := validForm()
	v.Set("epochs", "100000")
	v.Set("mem_limits", "1e30")
	page := body(t, e.post("/experiments/preview", v))
	if !strings.Contains(page, "epochs: 100000 is not a whole number from 1 to 1000") || !strings.Contains(page, "above the largest memory limit, 1 PiB") {
		t.Errorf("preview: %s", page)
	}
}

// TestWebNumbersAtInt64Bounds: ids, seeds and form numbers at and past
// the int64 limits are refused with a message.
func TestWebNumbersAtInt64Bounds(t *testing.T) {
	e := newEnv(t)
	e.login()
	for _, p := range []string{"/runs/9223372036854775807", "/experiments/9223372036854775807"} {
		if code, _ := e.get(p); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
	for _, p := range []string{"/runs/9223372036854775808", "/experiments/-9223372036854775809", "/runs/-1"} {
		if code, _ := e.get(p); code != http.StatusBadRequest && code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 400", p, code)
		}
	}
	resp := e.post("/datasets/generate", url.Values{"preset": {"tiny"}, "name": {"s"}, "seed": {"18446744073709551616"}})
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body(t, resp), "seed") {
		t.Errorf("seed 2^64: %d", resp.StatusCode)
	}
	for field, val := range map[string]string{"epochs": "9223372036854775807", "repeats": "9223372036854775808", "batches": "-9223372036854775808", "dims": "9223372036854775807", "fanouts": "9223372036854775807"} {
		v := validForm()
		v.Set(field, val)
		page := body(t, e.post("/experiments/preview", v))
		i := strings.Index(page, `id="err-`+field+`"`)
		if i < 0 || !strings.Contains(page[i:min(len(page), i+400)], val) {
			t.Errorf("%s = %s: no error naming it", field, val)
		}
	}
	_ = fmt.Sprint
}
