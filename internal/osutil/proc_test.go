package osutil

import (
	"errors"
	"io/fs"
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

func TestParseTaskState(t *testing.T) {
	for _, c := range []struct {
		line string
		want byte
	}{
		{"1234 (outcore) S 1 1234 1234 0 -1 4194560", 'S'},
		{"1234 (my (odd) name) T 1 1234", 'T'},
		{"77 (a) b) D 1", 'D'},
		{"9 (z) Z", 'Z'},
	} {
		got, err := ParseTaskState([]byte(c.line))
		if err != nil || got != c.want {
			t.Errorf("%q: %c %v, want %c", c.line, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "1234 (outcore)", "1234 outcore S", "1 (x)S"} {
		if _, err := ParseTaskState([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestTaskStates reads the states of a process's threads: this process's
// own (the thread reading runs: R), and a /proc directory written as the
// kernel writes it, of a process one of whose threads waits in
// uninterruptible I/O.
func TestTaskStates(t *testing.T) {
	p, threads, err := TaskStates("/proc/self")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if !strings.ContainsRune("RS", rune(p)) || !strings.ContainsRune(string(threads), 'R') {
		t.Fatalf("this process: %c, threads %q", p, threads)
	}
	dir := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stat", "42 (outcore) S 1 42 42 0 -1\n")
	write("task/42/stat", "42 (outcore) S 1 42 42 0 -1\n")
	write("task/43/stat", "43 (outcore) D 1 42 42 0 -1\n")
	os.MkdirAll(filepath.Join(dir, "task", "44"), 0o755) // a thread that ended
	p, threads, err = TaskStates(dir)
	if err != nil || p != 'S' || string(threads) != "SD" {
		t.Fatalf("got %c %q %v, want S and threads SD", p, threads, err)
	}
	if _, _, err := TaskStates(filepath.Join(dir, "gone")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a process that is gone: %v", err)
	}
}
