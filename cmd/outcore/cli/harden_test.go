package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"outcore/engine/dataset"
)

// TestTrainMemLimitOverflowIsAnError: --mem-limit 1e30 used to wrap to a
// negative limit and train without one (exit 0).
func TestTrainMemLimitOverflowIsAnError(t *testing.T) {
	for _, lim := range []string{"1e30", "9223372036854775807", "1e400", "2000TiB"} {
		err := Run(context.Background(), discard, []string{"train", "--dataset", "nosuch", "--data-dir", t.TempDir(), "--mem-limit", lim, "--epochs", "1"})
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "largest memory limit, 1 PiB") {
			t.Errorf("--mem-limit %s: %v", lim, err)
		}
	}
}

// TestServeOffLoopbackNeedsAuth: binding another address than loopback
// without --auth-file is refused unless --insecure; a readable auth file
// and bad host names are usage errors.
func TestServeOffLoopbackNeedsAuth(t *testing.T) {
	dir := t.TempDir()
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:8080", ":8080"} {
		err := Run(context.Background(), discard, []string{"serve", "--addr", addr, "--data-dir", dir})
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "--auth-file") || !strings.Contains(err.Error(), "--insecure") {
			t.Errorf("serve on %s without auth: %v", addr, err)
		}
	}
	p := filepath.Join(dir, "auth")
	os.WriteFile(p, []byte("alice:correct horse\n"), 0o644)
	if err := Run(context.Background(), discard, []string{"serve", "--addr", "0.0.0.0:0", "--data-dir", dir, "--auth-file", p}); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable auth file: %v", err)
	}
	if err := Run(context.Background(), discard, []string{"serve", "--allowed-hosts", "http://x.example/"}); !errors.Is(err, ErrUsage) {
		t.Errorf("bad --allowed-hosts: %v", err)
	}
	for _, bad := range [][]string{{"--trusted-proxies", "proxy.example"}, {"--trusted-proxies", "10.0.0.0/99"}, {"--max-conns", "-1"}} {
		if err := Run(context.Background(), discard, append([]string{"serve"}, bad...)); !errors.Is(err, ErrUsage) {
			t.Errorf("serve %v: %v", bad, err)
		}
	}
	if h, err := splitHosts(" Lab.Example , [::1],10.0.0.5,"); err != nil || !slices.Equal(h, []string{"lab.example", "::1", "10.0.0.5"}) {
		t.Errorf("splitHosts: %v %v", h, err)
	}
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "localhost:1": true, "[::1]:2": true, "0.0.0.0:1": false, ":80": false, "10.1.2.3:4": false} {
		if got := isLoopbackAddr(addr); got != want {
			t.Errorf("isLoopbackAddr(%s) = %v", addr, got)
		}
	}
	name, _ := os.Hostname()
	if hs := defaultHosts("0.0.0.0"); name != "" && !slices.Contains(hs, strings.ToLower(name)) {
		t.Errorf("default hosts for 0.0.0.0: %v (host name %s)", hs, name)
	}
}

// TestServeWithAuthFile: a server started with --auth-file answers 401
// without a credential, and serves with one; the Host check stays on.
func TestServeWithAuthFile(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := dataset.Preset("tiny")
	if _, err := dataset.GenerateWith(context.Background(), dataset.DatasetsDir(dir), "tiny", cfg, dataset.GenOptions{Preset: "tiny", NoIndptr: true}); err != nil {
		t.Fatal(err)
	}
	authPath := filepath.Join(dir, "auth")
	os.WriteFile(authPath, []byte("token 0123456789abcdef0123\n"), 0o600)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var logBuf lockedBuffer
	go func() {
		done <- Run(ctx, Streams{Out: io.Discard, Err: &logBuf}, []string{"serve", "--addr", addr, "--data-dir", dir, "--auth-file", authPath, "--allowed-hosts", "lab.example"})
	}()
	get := func(host, auth string) int {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/experiments", nil)
		if host != "" {
			req.Host = host
		}
		// A DNS rebinding's forwarded name does not count (no --trusted-proxies).
		req.Header.Set("X-Forwarded-Host", "lab.example")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for dl := time.Now().Add(30 * time.Second); get("", "") == 0; {
		if time.Now().After(dl) {
			t.Fatal("the dashboard did not come up")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, tc := range []struct {
		host, auth string
		want       int
	}{
		{"", "", 401},
		{"", "Bearer 0123456789abcdef0123", 200},
		{"lab.example", "Bearer 0123456789abcdef0123", 200},
		{"evil.example", "Bearer 0123456789abcdef0123", 421},
		{"", "Bearer wrong-token-0123456789", 401},
	} {
		if got := get(tc.host, tc.auth); got != tc.want {
			t.Errorf("Host %q auth %q: %d, want %d", tc.host, tc.auth, got, tc.want)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	if !strings.Contains(logBuf.String(), "refused 1 failed logins") {
		t.Errorf("the stop does not report the failed login: %q", logBuf.String())
	}
}

// lockedBuffer is a log the server writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
