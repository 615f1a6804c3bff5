package web

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The attacks of docs/SECURITY.md, each against a real server on
// 127.0.0.1 (Serve on a loopback listener), in bounded loops.

// syncBuf is a log that tests read while the server writes it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// liveServer is a dashboard served on 127.0.0.1 by Serve.
type liveServer struct {
	*testEnv
	live *Server
	addr string // 127.0.0.1:port
	log  *syncBuf
}

const testPassword = "correct horse"

// serveLive serves e's store and queue on a loopback port with cfg
// adjusted by adjust, until the test ends.
func serveAttacked(t *testing.T, adjust func(*Config)) *liveServer {
	t.Helper()
	e := newEnv(t)
	lb := &syncBuf{}
	cfg := Config{Store: e.st, Queue: e.mgr, DataDir: e.dir, CSRFKey: []byte("0123456789abcdef0123456789abcdef"),
		Log: log.New(lb, "", 0)}
	if adjust != nil {
		adjust(&cfg)
	}
	srv, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr, cancel, done := serveLoopback(t, srv)
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("server did not stop")
		}
	})
	ls := &liveServer{testEnv: e, live: srv, addr: addr, log: lb}
	ls.waitUp(t)
	return ls
}

// withAuth makes the server require alice's password.
func withAuth(t *testing.T) func(*Config) {
	a, err := ParseAuth([]byte("alice:" + testPassword + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return func(c *Config) { c.Auth = a }
}

func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// do sends one request on its own connection (no keep-alive).
func (ls *liveServer) do(t *testing.T, method, path string, hdr map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+ls.addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Close = true
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// waitUp waits until the server answers (any status).
func (ls *liveServer) waitUp(t *testing.T) {
	t.Helper()
	waitFor(t, 10*time.Second, "server answering", func() bool { return ls.answers() })
}

// answers reports whether GET /api/csrf gets any HTTP answer within 5 s.
func (ls *liveServer) answers() bool {
	c, err := net.DialTimeout("tcp", ls.addr, 2*time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET /api/csrf HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "HTTP/1.1 ")
}

// csrf gets a CSRF cookie and token from /api/csrf.
func (ls *liveServer) csrf(t *testing.T, hdr map[string]string) (cookie, token string) {
	t.Helper()
	resp, body := ls.do(t, "GET", "/api/csrf", hdr, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /api/csrf: %d %s", resp.StatusCode, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == CSRFCookie {
			cookie = c.Name + "=" + c.Value
		}
	}
	i := strings.Index(body, `"token":"`)
	if i < 0 {
		t.Fatalf("no token in %s", body)
	}
	token = body[i+9:]
	token = token[:strings.IndexByte(token, '"')]
	return cookie, token
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func wantSecurityHeaders(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	for _, h := range []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("%s: answer %d without %s", what, resp.StatusCode, h)
		}
	}
}

// TestDNSRebindingGets421: a page of another site that a DNS rebinding
// points at the server sends Host: attacker.example:PORT; X-Forwarded-Host
// naming localhost does not make it pass (no trusted proxy), for reading
// the CSRF token, creating or deleting. From a trusted proxy the forwarded
// host counts, both ways.
func TestDNSRebindingGets421(t *testing.T) {
	ls := serveAttacked(t, nil)
	_, port, _ := net.SplitHostPort(ls.addr)
	cookie, token := ls.csrf(t, nil)
	e := ls.create(`{"name":"victim","dataset":"tiny","axes":{"system":["pyg+"],"mem_limit":["none"]}}`)
	rebind := map[string]string{"Host": "attacker.example:" + port, "X-Forwarded-Host": "localhost"}
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/csrf", ""},
		{"POST", "/api/experiments", `{"name":"evil","dataset":"tiny","axes":{"system":["pyg+"],"mem_limit":["none"]}}`},
		{"POST", fmt.Sprintf("/api/experiments/%d/delete", e.ID), ""},
	} {
		resp, body := ls.do(t, tc.method, tc.path, merge(rebind, map[string]string{
			"Cookie": cookie, CSRFHeader: token, "Content-Type": "application/json"}), tc.body)
		if resp.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(body, "attacker.example") {
			t.Errorf("rebound %s %s: %d %s", tc.method, tc.path, resp.StatusCode, body)
		}
		wantSecurityHeaders(t, "421", resp)
	}
	if n := experimentCount(t, ls.testEnv); n != 1 {
		t.Errorf("%d experiments after the rebinding attempts, want 1", n)
	}

	// Behind a trusted proxy on 127.0.0.1 the forwarded host is judged
	// too, and the raw Host still is (TestTrustedLoopbackProxyKeepsRebindingOut).
	lp := serveAttacked(t, trustLoopbackProxy(t))
	if resp, _ := lp.do(t, "GET", "/api/csrf", map[string]string{"Host": "localhost", "X-Forwarded-Host": "localhost"}, ""); resp.StatusCode != 200 {
		t.Errorf("trusted proxy forwarding localhost: %d", resp.StatusCode)
	}
	if resp, _ := lp.do(t, "GET", "/api/csrf", map[string]string{"Host": "internal:1", "X-Forwarded-Host": "localhost"}, ""); resp.StatusCode != 421 {
		t.Errorf("trusted proxy sending Host internal:1: %d", resp.StatusCode)
	}
	if resp, _ := lp.do(t, "GET", "/api/csrf", map[string]string{"Host": "localhost", "X-Forwarded-Host": "attacker.example"}, ""); resp.StatusCode != 421 {
		t.Errorf("trusted proxy forwarding attacker.example: %d", resp.StatusCode)
	}
}

// TestCrossOriginChangesRefused: a state-changing request whose Origin or
// Referer is another site is refused even with a valid CSRF token; the
// dashboard's own origin passes.
func TestCrossOriginChangesRefused(t *testing.T) {
	ls := serveAttacked(t, nil)
	cookie, token := ls.csrf(t, nil)
	grid := `{"name":"o","dataset":"tiny","axes":{"system":["pyg+"],"mem_limit":["none"]}}`
	base := map[string]string{"Host": ls.addr, "Cookie": cookie, CSRFHeader: token, "Content-Type": "application/json"}
	for _, tc := range []struct {
		hdr  map[string]string
		want int
	}{
		{map[string]string{"Origin": "http://evil.example"}, 403},
		{map[string]string{"Origin": "null"}, 403},
		{map[string]string{"Origin": "http://localhost:1"}, 403},
		{map[string]string{"Referer": "http://evil.example/page"}, 403},
		{map[string]string{"Origin": "http://" + ls.addr}, 201},
		{map[string]string{"Referer": "http://" + ls.addr + "/experiments/new"}, 201},
		{map[string]string{}, 201}, // scripts send neither; the token still counts
	} {
		resp, body := ls.do(t, "POST", "/api/experiments", merge(base, tc.hdr), grid)
		if resp.StatusCode != tc.want {
			t.Errorf("%v: %d %s, want %d", tc.hdr, resp.StatusCode, body, tc.want)
		}
	}
	for _, tc := range []struct {
		from, host string
		want       bool
	}{
		{"http://localhost:8080", "localhost:8080", true},
		{"https://dash.example", "dash.example", true},
		{"http://dash.example", "dash.example", true},
		{"https://dash.example:8443", "dash.example", false},
		{"http://LOCALHOST:8080/x?y", "localhost:8080", true},
		{"http://[::1]:8080", "[::1]:8080", true},
		{"http://localhost:8081", "localhost:8080", false},
		{"http://user@localhost:8080", "localhost:8080", false},
		{"file:///etc", "localhost:8080", false},
		{"", "localhost", false},
	} {
		if got := SameOrigin(tc.from, tc.host); got != tc.want {
			t.Errorf("SameOrigin(%q, %q) = %v", tc.from, tc.host, got)
		}
	}
}

// TestDeclaredBodiesReserveNothing: 300 connections that announce a
// 4 MiB body and send 1 byte, against a server requiring a password, make
// the heap grow by far less than the 1.2 GB they announce; the server
// answers throughout and after. Bodies over the limit and compressed ones
// are refused before authentication, with the reason.
func TestDeclaredBodiesReserveNothing(t *testing.T) {
	ls := serveAttacked(t, func(c *Config) {
		withAuth(t)(c)
		c.Limits.MaxConnsPerClient = 1000
	})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 300; i++ {
		c, err := net.Dial("tcp", ls.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /api/experiments HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", 4<<20)
	}
	time.Sleep(500 * time.Millisecond)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 64<<20 {
		t.Errorf("heap grew by %d MiB for 300 announced 4 MiB bodies", grew>>20)
	}
	if !ls.answers() {
		t.Fatal("server does not answer while the bodies hang")
	}
	// A hanging request is refused once its first 8 KiB came, without
	// the rest of its body: 401.
	c := conns[0]
	c.Write(bytes.Repeat([]byte(" "), 9000))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, _ := bufio.NewReader(c).ReadString('\n'); !strings.Contains(line, " 401 ") {
		t.Errorf("announced body without a credential: %q", line)
	}

	auth := map[string]string{"Authorization": basicAuth("alice", testPassword)}
	if head := ls.raw(t, "POST /api/experiments HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5242880\r\n\r\n"+strings.Repeat(" ", 9000)); !strings.HasPrefix(head, "HTTP/1.1 413") ||
		!strings.Contains(head, "4 MiB") || !strings.Contains(head, "Content-Security-Policy") {
		t.Errorf("5 MiB body: %q", head)
	}
	bomb := gzipZeros(t, 32<<20)
	resp, body := ls.do(t, "POST", "/api/experiments", merge(auth, map[string]string{"Content-Type": "application/json", "Content-Encoding": "gzip"}), string(bomb))
	if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(body, "uncompressed") {
		t.Errorf("gzip body: %d %s", resp.StatusCode, body)
	}
	for _, enc := range []string{"deflate", "br", "gzip, identity"} {
		resp, _ = ls.do(t, "POST", "/api/experiments", merge(auth, map[string]string{"Content-Encoding": enc}), "x")
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("Content-Encoding %s: %d", enc, resp.StatusCode)
		}
	}
}

// raw sends a request as written and returns the answer (up to 64 KiB,
// within 5 s).
func (ls *liveServer) raw(t *testing.T, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", ls.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, req)
	b, _ := io.ReadAll(io.LimitReader(c, 64<<10))
	return string(b)
}

func gzipZeros(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for i := 0; i < n>>20; i++ {
		zw.Write(zeros)
	}
	zw.Close()
	return b.Bytes()
}

// TestSlowBodyIsCut: a client that sends its body a byte at a time is
// cut off at the read timeout; the server answers others meanwhile.
func TestSlowBodyIsCut(t *testing.T) {
	ls := serveAttacked(t, func(c *Config) { c.Limits.ReadTimeout = time.Second })
	cookie, token := ls.csrf(t, nil)
	c, err := net.Dial("tcp", ls.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/experiments HTTP/1.1\r\nHost: localhost\r\nCookie: %s\r\n%s: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", cookie, CSRFHeader, token)
	start := time.Now()
	closed := false
	for i := 0; i < 50 && !closed; i++ {
		if _, err := c.Write([]byte(" ")); err != nil {
			closed = true
			break
		}
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		buf := make([]byte, 512)
		if n, err := c.Read(buf); n > 0 || (err != nil && !isTimeout(err)) {
			closed = true
		}
	}
	if !closed || time.Since(start) > 4*time.Second {
		t.Errorf("slow body still open after %v", time.Since(start))
	}
	if !ls.answers() {
		t.Error("server does not answer after the slow body")
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestConnectionCaps: a connection beyond the per-client cap is taken in
// place of the client's longest idle one, which the server closes; when
// every connection serves a request it gets 503 at once (TestShedOrder).
func TestConnectionCaps(t *testing.T) {
	ls := serveAttacked(t, func(c *Config) { c.Limits.MaxConnsPerClient = 8 })
	// serveAttacked's start-up probe (answers) may still hold its
	// connection on the server's side: with it, the 8th connection below
	// would already be over the cap and shed one (CI saw 2 shed).
	waitFor(t, 5*time.Second, "the start-up probe's connection closed", func() bool { return ls.live.Listener().Open() == 0 })
	var held []net.Conn
	for i := 0; i < 8; i++ {
		c, err := net.Dial("tcp", ls.addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer closeAll(held)
	waitFor(t, 5*time.Second, "8 connections open", func() bool { return ls.live.Listener().Open() == 8 })
	shedBefore := ls.live.Listener().Shed()
	if shedBefore != 0 {
		t.Errorf("%d connections shed before the 9th", shedBefore)
	}
	if !ls.answers() {
		t.Error("the 9th connection of a client holding 8 idle ones was not served")
	}
	c := held[0] // the longest idle
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("the longest idle connection: read %d, %v; want it closed by the server", n, err)
	}
	if ls.live.Listener().Shed() != 1 || !strings.Contains(ls.log.String(), "closed an idle connection of 127.0.0.1") {
		t.Errorf("shedding not counted or logged: %d, log %q", ls.live.Listener().Shed(), ls.log.String())
	}
	if strings.Contains(ls.log.String(), "Bad Gateway") {
		t.Errorf("a shed connection logged as an error: %q", ls.log.String())
	}
}

// TestFailedLoginsBackOff: after FreeLoginFailures wrong passwords the
// client waits (429, Retry-After), even with the right password; each
// failure is logged and counted.
func TestFailedLoginsBackOff(t *testing.T) {
	ls := serveAttacked(t, withAuth(t))
	for i := 0; i < FreeLoginFailures; i++ {
		if resp, _ := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": basicAuth("alice", fmt.Sprintf("guess-%d", i))}, ""); resp.StatusCode != 401 {
			t.Fatalf("wrong password %d: %d", i, resp.StatusCode)
		} else {
			wantSecurityHeaders(t, "401", resp)
		}
	}
	for _, pass := range []string{"guess-x", testPassword} {
		resp, body := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": basicAuth("alice", pass)}, "")
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "failed logins") {
			t.Errorf("while backing off (%s): %d %q %s", pass, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	if wrong, blocked := ls.live.cfg.Auth.FailedLogins(); wrong != FreeLoginFailures || blocked != 2 {
		t.Errorf("counted %d wrong, %d blocked", wrong, blocked)
	}
	if !strings.Contains(ls.log.String(), "failed login from 127.0.0.1") {
		t.Errorf("no log line: %q", ls.log.String())
	}
	time.Sleep(LoginBackoff(FreeLoginFailures) + 100*time.Millisecond)
	if resp, _ := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": basicAuth("alice", testPassword)}, ""); resp.StatusCode != 200 {
		t.Errorf("right password after the back-off: %d", resp.StatusCode)
	}
}

func TestLoginBackoffTable(t *testing.T) {
	for n, want := range map[int]time.Duration{0: 0, 4: 0, 5: time.Second, 6: 2 * time.Second, 10: 32 * time.Second,
		13: 256 * time.Second, 14: 5 * time.Minute, 1000: 5 * time.Minute, -1: 0} {
		if got := LoginBackoff(n); got != want {
			t.Errorf("LoginBackoff(%d) = %v, want %v", n, got, want)
		}
	}
}

// TestBundleDownloadsLimited: with every bundle slot taken a download is
// refused at once with 503 and Retry-After; when a slot frees it works.
func TestBundleDownloadsLimited(t *testing.T) {
	ls := serveAttacked(t, func(c *Config) { c.Limits.MaxBundles = 1 })
	e := ls.create(`{"name":"b","dataset":"tiny","axes":{"system":["pyg+"],"mem_limit":["none"]}}`)
	path := fmt.Sprintf("/experiments/%d/bundle.zip", e.ID)
	if err := ls.live.bundles.take(); err != nil {
		t.Fatal(err)
	}
	resp, body := ls.do(t, "GET", path, nil, "")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "bundle.zip downloads are being written") {
		t.Errorf("bundle with no slot: %d %s", resp.StatusCode, body)
	}
	ls.live.bundles.release()
	if resp, body := ls.do(t, "GET", path, map[string]string{"Sec-Fetch-Site": "cross-site"}, ""); resp.StatusCode != 403 || !strings.Contains(body, "another site") {
		t.Errorf("bundle asked by another site: %d %s", resp.StatusCode, body)
	}
	for i := 0; i < 3; i++ { // each download gives its slot back
		resp, body = ls.do(t, "GET", path, nil, "")
		if resp.StatusCode != 200 || !strings.HasPrefix(body, "PK") {
			t.Errorf("bundle %d with a free slot: %d", i, resp.StatusCode)
		}
	}
}

// TestMetadataRefusesTerminalTricks: names and notes with escape
// sequences, bidi overrides or over 100 characters are refused with the
// reason; plain text passes.
func TestMetadataRefusesTerminalTricks(t *testing.T) {
	ls := serveAttacked(t, nil)
	e := ls.create(`{"name":"m","dataset":"tiny","axes":{"system":["pyg+"],"mem_limit":["none"]}}`)
	cookie, token := ls.csrf(t, nil)
	hdr := map[string]string{"Cookie": cookie, CSRFHeader: token, "Content-Type": "application/json"}
	path := fmt.Sprintf("/api/experiments/%d/meta", e.ID)
	for _, tc := range []struct {
		body string
		want int
		msg  string
	}{
		{`{"name":"red \u001b[31m alert"}`, 422, "control character"},
		{`{"name":"invoice\u202egpj.exe"}`, 422, "formatting character"},
		{`{"name":"` + strings.Repeat("n", 101) + `"}`, 422, "at most 100"},
		{`{"notes":"ring \u0007 bell"}`, 422, "control character"},
		{`{"notes":"a \u2066 isolate"}`, 422, "formatting character"},
		{`{"name":"Épreuve 2 – ok","notes":"line one\nline two\ttabbed"}`, 200, ""},
	} {
		resp, body := ls.do(t, "POST", path, hdr, tc.body)
		if resp.StatusCode != tc.want || !strings.Contains(body, tc.msg) {
			t.Errorf("%s: %d %s", tc.body, resp.StatusCode, body)
		}
	}
}

// TestDatasetJobQueueIsBounded: with the queue full, one more dataset job
// is refused (503) with the reason, and none is started.
func TestDatasetJobQueueIsBounded(t *testing.T) {
	release := make(chan struct{})
	jobHook = func(string, string) { <-release }
	ls := serveAttacked(t, func(c *Config) { c.Limits.MaxJobs = 2 })
	defer func() {
		close(release)
		ls.live.jobs.Wait()
		jobHook = nil
	}()
	cookie, token := ls.csrf(t, nil)
	hdr := map[string]string{"Cookie": cookie, CSRFHeader: token, "Content-Type": "application/x-www-form-urlencoded"}
	for i := 0; i < 3; i++ {
		resp, b := ls.do(t, "POST", "/datasets/generate", hdr, fmt.Sprintf("preset=tiny&seed=1&name=q%d", i))
		want := http.StatusSeeOther
		if i == 2 {
			want = http.StatusServiceUnavailable
		}
		if resp.StatusCode != want || (i == 2 && !strings.Contains(b, "dataset job queue full")) {
			t.Errorf("job %d: %d %s", i, resp.StatusCode, b)
		}
	}
	if n := len(ls.live.jobs.List()); n != 2 {
		t.Errorf("%d jobs registered, want 2", n)
	}
}

// TestOverlongHeadRefused: a request head over Limits.MaxHeader is
// answered 431 and its connection closed.
func TestOverlongHeadRefused(t *testing.T) {
	ls := serveAttacked(t, nil)
	head := ls.raw(t, "GET /api/csrf HTTP/1.1\r\nHost: localhost\r\nX-Pad: "+strings.Repeat("a", 10<<10)+"\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 431") {
		t.Errorf("10 KiB header: %.200q", head)
	}
	if !ls.answers() {
		t.Error("not answering after the long head")
	}
}

// TestBodiesInFlightAreBounded: on loopback without authentication the
// body bytes held at once stay within Limits.MaxBodiesInFlight: a body
// that would pass it is refused with 503 while another is being sent, and
// the budget is given back when a request ends.
func TestBodiesInFlightAreBounded(t *testing.T) {
	ls := serveAttacked(t, func(c *Config) { c.Limits.MaxBodiesInFlight = 1 << 20 })
	cookie, token := ls.csrf(t, nil)
	head := func(n int) string {
		return fmt.Sprintf("POST /api/experiments HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nCookie: %s\r\n%s: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", cookie, CSRFHeader, token, n)
	}
	// The first sends 800 KiB of a 900 KiB body and waits.
	c, err := net.Dial("tcp", ls.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, head(900<<10)+strings.Repeat(" ", 800<<10))
	waitFor(t, 5*time.Second, "the first body held", func() bool { return ls.live.bodies.used() >= 800<<10 })
	// The second would need more than what is left.
	if got := ls.raw(t, head(900<<10)+strings.Repeat(" ", 900<<10)); !strings.HasPrefix(got, "HTTP/1.1 503") || !strings.Contains(got, "request bodies already") {
		t.Errorf("second body while the first is held: %.300q", got)
	}
	// The first completes (not JSON: 400), and gives its bytes back.
	io.WriteString(c, strings.Repeat(" ", 100<<10))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, _ := bufio.NewReader(c).ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 4") {
		t.Errorf("first body: %q", line)
	}
	waitFor(t, 5*time.Second, "budget given back", func() bool { return ls.live.bodies.used() == 0 })
	if got := ls.raw(t, head(900<<10)+strings.Repeat(" ", 900<<10)); strings.HasPrefix(got, "HTTP/1.1 503") {
		t.Errorf("body after the first ended: %.200q", got)
	}
}
