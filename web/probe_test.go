package web

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"outcore/engine/dataset"
	"outcore/internal/cgroup"
)

// TestProbeServer is the denial-of-service probe of docs/SECURITY.md
// (scripts/probe-server.sh): it starts `outcore serve --auth-file` in a
// 1 GiB memory cgroup with 1024 file descriptors, runs the attacks that
// killed or stopped it before (slow bodies, a gzip bomb, descriptor
// exhaustion, idle connections held from 18 loopback addresses, a bundle
// flood, a page flood, a password-guessing flood) and after each
// checks that the process is alive and answers. It takes about a minute
// and needs writable memory cgroups (root), so it runs only with
// OUTCORE_PROBE=1; the per-attack regression tests (attack_test.go,
// listener_test.go) run always.
func TestProbeServer(t *testing.T) {
	if os.Getenv("OUTCORE_PROBE") == "" {
		t.Skip("the heavy probe runs with OUTCORE_PROBE=1 (scripts/probe-server.sh)")
	}
	m, err := cgroup.Detect()
	if err != nil {
		t.Skipf("no memory cgroup to put the server in: %v", err)
	}
	const limit = 1 << 30
	g, err := m.Create(fmt.Sprintf("probe-%d", os.Getpid()), limit)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	defer g.Kill(5 * time.Second)

	bin := buildOutcore(t)
	dir := t.TempDir()
	copyDir(t, tinyDir, filepath.Join(dataset.DatasetsDir(dir), "tiny"))
	token := "probe-token-0123456789abcdef"
	authFile := filepath.Join(dir, "auth")
	if err := os.WriteFile(authFile, []byte("token "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// 1024 descriptors (hard limit too), so that exhausting them is within
	// reach of 20,000 connections; the per-client cap is lifted so the
	// total cap is the one that holds.
	cmd := exec.Command("/bin/sh", "-c", `ulimit -n 1024 && exec "$0" "$@"`, bin, "serve", "--addr", addr,
		"--data-dir", dir, "--auth-file", authFile, "--max-conns-per-client", "100000")
	var logBuf syncBuf
	cmd.Stdout, cmd.Stderr = &logBuf, &logBuf
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
		}
	}()

	p := &prober{t: t, addr: addr, token: token, exited: exited, g: g}
	waitFor(t, 60*time.Second, "server answering", func() bool { return p.status("/api/csrf") == 200 })
	p.login()
	p.report("start", "")

	// 1. Slow bodies: 300 connections announce 4 MiB and send 1 byte.
	conns := p.dialMany(300, func(c net.Conn) {
		fmt.Fprintf(c, "POST /api/experiments HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n{", 4<<20)
	})
	time.Sleep(2 * time.Second)
	during := p.status("/api/csrf")
	closeAll(conns)
	p.report("slow bodies", fmt.Sprintf("300 connections announcing 4 MiB, 1 byte sent; answered %s while they hung", codeText(during)))

	// 1b. Large bodies, authenticated: 100 connections each send 4 MiB
	// less one byte of a 4 MiB body and hold the last byte.
	var held []net.Conn
	var hmu sync.Mutex
	var hwg sync.WaitGroup
	big := bytes.Repeat([]byte(" "), 4<<20-1)
	for i := 0; i < 100; i++ {
		hwg.Add(1)
		go func() {
			defer hwg.Done()
			c, err := net.DialTimeout("tcp", p.addr, 2*time.Second)
			if err != nil {
				return
			}
			c.SetWriteDeadline(time.Now().Add(20 * time.Second))
			fmt.Fprintf(c, "POST /api/experiments HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", p.token, 4<<20)
			c.Write(big)
			hmu.Lock()
			held = append(held, c)
			hmu.Unlock()
		}()
	}
	hwg.Wait()
	refused := 0
	for _, c := range held {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if line, _ := bufio.NewReader(c).ReadString('\n'); strings.Contains(line, " 503 ") {
			refused++
		}
	}
	use, _ := g.Usage()
	closeAll(held)
	p.report("large bodies", fmt.Sprintf("100 authenticated connections each sent 4 MiB less one byte: %d refused with 503, group memory %d MiB while held", refused, use>>20))

	// 2. Gzip bomb: 256 MiB of zeros in about 254 KiB.
	bomb := gzipZeros(t, 256<<20)
	code, body := p.post("/api/experiments", map[string]string{"Content-Encoding": "gzip", "Content-Type": "application/json"}, bomb)
	p.report("gzip bomb", fmt.Sprintf("%d KiB gzip (256 MiB inflated): %d %s", len(bomb)>>10, code, oneLine(body)))

	// 3. Descriptor exhaustion: 19,000 idle connections (the probe keeps
	// some of its own 20,000 descriptors to ask with meanwhile).
	conns = p.dialMany(19000, nil)
	time.Sleep(3 * time.Second)
	during = p.status("/api/csrf")
	n := len(conns)
	closeAll(conns)
	time.Sleep(time.Second)
	p.report("fd exhaustion", fmt.Sprintf("%d idle connections opened (of 19,000 tried); answered %s while they were open", n, codeText(during)))

	// 3b. Connection hold: 18 loopback addresses (127.0.0.2-19) hold 50
	// idle connections each, 900 for a total cap of 768, and reopen each
	// as the server closes it (at most 5 times, for at most 20 s); an
	// authenticated client asks meanwhile.
	stop := make(chan struct{})
	var holders sync.WaitGroup
	var opened atomic.Int64
	for a := 2; a < 20; a++ {
		holdIdle(&holders, stop, net.IPv4(127, 0, 0, byte(a)).String(), p.addr, 50, 5, &opened)
	}
	time.Sleep(3 * time.Second)
	answered := map[int]int{}
	for i := 0; i < 5; i++ {
		answered[p.status("/api/csrf")]++
	}
	heldOpen := opened.Load()
	close(stop)
	waitDone(&holders, 20*time.Second)
	p.report("conn hold", fmt.Sprintf("900 idle connections from 18 loopback addresses, reopened as closed (%d opened in all): 5 requests meanwhile answered %v", heldOpen, answered))
	if answered[200] != 5 {
		t.Errorf("while idle connections held the server: %v", answered)
	}

	// 4. Bundle flood: 14 concurrent bundle.zip of a 10,000-run experiment.
	grid := `{"name":"flood","dataset":"tiny","epochs":1,"axes":{"system":["pyg+"],"batch_size":[64,128,256,512,1024],` +
		`"fanout":["2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21"],"repeat":100}}`
	code, body = p.post("/api/experiments", map[string]string{"Content-Type": "application/json"}, []byte(grid))
	id := jsonID(body)
	if code != 201 || id == "" {
		t.Fatalf("create the 10,000-run experiment: %d %s", code, body)
	}
	p.post("/api/experiments/"+id+"/cancel", nil, nil)
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 14; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := p.status("/experiments/" + id + "/bundle.zip")
			mu.Lock()
			counts[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	p.report("bundle flood", fmt.Sprintf("14 concurrent bundle.zip of 10,000 runs: %d written, %d refused with 503", counts[200], counts[503]))

	// 4b. Page flood: 14 concurrent GET of the 10,000-run experiment's
	// page (7.65 MB each).
	counts = map[int]int{}
	for i := 0; i < 14; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := p.status("/experiments/" + id)
			mu.Lock()
			counts[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	p.report("page flood", fmt.Sprintf("14 concurrent pages of 10,000 runs: %d written, %d refused with 503", counts[200], counts[503]))
	if counts[200] == 0 {
		t.Error("no page of the flood was written")
	}

	// 5. Password guessing: 2,000 wrong tokens.
	counts = map[int]int{}
	for i := 0; i < 2000; i++ {
		counts[p.statusWith("/api/csrf", fmt.Sprintf("Bearer guess-%05d-xxxxxxxxxxxx", i))]++
	}
	p.report("login flood", fmt.Sprintf("2,000 wrong tokens: %d answered 401, %d answered 429 (backing off)", counts[401], counts[429]))
	if counts[429] == 0 {
		t.Error("no back-off after 2,000 wrong tokens")
	}

	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("server exit: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("server did not stop on SIGINT")
	}
	peak, _ := g.Peak()
	kills, _ := g.OOMKills()
	fmt.Printf("probe: server peak memory %d MiB of %d MiB; OOM kills %d\n", peak>>20, limit>>20, kills)
	capLogged := 0
	for _, line := range strings.Split(logBuf.String(), "\n") {
		if strings.Contains(line, "over the cap of") {
			capLogged++
		}
		if strings.Contains(line, "failed logins") || strings.Contains(line, "over the caps") || strings.Contains(line, "accept:") {
			fmt.Printf("probe: server log: %s\n", line)
		}
	}
	fmt.Printf("probe: server log: %d lines about connections over the cap (at most one a second)\n", capLogged)
	if kills != 0 {
		t.Errorf("%d OOM kills in the server's group", kills)
	}
}

type prober struct {
	t      *testing.T
	addr   string
	token  string
	cookie string // the CSRF cookie and token POSTs repeat
	csrf   string
	exited chan error
	g      *cgroup.Group
}

// report checks the server is alive and answering, and prints a line.
func (p *prober) report(what, detail string) {
	p.t.Helper()
	select {
	case err := <-p.exited:
		p.t.Fatalf("%s: the server died: %v", what, err)
	default:
	}
	var code int
	for i := 0; i < 50; i++ { // connections of the attack are still closing
		if code = p.status("/api/csrf"); code == 200 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	use, _ := p.g.Usage()
	alive := "alive and answering (200)"
	if code != 200 {
		alive = fmt.Sprintf("alive but answered %d", code)
		p.t.Errorf("%s: after the attack GET /api/csrf answered %d", what, code)
	}
	fmt.Printf("probe: %-14s %s; %s; group memory %d MiB\n", what, detail, alive, use>>20)
}

// login fetches the CSRF cookie and token.
func (p *prober) login() {
	req, _ := http.NewRequest("GET", "http://"+p.addr+"/api/csrf", nil)
	req.Host = "localhost"
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := p.client().Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == CSRFCookie {
			p.cookie = c.Name + "=" + c.Value
		}
	}
	_, tok, _ := strings.Cut(string(b), `"token":"`)
	p.csrf, _, _ = strings.Cut(tok, `"`)
}

func (p *prober) client() *http.Client {
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}}
}

func (p *prober) statusWith(path, auth string) int {
	req, _ := http.NewRequest("GET", "http://"+p.addr+path, nil)
	req.Host = "localhost"
	req.Header.Set("Authorization", auth)
	resp, err := p.client().Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func (p *prober) status(path string) int { return p.statusWith(path, "Bearer "+p.token) }

func (p *prober) post(path string, hdr map[string]string, body []byte) (int, string) {
	req, _ := http.NewRequest("POST", "http://"+p.addr+path, bytes.NewReader(body))
	req.Host = "localhost"
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Cookie", p.cookie)
	req.Header.Set(CSRFHeader, p.csrf)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := p.client().Do(req)
	if err != nil {
		return 0, err.Error()
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// dialMany opens up to n connections (stopping at the first that fails),
// running first on each.
func (p *prober) dialMany(n int, first func(net.Conn)) []net.Conn {
	var out []net.Conn
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", p.addr, 2*time.Second)
		if err != nil {
			var errno syscall.Errno
			if errors.As(err, &errno) {
				fmt.Printf("probe: dial %d: %v\n", i, err)
			}
			break
		}
		if first != nil {
			first(c)
		}
		out = append(out, c)
	}
	return out
}

// waitDone waits for wg at most d; it reports whether wg was done.
func waitDone(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

func closeAll(cs []net.Conn) {
	for _, c := range cs {
		c.Close()
	}
}

// codeText is an HTTP status, or what no status means.
func codeText(code int) string {
	if code == 0 {
		return "nothing (the connection was closed over the cap)"
	}
	return fmt.Sprint(code)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

// jsonID finds "id":N in a JSON answer.
func jsonID(body string) string {
	sc := bufio.NewScanner(strings.NewReader(strings.ReplaceAll(body, ",", "\n")))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimLeft(sc.Text(), "{ "), `"id":`); ok {
			return strings.Trim(v, " }")
		}
	}
	return ""
}
