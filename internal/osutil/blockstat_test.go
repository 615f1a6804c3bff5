package osutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestParseBlockStat(t *testing.T) {
	// a virtio disk's stat line (Linux 6.x: 17 fields)
	c, err := ParseBlockStat([]byte("149127208   505886 552014138 64543140    10581    32223 55146592    64170       10  2328532 64610561     4757       53   568616     1516      137     1732\n"))
	if err != nil || c != (BlockCounters{Reads: 149127208, SectorsRead: 552014138, ReadTicksMs: 64543140, IOTicksMs: 2328532}) {
		t.Fatalf("%+v, %v", c, err)
	}
	for _, bad := range []string{"", "1 2 3", "1 2 x 4 5 6 7 8 9 10 11", "1 2 3 4 5 6 7 8 9 -10 11", "-1 0 0 0 0 0 0 0 0 0 0"} {
		if _, err := ParseBlockStat([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseBlockStat(f *testing.F) {
	f.Add([]byte("1 0 8 3 0 0 0 0 0 1 3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseBlockStat(b)
		if err == nil && (c.Reads < 0 || c.SectorsRead < 0 || c.ReadTicksMs < 0 || c.IOTicksMs < 0) {
			t.Fatalf("negative counters %+v from %q", c, b)
		}
	})
}

// TestBlockCountersOfThisDisk reads the counters of the disk under a
// temporary directory and sees them grow across an O_DIRECT-free read
// that misses the page cache (a fresh file's pages are evicted first).
func TestBlockCountersOfThisDisk(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	dir := t.TempDir()
	f, err := BlockStatFile(dir)
	if err != nil {
		t.Skipf("no block device under the temporary directory: %v", err)
	}
	p := filepath.Join(dir, "x")
	if err := os.WriteFile(p, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if err := fd.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := DropCache(fd); err != nil {
		t.Skipf("cannot evict: %v", err)
	}
	before, err := ReadBlockCounters(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fd.ReadAt(make([]byte, 1<<20), 0); err != nil {
		t.Fatal(err)
	}
	after, err := ReadBlockCounters(f)
	if err != nil {
		t.Fatal(err)
	}
	if after.Reads <= before.Reads || after.SectorsRead < before.SectorsRead+8 {
		t.Errorf("reads %d → %d, sectors %d → %d: the read did not reach the disk", before.Reads, after.Reads, before.SectorsRead, after.SectorsRead)
	}
}
