package cli

import (
	"context"
	"encoding/csv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// bench sync measures both modes at every count on a real file: each
// point is a row of the table, and the CSV holds every run with reads
// that finished and a mean latency of N / IOPS.
func TestBenchSyncMeasuresBothModes(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "b1.csv")
	var out strings.Builder
	c := benchSyncConfig{dataDir: dir, size: "4MiB", bs: 512, counts: "1,4", seconds: 0.2, runs: 2, fio: "off", csvPath: csvPath}
	if err := benchSync(context.Background(), c, &out); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"\nsync 1 |", "\nsync 4 |", "\nuring 1 |", "\nuring 4 |"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("no row %q in\n%s", strings.TrimSpace(row), out.String())
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "bench-sync.bin")); err != nil || fi.Size() != 4<<20 {
		t.Fatalf("probe file: %v, %v", fi, err)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+2*2*2 {
		t.Fatalf("%d CSV rows, want a header and 8 runs (2 modes × 2 counts × 2 runs): %v", len(rows), rows)
	}
	for _, r := range rows[1:] {
		n, _ := strconv.Atoi(r[2])
		iops, _ := strconv.ParseFloat(r[5], 64)
		lat, _ := strconv.ParseFloat(r[7], 64)
		if r[0] != "ours" || iops <= 0 || lat <= 0 {
			t.Errorf("run %v: want ours with reads and a latency", r)
			continue
		}
		if want := float64(n) / iops * 1e6; lat < want*0.99 || lat > want*1.01 {
			t.Errorf("run %v: mean latency %v µs, want N / IOPS = %v", r, lat, want)
		}
	}
}

// With fio installed, each point is repeated with fio's psync jobs and
// its io_uring depth.
func TestBenchSyncWithFio(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio not installed")
	}
	dir := t.TempDir()
	var out strings.Builder
	c := benchSyncConfig{dataDir: dir, size: "4MiB", bs: 4096, counts: "2", seconds: 0.3, runs: 1, fio: "auto"}
	if err := benchSync(context.Background(), c, &out); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "sync 2 |") || strings.HasPrefix(line, "uring 2 |") {
			if parts := strings.Split(line, "|"); len(parts) != 3 || strings.Contains(parts[2], "–") {
				t.Errorf("row %q: want ours and fio", line)
			}
		}
	}
}

// A file named by --file is read as it is, never written, whatever
// --size says: it may be a dataset's features.
func TestBenchSyncNeverWritesTheNamedFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "features.bin")
	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	if err := os.WriteFile(file, want, 0o644); err != nil {
		t.Fatal(err)
	}
	c := benchSyncConfig{dataDir: dir, file: file, size: "30GB", bs: 512, counts: "2", seconds: 0.1, runs: 1, fio: "off"}
	if err := benchSync(context.Background(), c, io.Discard); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil || len(got) != len(want) || string(got) != string(want) {
		t.Fatalf("the named file changed: %d bytes (%v), want its %d bytes as they were", len(got), err, len(want))
	}
	if _, err := os.Stat(filepath.Join(dir, "bench-sync.bin")); !os.IsNotExist(err) {
		t.Errorf("the default probe file was written beside --file: %v", err)
	}
	c.file = filepath.Join(dir, "absent.bin")
	if err := benchSync(context.Background(), c, io.Discard); err == nil || !strings.Contains(err.Error(), "--file") {
		t.Errorf("an absent --file: %v", err)
	}
	if _, err := os.Stat(c.file); !os.IsNotExist(err) {
		t.Errorf("an absent --file was created: %v", err)
	}
}

// Bad settings are refused, each naming its flag; a file larger than the
// free space is refused before anything is written.
func TestBenchSyncRefusesBadSettings(t *testing.T) {
	ok := benchSyncConfig{dataDir: t.TempDir(), size: "4MiB", bs: 512, counts: "1", seconds: 1, runs: 1, fio: "off"}
	for _, c := range []struct {
		set  func(*benchSyncConfig)
		want string
	}{
		{func(c *benchSyncConfig) { c.counts = "0" }, "--counts"},
		{func(c *benchSyncConfig) { c.counts = "9999" }, "--counts"},
		{func(c *benchSyncConfig) { c.bs = 100 }, "--bs"},
		{func(c *benchSyncConfig) { c.seconds = 0 }, "--seconds"},
		{func(c *benchSyncConfig) { c.runs = 0 }, "--runs"},
		{func(c *benchSyncConfig) { c.fio = "yes" }, "--fio"},
		{func(c *benchSyncConfig) { c.size = "1KiB" }, "--size"},
		{func(c *benchSyncConfig) { c.size = "1000TB" }, "free on its file system"},
	} {
		cfg := ok
		c.set(&cfg)
		err := benchSync(context.Background(), cfg, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error naming %q, got %v", c.want, err)
		}
	}
	if _, err := os.Stat(filepath.Join(ok.dataDir, "bench-sync.bin")); !os.IsNotExist(err) {
		t.Errorf("a refused run wrote the probe file: %v", err)
	}
}

// fio's group-reported job: its IOPS and mean latency in µs; a job with
// no reads is an error.
func TestParseFioLatency(t *testing.T) {
	iops, lat, err := parseFioLatency([]byte(`{"jobs": [{"error": 0, "read": {"iops": 20000.5, "lat_ns": {"mean": 1600000.0}}}]}`))
	if err != nil || iops != 20000.5 || lat != 1600 {
		t.Fatalf("parseFioLatency = %v, %v, %v; want 20000.5 IOPS at 1600 µs", iops, lat, err)
	}
	if _, _, err := parseFioLatency([]byte(`{"jobs": [{"error": 0, "read": {"iops": 0, "lat_ns": {"mean": 0}}}]}`)); err == nil {
		t.Fatal("a job without reads was accepted")
	}
}
