package dataset_test

import (
	"os"
	"path/filepath"
	"testing"

	"outcore/engine/dataset"
)

// TestResolveDataDirAbsolute: a relative data directory, from the flag or
// from $OUTCORE_DATA, resolves to the absolute one under the working
// directory, so a path stored for a run or handed to a training process
// that starts in its run folder names the same place; an absolute one is
// kept as given (cleaned).
func TestResolveDataDirAbsolute(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	want := filepath.Join(wd, "data")
	if got := dataset.ResolveDataDir("data"); got != want {
		t.Errorf("ResolveDataDir(%q) = %q, want %q", "data", got, want)
	}
	t.Setenv(dataset.DataDirEnv, "./data/")
	if got := dataset.ResolveDataDir(""); got != want {
		t.Errorf("ResolveDataDir with $%s=./data/ = %q, want %q", dataset.DataDirEnv, got, want)
	}
	abs := filepath.Join(os.TempDir(), "elsewhere")
	if got := dataset.ResolveDataDir(abs + "/"); got != abs {
		t.Errorf("ResolveDataDir(%q) = %q, want %q", abs+"/", got, abs)
	}
}
