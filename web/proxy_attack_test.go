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
