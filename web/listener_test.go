package web

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
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

// TestServerSurvivesDescriptorExhaustion: connections use up every file
// descriptor the server's process may open; the server's accept fails
// with EMFILE, logs it and goes on, and once the connections go it
// answers again. (~20,000 idle connections stopped the listener for good
// before.) The client ends live in a child process (the test binary as a
// dialer, holdConnections), so only the server's own descriptors count
// against the lowered limit: with both ends in one process, whichever
// took the last descriptor decided whether the server ever saw EMFILE.
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
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	// The dialer starts before the limit drops (its pipes are opened
	// under the old one) and dials when told to.
	dialer := exec.Command(exe, "-test.run=^$")
	dialer.Env = append(os.Environ(), dialerEnv+"="+ls.addr)
	in, err := dialer.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := dialer.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	dialer.Stderr = os.Stderr
	if err := dialer.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	stopDialer := func() {
		in.Close()
		dialer.Process.Kill()
		dialer.Wait()
	}
	defer stopDialer()
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("dialer did not start: %q", lines.Text())
	}
	low := old
	low.Cur = uint64(len(fds) + 120)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	if _, err := io.WriteString(in, "dial\n"); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() {
		t.Fatal("dialer reported nothing")
	}
	t.Logf("dialer: %s", lines.Text())
	waitFor(t, 20*time.Second, "EMFILE logged", func() bool {
		return ls.live.Listener().AcceptErrors() > 0 && strings.Contains(ls.log.String(), "too many open files")
	})
	stopDialer()
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	waitFor(t, 20*time.Second, "answers after the exhaustion", ls.answers)
}

// dialerEnv names the address the test binary, run as a child, dials.
const dialerEnv = "OUTCORE_WEB_TEST_DIAL"

// holdConnections is the test binary run as TestServerSurvivesDescriptor-
// Exhaustion's dialer: it says "ready", waits for a line, opens up to 600
// connections to addr (stopping at the first that fails), says how many,
// and holds them until its input closes.
func holdConnections(addr string) {
	fmt.Println("ready")
	r := bufio.NewReader(os.Stdin)
	if _, err := r.ReadString('\n'); err != nil {
		os.Exit(1)
	}
	var conns []net.Conn
	var last error
	for i := 0; i < 600; i++ {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			last = err
			break
		}
		conns = append(conns, c)
	}
	fmt.Printf("%d connections open (stopped by: %v)\n", len(conns), last)
	io.Copy(io.Discard, r)
	for _, c := range conns {
		c.Close()
	}
	os.Exit(0)
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

// TestTrustedProxyExemptFromClientCap: a trusted proxy's connections are
// not capped per client (all clients come through it); others are.
func TestTrustedProxyExemptFromClientCap(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		tcp, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		g := NewGuardedListener(tcp, 100, 2, nil)
		if trusted {
			p, _ := ParseProxies([]string{"127.0.0.0/8"})
			g.Exempt = p.Trusts
		}
		var accepted []net.Conn
		done := make(chan struct{})
		go func() {
			defer close(done)
			for len(accepted) < 3 {
				c, err := g.Accept()
				if err != nil {
					return
				}
				accepted = append(accepted, c)
			}
		}()
		var clients []net.Conn
		for i := 0; i < 3; i++ {
			c, err := net.Dial("tcp", tcp.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, c)
		}
		select {
		case <-done:
		case <-time.After(time.Second):
		}
		g.Close()
		<-done
		// Over the per-client cap the third sheds the first (idle).
		if want := map[bool]int{false: 2, true: 3}[trusted]; g.Open() != want || int(g.Shed()) != 3-want {
			t.Errorf("trusted=%v: %d open, %d shed", trusted, g.Open(), g.Shed())
		}
		for _, c := range append(accepted, clients...) {
			c.Close()
		}
	}
}

// TestHTTPLogIsRateLimited: a burst of HTTP parser messages gives one log
// line; the next one counts those left out.
func TestHTTPLogIsRateLimited(t *testing.T) {
	lb := &syncBuf{}
	f := &fasthttpLogger{l: log.New(lb, "", 0)}
	for i := 0; i < 100; i++ {
		f.Printf("bad request %d", i)
	}
	if n := strings.Count(lb.String(), "\n"); n != 1 || !strings.Contains(lb.String(), "bad request 0 (0 similar lines left out)") {
		t.Fatalf("burst logged as %q", lb.String())
	}
	f.last = time.Now().Add(-2 * time.Second)
	f.Printf("bad request %d", 100)
	if !strings.Contains(lb.String(), "bad request 100 (99 similar lines left out)") {
		t.Errorf("second line %q", lb.String())
	}
}
