package web

import (
	"errors"
	"log"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// flakyListener fails its first n accepts with err.
type flakyListener struct {
	net.Listener
	n   int
	err error
}

func (f *flakyListener) Accept() (net.Conn, error) {
	if f.n > 0 {
		f.n--
		return nil, f.err
	}
	return f.Listener.Accept()
}

// TestListenerSurvivesAcceptErrors: accept errors (EMFILE, ECONNABORTED)
// are logged and retried; only closing ends Accept.
func TestListenerSurvivesAcceptErrors(t *testing.T) {
	for _, e := range []error{syscall.EMFILE, syscall.ECONNABORTED, syscall.ENOMEM} {
		tcp, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lb := &syncBuf{}
		g := NewGuardedListener(&flakyListener{Listener: tcp, n: 3, err: &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", e)}}, 0, 0, log.New(lb, "", 0))
		go func() {
			if c, err := net.Dial("tcp", tcp.Addr().String()); err == nil {
				time.Sleep(time.Second)
				c.Close()
			}
		}()
		c, err := g.Accept()
		if err != nil {
			t.Fatalf("%v: Accept gave up: %v", e, err)
		}
		c.Close()
		if g.AcceptErrors() != 3 || !strings.Contains(lb.String(), e.Error()) {
			t.Errorf("%v: %d errors counted, log %q", e, g.AcceptErrors(), lb.String())
		}
		g.Close()
		if _, err := g.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v", err)
		}
	}
}

// TestServerSurvivesDescriptorExhaustion: connections (the test's own
// ends and the server's) use up every file descriptor; the server's
// accept fails with EMFILE, logs it and goes on, and once the
// connections go it answers again. (~20,000 idle connections stopped the
// listener for good before.)
func TestServerSurvivesDescriptorExhaustion(t *testing.T) {
	ls := serveAttacked(t, func(c *Config) { c.Limits.MaxConnsPerClient, c.Limits.MaxConns = 1<<20, 1<<20 })
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Skip(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	low := old
	low.Cur = uint64(len(fds) + 120)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	var conns []net.Conn
	restore := func() {
		for _, c := range conns {
			c.Close()
		}
		conns = nil
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	}
	defer restore()
	for i := 0; i < 1000; i++ {
		c, err := net.DialTimeout("tcp", ls.addr, time.Second)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	waitFor(t, 10*time.Second, "an accept error logged", func() bool { return ls.live.Listener().AcceptErrors() > 0 })
	restore()
	if !strings.Contains(ls.log.String(), "too many open files") {
		t.Errorf("EMFILE not logged: %q", ls.log.String())
	}
	waitFor(t, 10*time.Second, "answers after the exhaustion", ls.answers)
}

func TestConnCap(t *testing.T) {
	for _, tc := range []struct {
		want  int
		limit int64
		got   int
	}{{2048, 0, 2048}, {2048, 1 << 20, 2048}, {2048, 1024, 768}, {2048, 100, 16}, {10, 1024, 10}} {
		if got := ConnCap(tc.want, tc.limit); got != tc.got {
			t.Errorf("ConnCap(%d, %d) = %d, want %d", tc.want, tc.limit, got, tc.got)
		}
	}
}
