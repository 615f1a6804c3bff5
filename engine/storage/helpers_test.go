package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// backends lists every backend the tests run against.
var backends = []Backend{BackendUring, BackendPread, BackendMmap}

// directDir returns a directory whose file system accepts O_DIRECT reads:
// the test's temp dir, else a temp dir under the package directory. It
// skips the test, saying why, when neither does.
func directDir(t testing.TB) string {
	t.Helper()
	cands := []string{t.TempDir()}
	if d, err := os.MkdirTemp(".", ".storage-test-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		cands = append(cands, d)
	}
	var why []string
	for _, d := range cands {
		if err := directWorks(d); err != nil {
			why = append(why, fmt.Sprintf("%s: %v", d, err))
			continue
		}
		return d
	}
	t.Skipf("no directory here accepts O_DIRECT reads: %v", why)
	return ""
}

// directWorks checks that O_DIRECT reads work in dir.
func directWorks(dir string) error {
	p := filepath.Join(dir, ".odirect-probe")
	if err := os.WriteFile(p, make([]byte, 8192), 0o644); err != nil {
		return err
	}
	defer os.Remove(p)
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		return fmt.Errorf("open O_DIRECT: %w", err)
	}
	defer unix.Close(fd)
	buf, err := allocArena(4096)
	if err != nil {
		return err
	}
	defer freeArena(buf)
	_, err = unix.Pread(fd, buf, 0)
	return err
}

// writeRandomFile writes size pseudo-random bytes (seeded) to dir/name and
// returns the path and contents.
func writeRandomFile(t testing.TB, dir, name string, size int, seed uint64) (string, []byte) {
	t.Helper()
	data := make([]byte, size)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := 0; i < size; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < size; j++ {
			data[i+j] = byte(v >> (8 * j))
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, data
}

// quiet is a Logger that records lines instead of printing them.
type quiet struct{ lines []string }

func (q *quiet) log(line string) { q.lines = append(q.lines, line) }

// open opens path with the backend and options, failing the test on error.
func open(t testing.TB, path string, b Backend, o Options) *File {
	t.Helper()
	o.Backend = b
	if o.Logger == nil {
		o.Logger = func(string) {}
	}
	f, err := OpenFile(path, o)
	if err != nil {
		t.Fatalf("OpenFile(%s, %s): %v", path, b, err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("close file: %v", err)
		}
	})
	return f
}

// reader returns a new Reader that is closed at cleanup.
func reader(t testing.TB, f *File) Reader {
	t.Helper()
	r, err := f.NewReader()
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("close reader: %v", err)
		}
	})
	return r
}

// checkRows compares dst with the expected rows of data.
func checkRows(t testing.TB, data []byte, rb int64, ids []int64, dst []byte) {
	t.Helper()
	for i, id := range ids {
		want := data[id*rb : (id+1)*rb]
		got := dst[int64(i)*rb : int64(i+1)*rb]
		if !bytes.Equal(got, want) {
			t.Fatalf("row %d (ids[%d]): bytes differ from the file (first got %x, want %x)", id, i, got[:min(8, len(got))], want[:min(8, len(want))])
		}
	}
}

// randomIDs returns n ids in [0, rows) with some duplicates.
func randomIDs(r *rand.Rand, n int, rows int64) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		if i > 0 && r.IntN(8) == 0 {
			ids[i] = ids[r.IntN(i)] // duplicate
			continue
		}
		ids[i] = r.Int64N(rows)
	}
	return ids
}

// isErr fails unless errors.Is(err, target).
func isErr(t testing.TB, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}
