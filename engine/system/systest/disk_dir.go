package systest

import (
	"os"
	"testing"
)

// DiskDir is a directory for t on the disk the tests run from (the
// package's own directory: t.TempDir may be a tmpfs, which refuses the
// O_DIRECT reads of the storage backends), removed when t ends.
func DiskDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(".", ".systest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
