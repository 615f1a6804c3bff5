package web

import (
	"errors"
	"fmt"
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
// all and per client address.
//
//   - An accept error (out of file descriptors, out of memory, a connection
//     reset before it was taken) is logged, at most once a second, and
//     retried after a back-off of 5 ms doubling to 1 s; it never stops the
//     server. When descriptors run out it sheds the oldest pending
//     connection through a descriptor it keeps in reserve, so the kernel's
//     queue cannot fill with connections it can never take.
//   - A connection beyond MaxConns or MaxConnsPerClient is answered 503
//     and closed at once, so it holds no descriptor.
type GuardedListener struct {
	net.Listener
	max, perClient int
	log            *log.Logger
	// Exempt, when set, names addresses the per-client cap does not apply
	// to: the trusted reverse proxies, through which every client comes.
	Exempt func(net.IP) bool

	mu      sync.Mutex
	open    int
	byIP    map[string]int
	reserve *os.File

	refused  atomic.Int64 // connections closed at once (over a cap)
	failures atomic.Int64 // accept errors survived
	lastLog  time.Time
}

// NewGuardedListener wraps ln. maxConns and perClient <= 0 mean no cap.
func NewGuardedListener(ln net.Listener, maxConns, perClient int, logger *log.Logger) *GuardedListener {
	g := &GuardedListener{Listener: ln, max: maxConns, perClient: perClient, log: logger, byIP: map[string]int{}}
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
				shed = g.shed()
			}
			g.logf("accept: %v (%d connections open; shed one: %v); retrying in %v", err, g.Open(), shed, delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		ip := connIP(c)
		if !g.admit(ip, g.Exempt != nil && g.Exempt(net.ParseIP(ip))) {
			g.refused.Add(1)
			_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = c.Write(overCap)
			_ = c.Close()
			g.logf("refused a connection from %s: over the cap of %d connections (%d per client)", ip, g.max, g.perClient)
			continue
		}
		return &guardedConn{Conn: c, g: g, ip: ip}, nil
	}
}

// shed frees the reserve descriptor, takes one pending connection with it
// and closes that at once, then takes the reserve back.
func (g *GuardedListener) shed() bool {
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

func (g *GuardedListener) admit(ip string, exempt bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if (g.max > 0 && g.open >= g.max) || (!exempt && g.perClient > 0 && g.byIP[ip] >= g.perClient) {
		return false
	}
	g.open++
	g.byIP[ip]++
	return true
}

func (g *GuardedListener) release(ip string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open--
	if g.byIP[ip]--; g.byIP[ip] <= 0 {
		delete(g.byIP, ip)
	}
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

// guardedConn gives its slot back when closed (once).
type guardedConn struct {
	net.Conn
	g    *GuardedListener
	ip   string
	once sync.Once
}

func (c *guardedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.g.release(c.ip) })
	return err
}
