package lint

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecutorWordViolationsTable: the rule's pure check, from a table.
func TestExecutorWordViolationsTable(t *testing.T) {
	for _, c := range []struct {
		rel, src string
		bad      int
	}{
		{"experiments/queue.go", "// a Slurm job goes on", 1},
		{"store/runs.go", "ExecutorSlurm = \"slurm\"", 1},
		{"cmd/outcore/cli/serve.go", "run sbatch here\nand squeue there", 2},
		{"web/runs.go", `K: "partition"`, 1},
		{"experiments/grid/x.go", "writes the job script", 1},
		{"engine/system/mariusgnn/p.go", "// the partition buffer", 0},
		{"experiments/queue.go", "StatusCancelled, StatusRunning, AxisBatchSize", 0},
		{"experiments/slurm/cli.go", "sbatch squeue scancel partition", 0},
		{ExecutorWiring, "import (\n\t_ \"outcore/experiments/slurm\"\n)", 0},
		{"experiments/manager.go", "\t_ \"outcore/experiments/slurm\"", 1},
		{ExecutorWiring, "// slurm runs here", 1},
	} {
		if got := ExecutorWordViolations(c.rel, []byte(c.src)); len(got) != c.bad {
			t.Errorf("%s %q: %d violations %q, want %d", c.rel, c.src, len(got), got, c.bad)
		}
	}
}

// TestExecutorWordsAtHome: no non-test Go file outside the Slurm
// executor's package speaks its words (ExecutorWordViolations); the
// queue's wiring file imports it once.
func TestExecutorWordsAtHome(t *testing.T) {
	root := "../.."
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "third_party" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		for _, v := range ExecutorWordViolations(filepath.ToSlash(rel), b) {
			t.Errorf("%s: the Slurm executor's words belong in %s (docs/ARCHITECTURE.md \"Adding an executor\")", v, ExecutorHome)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("read only %d Go files", n)
	}
	b, err := os.ReadFile(filepath.Join(root, ExecutorWiring))
	if err != nil || !strings.Contains(string(b), `"outcore/experiments/slurm"`) {
		t.Fatalf("%s does not wire the Slurm executor: %v", ExecutorWiring, err)
	}
}
