package web

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Connection fairness (issue 33): one party that opens connections from
// many loopback addresses, and reopens them as the server closes them,
// must not keep everyone else out.

// dialFrom opens a connection to addr from the loopback address from.
func dialFrom(from, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 2 * time.Second}
	return d.Dial("tcp", addr)
}

// holdIdle keeps n idle connections open from address from, reopening
// each (at most reopen times) when the server closes it, until stop.
func holdIdle(wg *sync.WaitGroup, stop <-chan struct{}, from, addr string, n, reopen int, opened *atomic.Int64) {
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k <= reopen; k++ {
				c, err := dialFrom(from, addr)
				if err != nil {
					return
				}
				opened.Add(1)
				closed := make(chan struct{})
				go func() {
					defer close(closed)
					io.Copy(io.Discard, c) // until the server closes it (503, shed)
				}()
				select {
				case <-stop:
					c.Close()
					<-closed
					return
				case <-closed:
					c.Close()
				}
			}
		}()
	}
}

// TestOnePartyCannotHoldEveryConnection: 18 loopback addresses hold 8 idle
// connections each (the per-client cap), 144 for a total cap of 40, and
// reopen them as the server closes them; another client is served all the
// same: idle connections are shed for new ones, from the client holding
// the most first.
func TestOnePartyCannotHoldEveryConnection(t *testing.T) {
	ls := serveAttacked(t, func(c *Config) { c.Limits.MaxConns, c.Limits.MaxConnsPerClient = 40, 8 })
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var opened atomic.Int64
	for a := 2; a < 20; a++ {
		holdIdle(&wg, stop, net.IPv4(127, 0, 0, byte(a)).String(), ls.addr, 8, 20, &opened)
	}
	defer func() { close(stop); wg.Wait() }()
	waitFor(t, 10*time.Second, "the attack to fill the server", func() bool { return ls.live.Listener().Open() >= 40 && opened.Load() >= 144 })
	for i := 0; i < 5; i++ {
		c, err := dialFrom("127.0.0.1", ls.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET /api/csrf HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Errorf("request %d of another client while the attack holds the server: %q", i, line)
		}
	}
	if open := ls.live.Listener().Open(); open > 40 {
		t.Errorf("%d connections open, over the cap of 40", open)
	}
}

// TestClientKey: the per-client cap counts an IPv4 address alone and an
// IPv6 address by its /64 (one host there has 2^64 addresses).
func TestClientKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2:a::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
		{"::1", "::1"},
	} {
		if clientKey(net.ParseIP(tc.a)) != clientKey(net.ParseIP(tc.b)) {
			t.Errorf("%s and %s counted apart: %q, %q", tc.a, tc.b, clientKey(net.ParseIP(tc.a)), clientKey(net.ParseIP(tc.b)))
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:3::1"},
		{"127.0.0.2", "127.0.0.3"},
		{"10.0.0.1", "::ffff:a00:2"},
	} {
		if clientKey(net.ParseIP(tc.a)) == clientKey(net.ParseIP(tc.b)) {
			t.Errorf("%s and %s counted as one: %q", tc.a, tc.b, clientKey(net.ParseIP(tc.a)))
		}
	}
}

// TestShedOrder: when the cap is reached a new connection sheds an idle
// one, unauthenticated before authenticated, long answers (event
// streams) after idle ones, never one whose request is being served;
// with every connection busy the new one is refused with 503.
func TestShedOrder(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := NewGuardedListener(tcp, 4, 0, nil)
	defer g.Close()
	var clients []net.Conn
	defer func() { closeAll(clients) }()
	accept := func() *guardedConn {
		t.Helper()
		c, err := net.Dial("tcp", tcp.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		s, err := g.Accept()
		if err != nil {
			t.Fatal(err)
		}
		go func() { // as the HTTP server does: read until the input ends, then close
			io.Copy(io.Discard, s)
			s.Close()
		}()
		return s.(*guardedConn)
	}
	closedByServer := func(i int) bool {
		clients[i].SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := clients[i].Read(make([]byte, 1))
		return errors.Is(err, io.EOF) || (err != nil && !isTimeout(err))
	}
	busy, authedIdle, stream, idle := accept(), accept(), accept(), accept()
	busy.Served(false)
	authedIdle.Served(false)
	authedIdle.Authenticated()
	authedIdle.Idle()
	stream.Served(true)
	_ = idle
	// Full: the next connection sheds the plain idle one (client 3).
	n4 := accept()
	n4.Served(false)
	if !closedByServer(3) {
		t.Error("the idle connection was not shed first")
	}
	// Then the authenticated idle one (client 1).
	n5 := accept()
	n5.Served(false)
	if !closedByServer(1) {
		t.Error("the authenticated idle connection was not shed second")
	}
	// Then the event stream (client 2).
	n6 := accept()
	n6.Served(false)
	if !closedByServer(2) {
		t.Error("the event stream was not shed third")
	}
	if g.Shed() != 3 || g.Open() != 4 {
		t.Errorf("shed %d, open %d; want 3 shed, 4 open", g.Shed(), g.Open())
	}
	// All busy: the next one is refused.
	c, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	clients = append(clients, c)
	go g.Accept()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, _ := io.ReadAll(c); !strings.HasPrefix(string(b), "HTTP/1.1 503") {
		t.Errorf("with every connection busy: %q", b)
	}
	if closedByServer(0) {
		t.Error("a busy connection was shed")
	}
}
