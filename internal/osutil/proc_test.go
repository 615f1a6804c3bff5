package osutil

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseKeyed(t *testing.T) {
	status, io := fixture(t, "status.txt"), fixture(t, "io.txt")
	tests := []struct {
		name  string
		text  []byte
		key   string
		mul   int64
		want  int64
		error string
	}{
		{"rss", status, "VmRSS:", 1024, 1720 << 10, ""},
		{"hwm", status, "VmHWM:", 1024, 1720 << 10, ""},
		{"anon", status, "RssAnon:", 1024, 112 << 10, ""},
		{"read_bytes", io, "read_bytes:", 1, 123456789, ""},
		{"missing", status, "Nope:", 1, 0, `no "Nope:" line`},
		{"no value", []byte("VmRSS:\n"), "VmRSS:", 1024, 0, "without a value"},
		{"not a number", []byte("VmRSS: x kB\n"), "VmRSS:", 1024, 0, "invalid syntax"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseKeyed(tc.text, tc.key, tc.mul)
			if tc.error != "" {
				if err == nil || !strings.Contains(err.Error(), tc.error) {
					t.Fatalf("err = %v, want one containing %q", err, tc.error)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestParseProcStatCPU(t *testing.T) {
	got, err := ParseProcStatCPU(fixture(t, "pid-stat.txt"))
	if err != nil || got != 4.0 {
		t.Fatalf("got %v, %v; want 4 s (250+150 ticks)", got, err)
	}
	for _, bad := range []string{"no paren", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 a b 0"} {
		if _, err := ParseProcStatCPU([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseSystemCPU(t *testing.T) {
	total, iowait, err := ParseSystemCPU(fixture(t, "stat.txt"))
	if err != nil || total != 53399+56+14012+28746+928+0+236+64 || iowait != 928 {
		t.Fatalf("got %d %d %v", total, iowait, err)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5", "cpu 1 2 x 4 5 6"} {
		if _, _, err := ParseSystemCPU([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseInt64(t *testing.T) {
	if v, err := ParseInt64([]byte(" 4096\n")); err != nil || v != 4096 {
		t.Fatalf("got %d %v", v, err)
	}
	if _, err := ParseInt64([]byte("max\n")); err == nil {
		t.Fatal("max accepted")
	}
	p := filepath.Join(t.TempDir(), "n")
	os.WriteFile(p, []byte("77\n"), 0o644)
	if v, err := ReadInt64File(p); err != nil || v != 77 {
		t.Fatalf("ReadInt64File = %d, %v", v, err)
	}
	if _, err := ReadInt64File(p + ".missing"); err == nil || !strings.Contains(err.Error(), "n.missing") {
		t.Fatalf("missing file: %v", err)
	}
}

// TestLiveProc reads this process's own counters and checks that they
// move the way the process moves.
func TestLiveProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	rss, err := RSSBytes()
	if err != nil || rss <= 0 {
		t.Fatalf("rss %d, %v", rss, err)
	}
	if hwm, err := PeakRSSBytes(); err != nil || hwm < rss {
		t.Fatalf("peak rss %d < rss %d (%v)", hwm, rss, err)
	}
	if anon, err := AnonRSSBytes(); err != nil || anon <= 0 || anon > rss {
		t.Fatalf("anon rss %d of rss %d (%v)", anon, rss, err)
	}
	if _, err := StatusBytes("NoSuchField"); err == nil {
		t.Fatal("unknown status field accepted")
	}
	if mem, err := MemTotalBytes(); err != nil || mem < 64<<20 {
		t.Fatalf("mem total %d, %v", mem, err)
	}
	tot, iow, err := SystemCPUTimes()
	if err != nil || tot <= 0 || iow < 0 || iow > tot {
		t.Fatalf("system cpu %d %d %v", tot, iow, err)
	}
	c0, err := CPUSeconds()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(150 * time.Millisecond)
	x := 0.0
	for time.Now().Before(deadline) {
		for i := 0; i < 1000; i++ {
			x += float64(i)
		}
	}
	if c1, _ := CPUSeconds(); c1 <= c0 {
		t.Fatalf("cpu seconds did not grow: %v -> %v (x=%v)", c0, c1, x)
	}
}
