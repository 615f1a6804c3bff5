package web

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The attacks of issue 33 on a server behind a trusted reverse proxy,
// each against a real server on 127.0.0.1.

// statusLine sends a raw request and returns the answer's status line
// (within 5 s; "" when none came).
func (ls *liveServer) statusLine(t *testing.T, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", ls.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(c, req)
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// trustLoopbackProxy names 127.0.0.1 in TrustedProxies: the README's
// setup of a TLS proxy on the same machine.
func trustLoopbackProxy(t *testing.T) func(*Config) {
	p, err := ParseProxies([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return func(c *Config) { c.TrustedProxies = p }
}

// TestTrustedLoopbackProxyKeepsRebindingOut: with --trusted-proxies
// 127.0.0.1 and no --auth-file every local process, the victim's browser
// included, connects from the proxy's address; a rebound page sends
// Host: attacker.example:PORT with X-Forwarded-Host: localhost. The raw
// Host is judged all the same: 421 for reading pages, the API, the event
// stream and the CSRF token, and for a POST without Origin. A proxy
// forwarding an allowed Host and X-Forwarded-Host passes; one forwarding
// a foreign X-Forwarded-Host does not.
func TestTrustedLoopbackProxyKeepsRebindingOut(t *testing.T) {
	ls := serveAttacked(t, trustLoopbackProxy(t))
	_, port, _ := net.SplitHostPort(ls.addr)
	rebind := "Host: attacker.example:" + port + "\r\nX-Forwarded-Host: localhost\r\n"
	for _, path := range []string{"/api/experiments", "/experiments", "/datasets", "/events", "/api/csrf"} {
		if got := ls.statusLine(t, "GET "+path+" HTTP/1.1\r\n"+rebind+"Connection: close\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 421") {
			t.Errorf("rebound GET %s through the trusted proxy's address: %q", path, got)
		}
	}
	cookie, token := ls.csrf(t, nil)
	resp, body := ls.do(t, "POST", "/api/experiments", map[string]string{
		"Host": "attacker.example:" + port, "X-Forwarded-Host": "localhost", "Cookie": cookie, CSRFHeader: token, "Content-Type": "application/json"},
		`{"name":"evil","dataset":"tiny","axes":{"system":["pyg+"],"mem_limit":["none"]}}`)
	if resp.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(body, "attacker.example") {
		t.Errorf("rebound POST without Origin: %d %s", resp.StatusCode, body)
	}
	if n := experimentCount(t, ls.testEnv); n != 0 {
		t.Errorf("%d experiments created by the rebound page", n)
	}
	for _, tc := range []struct {
		host, fwd string
		want      int
	}{
		{"localhost:" + port, "localhost", 200},
		{"localhost", "", 200},
		{"localhost", "attacker.example", 421},
		{"attacker.example", "", 421},
	} {
		hdr := map[string]string{"Host": tc.host}
		if tc.fwd != "" {
			hdr["X-Forwarded-Host"] = tc.fwd
		}
		if resp, body := ls.do(t, "GET", "/api/csrf", hdr, ""); resp.StatusCode != tc.want {
			t.Errorf("Host %q, X-Forwarded-Host %q: %d %s, want %d", tc.host, tc.fwd, resp.StatusCode, body, tc.want)
		}
	}
}

// TestHostPortIsChecked: a Host whose port is no TCP port is refused
// (421) with the reason, on any path.
func TestHostPortIsChecked(t *testing.T) {
	ls := serveAttacked(t, nil)
	// fasthttp itself refuses some (400); "4" is any refusal.
	for host, want := range map[string]string{
		"localhost:99999": "421", "localhost:0": "421", "localhost:http": "4", "localhost:-1": "4",
		"localhost:": "421", "[::1]:65536": "421", "localhost:8080": "200", "[::1]:65535": "200", "127.0.0.1": "200",
	} {
		if got := ls.statusLine(t, "GET /api/csrf HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 "+want) {
			t.Errorf("Host %q: %q, want %s", host, got, want)
		}
	}
	resp, body := ls.do(t, "GET", "/experiments", map[string]string{"Host": "localhost:99999"}, "")
	if resp.StatusCode != 421 || !strings.Contains(body, "99999") || !strings.Contains(body, "port") {
		t.Errorf("Host localhost:99999: %d %s", resp.StatusCode, body)
	}
}

// withToken makes the server require testToken.
func withToken(t *testing.T) func(*Config) {
	a, err := ParseAuth([]byte("token " + testToken + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return func(c *Config) { c.Auth = a }
}

const testToken = "right-token-0123456789abcdef"

// loginCookie is the login cookie of an answer ("" when none was set).
func loginCookie(resp *http.Response) string {
	for _, c := range resp.Cookies() {
		if c.Name == LoginCookie {
			return c.Name + "=" + c.Value
		}
	}
	return ""
}

// TestLoginBackoffBehindTrustedProxy: behind a trusted proxy the client
// is X-Forwarded-For's, which whoever connects from the proxy's address
// (every local process, for a loopback proxy) chooses. Wrong tokens
// under ever new forwarded addresses meet the server-wide cap (429); a
// browser that has logged in before (its login cookie) is not locked out,
// neither by that cap nor by wrong tokens sent under its address.
func TestLoginBackoffBehindTrustedProxy(t *testing.T) {
	both := func(c *Config) { withToken(t)(c); trustLoopbackProxy(t)(c) }
	right := "Bearer " + testToken

	ls := serveAttacked(t, both)
	resp, _ := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": right, "X-Forwarded-For": "192.0.2.1"}, "")
	cookie := loginCookie(resp)
	if resp.StatusCode != 200 || cookie == "" {
		t.Fatalf("login: %d, cookie %q", resp.StatusCode, cookie)
	}
	counts := map[int]int{}
	for i := 0; i < 300; i++ {
		xff := fmt.Sprintf("198.51.%d.%d", i/250, i%250+1)
		resp, _ := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": fmt.Sprintf("Bearer guess-%05d-xxxxxxxxxxxx", i), "X-Forwarded-For": xff}, "")
		counts[resp.StatusCode]++
	}
	if counts[429] == 0 || counts[401] > maxLoginFailureBurst+5 {
		t.Errorf("300 wrong tokens under 300 forwarded addresses: %v, want at most %d answered 401 and the rest 429", counts, maxLoginFailureBurst+5)
	}
	resp, body := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": right, "X-Forwarded-For": "192.0.2.99"}, "")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "this server") {
		t.Errorf("right token without a login cookie while the server-wide cap holds: %d %s", resp.StatusCode, body)
	}
	wantSecurityHeaders(t, "429", resp)
	if resp, body := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": right, "X-Forwarded-For": "192.0.2.1", "Cookie": cookie}, ""); resp.StatusCode != 200 {
		t.Errorf("right token with the login cookie while the server-wide cap holds: %d %s", resp.StatusCode, body)
	}

	// A spoofed X-Forwarded-For locks the address, not the browser that
	// logged in from it.
	ls = serveAttacked(t, both)
	victim := "203.0.113.7"
	resp, _ = ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": right, "X-Forwarded-For": victim}, "")
	cookie = loginCookie(resp)
	var got []int
	for i := 0; i < 8; i++ {
		resp, _ := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": "Bearer wrong-token-0123456789", "X-Forwarded-For": victim}, "")
		got = append(got, resp.StatusCode)
	}
	if want := []int{401, 401, 401, 401, 401, 429, 429, 429}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("8 wrong tokens under the victim's address: %v, want %v (back-off after %d)", got, want, FreeLoginFailures)
	}
	if resp, body := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": right, "X-Forwarded-For": victim, "Cookie": cookie}, ""); resp.StatusCode != 200 {
		t.Errorf("the victim with its login cookie after the spoofed failures: %d %s", resp.StatusCode, body)
	}
	if resp, _ := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": right, "X-Forwarded-For": victim}, ""); resp.StatusCode != 429 {
		t.Errorf("the victim's address without a login cookie: %d, want 429 (it is backing off)", resp.StatusCode)
	}
	// A forged or foreign cookie is no login cookie.
	forged := LoginCookie + "=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.AAAA"
	if resp, _ := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": right, "X-Forwarded-For": victim, "Cookie": forged}, ""); resp.StatusCode != 429 {
		t.Errorf("a forged login cookie: %d, want 429", resp.StatusCode)
	}
}

// TestServerWideLoginCap: the server-wide allowance of failed logins
// (a clock the test sets): maxLoginFailureBurst failures from as many
// addresses pass, the next attempt without a login cookie waits for the
// refill, the right credential too, one with a cookie does not; one
// refill later one more may fail.
func TestServerWideLoginCap(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newLoginLimiter(nil)
	l.now = func() time.Time { return now }
	for i := 0; i < maxLoginFailureBurst; i++ {
		if d, _ := l.attempt(fmt.Sprintf("198.51.100.%d", i), false, wrongCredential); d != 0 {
			t.Fatalf("attempt %d held back %v", i, d)
		}
	}
	for _, outcome := range []int{wrongCredential, rightCredential} {
		if d, all := l.attempt("192.0.2.1", false, outcome); d != loginFailureRefill || !all {
			t.Errorf("after the burst (outcome %d): wait %v (server-wide %v), want %v", outcome, d, all, loginFailureRefill)
		}
	}
	if d, _ := l.attempt("login cookie abc", true, wrongCredential); d != 0 {
		t.Errorf("a login cookie after the burst: wait %v", d)
	}
	now = now.Add(loginFailureRefill)
	if d, _ := l.attempt("192.0.2.1", false, wrongCredential); d != 0 {
		t.Errorf("one refill later: wait %v", d)
	}
	if d, all := l.attempt("192.0.2.2", false, rightCredential); d == 0 || !all {
		t.Errorf("after the refill's failure: wait %v", d)
	}
	if wrong, blocked := l.failed.Load(), l.blocked.Load(); wrong != maxLoginFailureBurst+2 || blocked != 3 {
		t.Errorf("counted %d wrong, %d blocked", wrong, blocked)
	}
}
