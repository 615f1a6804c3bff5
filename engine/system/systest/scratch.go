package systest

import (
	"path/filepath"
	"testing"
)

// NoScratchLeft fails t when the shared data directory still holds a
// scratch directory of system (train.Env.ScratchDir's <system>-run-*): a
// variant removes its own in Close, whether the run ended or failed.
func NoScratchLeft(t testing.TB, system string) {
	t.Helper()
	d, err := DataDir()
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(d, system+"-run-*")); len(left) > 0 {
		t.Fatalf("%s left its scratch files behind: %v", system, left)
	}
}
