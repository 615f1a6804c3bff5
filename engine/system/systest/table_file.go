package systest

import (
	"os"
	"path/filepath"
	"testing"

	"outcore/internal/osutil"
)

// TableFile writes data, in the dataset files' byte order, to the file
// name in a directory of t's own (t.TempDir) and returns its path: the
// feature table or the indices a variant's unit test reads.
func TableFile[T osutil.Number](t testing.TB, name string, data []T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, osutil.Bytes(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ReadTable reads the file at path, one a variant wrote, as a table of T
// in the dataset files' byte order. A read error fails t.
func ReadTable[T osutil.Number](t testing.TB, path string) []T {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return osutil.View[T](b)
}
