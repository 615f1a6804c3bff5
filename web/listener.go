package web

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// GuardedListener is the dashboard's listener: it keeps accepting whatever
// goes wrong short of being closed, and it caps the open connections, in
// all and per client.
//
//   - An accept error (out of file descriptors, out of memory, a connection
//     reset before it was taken) is logged, at most once a second, and
//     retried after a back-off of 5 ms doubling to 1 s; it never stops the
//     server. When descriptors run out it sheds the oldest pending
//     connection through a descriptor it keeps in reserve, so the kernel's
//     queue cannot fill with connections it can never take.
//   - A client is an IPv4 address, or an IPv6 /64 (clientKey). When a new
//     connection would pass MaxConns or its client's MaxConnsPerClient, an
//     open one that serves no request is closed for it (shed): of the
//     client with the most connections (of the same client, for its own
//     cap), idle ones before long answers (event streams, downloads),
//     unauthenticated before authenticated, the longest idle first. A
//     connection whose request is being served is never shed. Only when
//     none may go is the new one answered 503 and closed at once, so it
//     holds no descriptor. So a party that holds connections, from
//     however many addresses, and reopens them as they are closed, makes
//     room for everyone else's requests rather than taking it.
type GuardedListener struct {
	net.Listener
	max, perClient int
	log            *log.Logger
	// Exempt, when set, names addresses the per-client cap does not apply
	// to: the trusted reverse proxies, through which every client comes.
	Exempt func(net.IP) bool

	mu      sync.Mutex
	open    int
	byKey   map[string]int
	conns   map[*guardedConn]struct{}
	reserve *os.File

	refused  atomic.Int64 // connections closed at once (over a cap)
	sheds    atomic.Int64 // open connections closed for new ones
	failures atomic.Int64 // accept errors survived
	lastLog  time.Time
}

// NewGuardedListener wraps ln. maxConns and perClient <= 0 mean no cap.
func NewGuardedListener(ln net.Listener, maxConns, perClient int, logger *log.Logger) *GuardedListener {
	g := &GuardedListener{Listener: ln, max: maxConns, perClient: perClient, log: logger,
		byKey: map[string]int{}, conns: map[*guardedConn]struct{}{}}
	g.reserve, _ = os.Open(os.DevNull)
	return g
}

// Open is the number of connections open now.
func (g *GuardedListener) Open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// Refused is the number of connections closed at once for being over a cap.
func (g *GuardedListener) Refused() int64 { return g.refused.Load() }

// Shed is the number of open connections that serve no request closed to
// make room for new ones.
func (g *GuardedListener) Shed() int64 { return g.sheds.Load() }

// AcceptErrors is the number of accept errors survived.
func (g *GuardedListener) AcceptErrors() int64 { return g.failures.Load() }

// overCap answers a connection that is over a cap.
var overCap = func() []byte {
	msg := "too many open connections to this server; try again in a few seconds\n"
	return []byte(fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"+
		"Connection: close\r\nRetry-After: 5\r\nX-Content-Type-Options: nosniff\r\nContent-Length: %d\r\n\r\n%s", len(msg), msg))
}()

// Accept returns the next connection within the caps.
func (g *GuardedListener) Accept() (net.Conn, error) {
	delay := time.Duration(0)
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			g.failures.Add(1)
			if delay == 0 {
				delay = 5 * time.Millisecond
			} else if delay *= 2; delay > time.Second {
				delay = time.Second
			}
			shed := false
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				shed = g.shedPending()
			}
			g.logf("accept: %v (%d connections open; shed one: %v); retrying in %v", err, g.Open(), shed, delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		ip := connIP(c)
		gc := &guardedConn{Conn: c, g: g, ip: ip, key: clientKey(net.ParseIP(ip)), since: time.Now()}
		victim, ok := g.admit(gc, g.Exempt != nil && g.Exempt(net.ParseIP(ip)))
		if !ok {
			g.refused.Add(1)
			_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = c.Write(overCap)
			_ = c.Close()
			g.logf("refused a connection from %s: over the cap of %d connections (%d per client), and every open one is serving a request", ip, g.max, g.perClient)
			continue
		}
		if victim != nil {
			g.sheds.Add(1)
			victim.shedNow()
			g.logf("closed an idle connection of %s for a new one of %s: over the cap of %d connections (%d per client)", victim.key, gc.key, g.max, g.perClient)
		}
		return gc, nil
	}
}

// shedPending frees the reserve descriptor, takes one pending connection with it
// and closes that at once, then takes the reserve back.
func (g *GuardedListener) shedPending() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reserve == nil {
		g.reserve, _ = os.Open(os.DevNull)
		return false
	}
	g.reserve.Close()
	g.reserve = nil
	shed := false
	if tl, ok := g.Listener.(*net.TCPListener); ok {
		_ = tl.SetDeadline(time.Now().Add(time.Millisecond))
		if c, err := tl.Accept(); err == nil {
			c.Close()
			shed = true
		}
		_ = tl.SetDeadline(time.Time{})
	}
	g.reserve, _ = os.Open(os.DevNull)
	return shed
}

// admit counts gc in when it is within the caps, or when an open
// connection may be shed for it (victim, already counted out: the caller
// closes it).
func (g *GuardedListener) admit(gc *guardedConn, exempt bool) (victim *guardedConn, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case !exempt && g.perClient > 0 && g.byKey[gc.key] >= g.perClient:
		victim = g.victim(gc.key)
	case g.max > 0 && g.open >= g.max:
		victim = g.victim("")
	}
	if victim == nil && ((!exempt && g.perClient > 0 && g.byKey[gc.key] >= g.perClient) || (g.max > 0 && g.open >= g.max)) {
		return nil, false
	}
	if victim != nil {
		g.forget(victim) // one out (of its client's count and the total), one in
	}
	g.open++
	g.byKey[gc.key]++
	g.conns[gc] = struct{}{}
	return victim, true
}

// victim picks the open connection to shed (g.mu held): one serving no
// request, of client key (any client for ""), from the client holding the
// most connections, idle before long answers, unauthenticated before
// authenticated, the longest in its state first. nil when none may go.
func (g *GuardedListener) victim(key string) *guardedConn {
	var best *guardedConn
	var bestRank [4]int64
	for c := range g.conns {
		if key != "" && c.key != key {
			continue
		}
		st, authed, since := c.snapshot()
		if st == connBusy {
			continue
		}
		r := [4]int64{0, 0, -int64(g.byKey[c.key]), since.UnixNano()}
		if st == connStream {
			r[0] = 1
		}
		if authed {
			r[1] = 1
		}
		if best == nil || less(r, bestRank) {
			best, bestRank = c, r
		}
	}
	return best
}

func less(a, b [4]int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// forget counts a connection out (g.mu held), once.
func (g *GuardedListener) forget(c *guardedConn) {
	if _, ok := g.conns[c]; !ok {
		return
	}
	delete(g.conns, c)
	g.open--
	if g.byKey[c.key]--; g.byKey[c.key] <= 0 {
		delete(g.byKey, c.key)
	}
}

func (g *GuardedListener) release(c *guardedConn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.forget(c)
}

// Close closes the listener and its reserve descriptor.
func (g *GuardedListener) Close() error {
	g.mu.Lock()
	if g.reserve != nil {
		g.reserve.Close()
		g.reserve = nil
	}
	g.mu.Unlock()
	return g.Listener.Close()
}

// logf logs at most once a second (an attack must not flood the log).
func (g *GuardedListener) logf(format string, a ...any) {
	g.mu.Lock()
	now := time.Now()
	quiet := now.Sub(g.lastLog) < time.Second
	if !quiet {
		g.lastLog = now
	}
	g.mu.Unlock()
	if !quiet && g.log != nil {
		g.log.Printf(format, a...)
	}
}

func connIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// clientKey is what the per-client cap counts connections by: an IPv4
// address (IPv4-mapped IPv6 too) alone, an IPv6 address by its /64, the
// least one host or site is given.
func clientKey(ip net.IP) string {
	if ip == nil {
		return "?"
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}

// A connection's state, for shedding: new or idle (no request being
// served), busy (a request read and being answered), or a long answer
// (an event stream or a download: a browser reconnects its event stream).
const (
	connIdle = iota
	connBusy
	connStream
)

// guardedConn gives its slot back when closed (once), and knows whether
// it serves a request now (the server tells it: Served, Idle) and
// whether its client has authenticated (Authenticated).
type guardedConn struct {
	net.Conn
	g    *GuardedListener
	ip   string
	key  string
	once sync.Once

	mu      sync.Mutex
	state   int
	authed  bool
	since   time.Time   // in this state since
	wasShed atomic.Bool // closed for a new connection: reads end
}

// Served marks the connection as serving a request (a long answer when
// stream), which keeps it from being shed (a stream only after idle ones).
func (c *guardedConn) Served(stream bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state, c.since = connBusy, time.Now()
	if stream {
		c.state = connStream
	}
}

// Idle marks the connection as waiting for its next request.
func (c *guardedConn) Idle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state, c.since = connIdle, time.Now()
}

// Authenticated marks the connection's client as having shown a
// credential: it is shed after those that have not.
func (c *guardedConn) Authenticated() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.authed = true
}

func (c *guardedConn) snapshot() (state int, authed bool, since time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state, c.authed, c.since
}

// shedNow ends a connection shed for a new one: an idle one reads the
// end of its input (the server closes it as if the client had, quietly),
// a long answer is cut (its writes fail).
func (c *guardedConn) shedNow() {
	st, _, _ := c.snapshot()
	if st == connStream {
		_ = c.Conn.Close()
		return
	}
	c.wasShed.Store(true)
	_ = c.Conn.SetReadDeadline(time.Now())
}

// Read reads, or says the input ended once the connection is shed.
func (c *guardedConn) Read(p []byte) (int, error) {
	if c.wasShed.Load() {
		return 0, io.EOF
	}
	n, err := c.Conn.Read(p)
	if err != nil && c.wasShed.Load() {
		return n, io.EOF
	}
	return n, err
}

// SetReadDeadline keeps a shed connection's deadline in the past.
func (c *guardedConn) SetReadDeadline(t time.Time) error {
	if c.wasShed.Load() {
		return nil
	}
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline keeps a shed connection's read deadline in the past.
func (c *guardedConn) SetDeadline(t time.Time) error {
	if c.wasShed.Load() {
		return c.Conn.SetWriteDeadline(t)
	}
	return c.Conn.SetDeadline(t)
}

func (c *guardedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.g.release(c) })
	return err
}
