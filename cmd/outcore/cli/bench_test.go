package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"outcore/engine/storage"
)

// TestBenchIO runs `outcore bench io` briefly with each backend against a
// real file and checks the machine-readable line.
func TestBenchIO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.bin")
	if err := os.WriteFile(path, bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 300_000), 0o644); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^io=(\w+) .* rows=(\d+) iops=(\d+) mbps=([0-9.]+) p50_us=([0-9.]+) p99_us=([0-9.]+) `)
	for _, tc := range []struct{ io, extra string }{{"uring", "--batch=0"}, {"pread", "--batch=64"}, {"mmap", "--threads=2"}, {"auto", "--batch=0"}} {
		t.Run(tc.io, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := []string{"--file", path, "--row-bytes", "100", "--depth", "16", "--seconds", "0.2", "--io", tc.io, tc.extra}
			err := Run(context.Background(), Streams{Out: &out, Err: &errb}, append([]string{"bench", "io"}, args...))
			if errors.Is(err, storage.ErrDirectIOUnsupported) {
				t.Skipf("%s refuses O_DIRECT: %v", filepath.Dir(path), err)
			}
			if err != nil {
				t.Fatalf("bench io: %v (stderr %s)", err, errb.String())
			}
			m := line.FindStringSubmatch(out.String())
			if m == nil {
				t.Fatalf("output %q does not match %v", out.String(), line)
			}
			if tc.io != "auto" && m[1] != tc.io {
				t.Errorf("ran backend %s, asked for %s", m[1], tc.io)
			}
			if rows, _ := strconv.Atoi(m[2]); rows == 0 {
				t.Errorf("no rows read: %q", out.String())
			}
			if iops, _ := strconv.ParseFloat(m[3], 64); iops <= 0 {
				t.Errorf("iops %v", m[3])
			}
		})
	}
	for _, args := range [][]string{
		{},
		{"--file", path, "--row-bytes", "0"},
		{"--file", path, "--io", "spdk"},
		{"--file", path, "extra"},
	} {
		if err := Run(context.Background(), discard, append([]string{"bench", "io"}, args...)); !errors.Is(err, ErrUsage) {
			t.Errorf("bench io %q: got %v, want a usage error", args, err)
		}
	}
	if err := Run(context.Background(), discard, []string{"bench", "disk"}); !errors.Is(err, ErrUsage) {
		t.Errorf("unknown benchmark: %v", err)
	}
	err := Run(context.Background(), discard, []string{"bench", "io", "--file", filepath.Join(t.TempDir(), "none")})
	if err == nil || errors.Is(err, ErrUsage) {
		t.Errorf("missing file: %v", err)
	}
}
