package osutil

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// writeFile writes n bytes of a known pattern to a new file and syncs it,
// so that its cached pages are clean (droppable).
func writeFile(t *testing.T, dir, name string, n int) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7 + i/4096)
	}
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p, data
}

// needPageCache skips where fadvise cannot evict (tmpfs keeps its pages).
func needPageCache(t *testing.T, dir string) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type == unix.TMPFS_MAGIC {
		t.Skipf("%s is tmpfs: its pages cannot be evicted", dir)
	}
}

// resident counts the resident pages of a mapping.
func resident(t *testing.T, b []byte) int {
	t.Helper()
	vec := make([]byte, (len(b)+PageSize()-1)/PageSize())
	if err := Mincore(b, vec); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

func TestMapFile(t *testing.T) {
	dir := t.TempDir()
	p, data := writeFile(t, dir, "f", 3*PageSize()+100)
	m, err := MapFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.Path != p || !bytes.Equal(m.Data, data) {
		t.Fatalf("mapping of %s: %d bytes, equal=%v", m.Path, len(m.Data), bytes.Equal(m.Data, data))
	}
	if err := m.Close(); err != nil || m.Data != nil {
		t.Fatalf("close: %v, data %d", err, len(m.Data))
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}

	empty, _ := writeFile(t, dir, "empty", 0)
	if m, err := MapFile(empty); err != nil || m.Data != nil {
		t.Fatalf("empty file: %v, %d bytes", err, len(m.Data))
	}
	if _, err := MapFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestMapFD(t *testing.T) {
	p, data := writeFile(t, t.TempDir(), "f", 8192)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := MapFD(int(f.Fd()), 8192)
	f.Close() // the map outlives the descriptor
	if err != nil || !bytes.Equal(b, data) {
		t.Fatalf("MapFD: %v", err)
	}
	if err := Unmap(b); err != nil {
		t.Fatal(err)
	}
	if b, err := MapFD(-1, 0); b != nil || err != nil {
		t.Fatalf("size 0: %v %v", b, err)
	}
	if _, err := MapFD(-1, 4096); err == nil {
		t.Fatal("bad descriptor mapped")
	}
	if _, err := MapFD(-1, -1); err == nil {
		t.Fatal("negative size mapped")
	}
}

// TestAnonMapRelease: anonymous memory is charged when touched, returned
// by Release (reads zero afterwards) and unmapped by Unmap.
func TestAnonMapRelease(t *testing.T) {
	const n = 32 << 20
	before, _ := AnonRSSBytes()
	b, err := AnonMap(n)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != n || resident(t, b) != 0 {
		t.Fatalf("fresh map: %d bytes, %d pages resident", len(b), resident(t, b))
	}
	for i := 0; i < n; i += PageSize() {
		b[i] = 0xab
	}
	touched, _ := AnonRSSBytes()
	if touched-before < n*9/10 {
		t.Fatalf("anon rss grew by %d after touching %d bytes", touched-before, n)
	}
	if err := Release(b); err != nil {
		t.Fatal(err)
	}
	released, _ := AnonRSSBytes()
	if touched-released < n*9/10 {
		t.Fatalf("anon rss fell by %d after releasing %d bytes", touched-released, n)
	}
	if b[PageSize()] != 0 {
		t.Fatal("released page does not read as zero")
	}
	if err := Unmap(b); err != nil {
		t.Fatal(err)
	}
	if b, err := AnonMap(0); b != nil || err != nil {
		t.Fatalf("AnonMap(0) = %v, %v", b, err)
	}
	if Unmap(nil) != nil || Release(nil) != nil {
		t.Fatal("nil maps must be no-ops")
	}
}

// TestMincoreAndEviction reads files into the page cache and evicts them
// with DropFileCache, DropRange and EvictDir, checking residency through
// a mapping with Mincore. Eviction applies to pages no process has
// mapped in (the test never touches its mapping).
func TestMincoreAndEviction(t *testing.T) {
	dir := t.TempDir()
	needPageCache(t, dir)
	const pages = 64
	n := pages * PageSize()
	p, _ := writeFile(t, dir, "a", n)
	q, _ := writeFile(t, dir, "b", n)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755) // not a regular file: skipped
	cache := func(path string) {
		b, err := os.ReadFile(path)
		if err != nil || len(b) != n {
			t.Fatal(err)
		}
	}
	m, err := MapFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// The mapping is never touched: pages mapped into a process are not
	// evicted by fadvise.
	if err := Mincore(m.Data, make([]byte, 1)); err == nil {
		t.Fatal("short vector accepted")
	}

	cache(p)
	if r := resident(t, m.Data); r != pages {
		t.Fatalf("after reading: %d of %d pages resident", r, pages)
	}
	if err := DropFileCache(p); err != nil {
		t.Fatal(err)
	}
	if r := resident(t, m.Data); r != 0 {
		t.Fatalf("after DropFileCache: %d pages resident", r)
	}

	cache(p)
	f, _ := os.Open(p)
	err = DropRange(f, 0, int64(n/2))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	vec := make([]byte, pages)
	Mincore(m.Data, vec)
	for i, v := range vec {
		if want := byte(0); i >= pages/2 {
			want = 1
			if v&1 != want {
				t.Fatalf("page %d resident=%d after dropping the first half", i, v&1)
			}
		} else if v&1 != want {
			t.Fatalf("page %d resident=%d after dropping the first half", i, v&1)
		}
	}

	cache(p)
	cache(q)
	got, err := EvictDir(dir)
	if err != nil || got != 2 {
		t.Fatalf("EvictDir = %d, %v; want 2 files", got, err)
	}
	if r := resident(t, m.Data); r != 0 {
		t.Fatalf("after EvictDir: %d pages resident", r)
	}
	if _, err := EvictDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing directory accepted")
	}
	if err := DropFileCache(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestDropMapped: pages this process touched through a mapping stay
// cached after fadvise alone; DropMapped evicts them, and the mapping
// still reads the file's bytes afterwards.
func TestDropMapped(t *testing.T) {
	dir := t.TempDir()
	needPageCache(t, dir)
	const pages = 32
	p, want := writeFile(t, dir, "m", pages*PageSize())
	if err := DropFileCache(p); err != nil {
		t.Fatal(err)
	}
	m, err := MapFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var sum byte
	for i := 0; i < len(m.Data); i += PageSize() {
		sum += m.Data[i] // fault every page in
	}
	if r := resident(t, m.Data); r != pages {
		t.Fatalf("after touching: %d of %d pages resident", r, pages)
	}
	if err := DropFileCache(p); err != nil {
		t.Fatal(err)
	}
	if r := resident(t, m.Data); r == 0 {
		t.Fatal("fadvise alone evicted mapped pages: the test cannot tell DropMapped apart")
	}
	if err := DropMapped(m.Data, p); err != nil {
		t.Fatal(err)
	}
	if r := resident(t, m.Data); r != 0 {
		t.Fatalf("after DropMapped: %d pages resident", r)
	}
	if !bytes.Equal(m.Data, want) {
		t.Fatal("the mapping reads other bytes after DropMapped")
	}
	if sum != touched(want) {
		t.Fatal("the pages read other bytes than the file's")
	}
}

// touched is the byte sum of the first byte of every page of b.
func touched(b []byte) byte {
	var s byte
	for i := 0; i < len(b); i += PageSize() {
		s += b[i]
	}
	return s
}

// TestReadBytesCountsDiskReads: reading an evicted file shows up in
// /proc/self/io read_bytes.
func TestReadBytesCountsDiskReads(t *testing.T) {
	dir := t.TempDir()
	needPageCache(t, dir)
	p, _ := writeFile(t, dir, "f", 4<<20)
	if err := DropFileCache(p); err != nil {
		t.Fatal(err)
	}
	r0, err := ReadBytes()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(p); err != nil {
		t.Fatal(err)
	}
	r1, _ := ReadBytes()
	if r1-r0 < 4<<20 {
		t.Fatalf("read_bytes grew by %d reading 4 MiB from disk", r1-r0)
	}
}

// TestDropAllCaches drops the whole machine's page cache, which slows
// whatever else runs here; it runs only when OUTCORE_TEST_DROP_CACHES=1.
func TestDropAllCaches(t *testing.T) {
	if os.Getenv("OUTCORE_TEST_DROP_CACHES") != "1" {
		t.Skip("set OUTCORE_TEST_DROP_CACHES=1 (as root) to drop the machine's page cache")
	}
	dir := t.TempDir()
	needPageCache(t, dir)
	p, _ := writeFile(t, dir, "f", 1<<20)
	m, err := MapFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	os.ReadFile(p)
	if err := DropAllCaches(); err != nil {
		t.Fatal(err)
	}
	if r := resident(t, m.Data); r != 0 {
		t.Fatalf("%d pages resident after drop_caches", r)
	}
}

// TestWriteback: pages written back with StartWriteback/WaitWriteback are
// clean, so DropRange evicts them; dirty pages it cannot.
func TestWriteback(t *testing.T) {
	dir := t.TempDir()
	needPageCache(t, dir)
	n := 16 * PageSize()
	f, err := os.Create(filepath.Join(dir, "w"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	m, err := MapFD(int(f.Fd()), int64(n))
	if err != nil {
		t.Fatal(err)
	}
	defer Unmap(m)
	StartWriteback(f, 0, int64(n))
	if err := WaitWriteback(f, 0, int64(n)); err != nil {
		t.Fatal(err)
	}
	if err := DropRange(f, 0, int64(n)); err != nil {
		t.Fatal(err)
	}
	if r := resident(t, m); r != 0 {
		t.Fatalf("%d written-back pages still cached after DropRange", r)
	}
	f.Close()
	if err := WaitWriteback(f, 0, 1); err == nil {
		t.Fatal("sync_file_range on a closed file reported no error")
	}
}

// TestThreadIOCountsMappedFaults: touching evicted pages of a mapping
// (readahead off) on a locked thread shows as one major fault per page
// and one page read per page (the kernel reads nothing beyond the page:
// what the I/O floor measures of a memory-mapped read, DESIGN §11).
func TestThreadIOCountsMappedFaults(t *testing.T) {
	dir := t.TempDir()
	needPageCache(t, dir)
	const pages = 256
	p, want := writeFile(t, dir, "f", pages*PageSize())
	if err := DropFileCache(p); err != nil {
		t.Fatal(err)
	}
	m, err := MapFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b0, f0 := ThreadIO()
	var sum byte
	for i := 0; i < len(m.Data); i += 2 * PageSize() { // every other page: no neighbour to read ahead into
		sum += m.Data[i]
	}
	b1, f1 := ThreadIO()
	faults, read := f1-f0, b1-b0
	// Each touched page is read, and nothing beyond it (readahead off).
	if touchedPages := int64(pages / 2); read < touchedPages*int64(PageSize()) || read > 2*touchedPages*int64(PageSize()) {
		t.Errorf("%d bytes read touching %d evicted pages: want one %d B page each", read, touchedPages, PageSize())
	}
	// ru_majflt counts most of those reads, not always all: a fault that
	// waits for its read with the map's lock dropped is retried, and the
	// retry, finding the page cached, counts as minor (seen: 108 of 128
	// on a loaded host). Fewer faults make the floor lower, never higher.
	if faults < pages/2/4 || faults > pages/2 {
		t.Errorf("%d major faults touching %d evicted pages", faults, pages/2)
	}
	var ws byte
	for i := 0; i < len(want); i += 2 * PageSize() {
		ws += want[i]
	}
	if sum != ws {
		t.Fatal("the mapping read other bytes than the file's")
	}
	// A resident page faults no more.
	b2, f2 := ThreadIO()
	sum += m.Data[0]
	if b3, f3 := ThreadIO(); f3 != f2 || b3 != b2 {
		t.Errorf("touching a resident page: %d faults, %d bytes", f3-f2, b3-b2)
	}
}
