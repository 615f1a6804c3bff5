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
