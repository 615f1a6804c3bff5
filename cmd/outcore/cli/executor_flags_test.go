package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outcore/store"
)

// TestExpCreateExecutor: --executor sets the runs' executor (without
// --wait nothing runs, so no Slurm is needed); bad executor flags and a
// grid that names another executor are usage errors.
func TestExpCreateExecutor(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	grid := filepath.Join(dir, "grid.json")
	write := func(s string) {
		if err := os.WriteFile(grid, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"dataset":"tiny","epochs":1,"axes":{"system":["pyg+"],"mem_limit":["64MiB"]}}`)
	if code, _, stderr := runCLI("exp", "create", "--file", grid, "--executor", "slurm", "--data-dir", dir); code != 0 {
		t.Fatalf("create --executor slurm: exit %d: %s", code, stderr)
	}
	ctx := context.Background()
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(ctx, store.RunFilter{})
	st.Close()
	if err != nil || len(runs) != 1 || runs[0].Executor != "slurm" {
		t.Fatalf("runs after create --executor slurm: %+v %v", runs, err)
	}

	for _, c := range []struct {
		grid string
		args []string
		want string
	}{
		{"", []string{"--executor", "pbs"}, `--executor "pbs": want local or slurm`},
		{"", []string{"--executor", "slurm", "--slurm-args", "--qos low"}, `"low" is not an sbatch option`},
		{"", []string{"--executor", "slurm", "--slurm-mem-allowance", "lots"}, `--slurm-mem-allowance "lots"`},
		{"", []string{"--executor", "slurm", "--slurm-time", "2h"}, `time limit "2h"`},
		{`{"dataset":"tiny","executor":"local","system":"pyg+"}`, []string{"--executor", "slurm"}, `the grid names "local" but "slurm" was asked for`},
		{`{"dataset":"tiny","executor":"pbs","system":"pyg+"}`, nil, `executor: unknown executor "pbs"`},
		{`{"dataset":"tiny","system":"pyg+","slurm":{"partition":"a b"}}`, nil, `slurm.partition: partition "a b"`},
		{`{"dataset":"tiny","system":"pyg+","slurm":{"nodes":2}}`, nil, `slurm.nodes: unknown setting`},
		{`{"dataset":"tiny","system":"pyg+","slurm":{"node_data_dir":"scratch"}}`, nil, `slurm.node_data_dir: "scratch" is not an absolute path`},
	} {
		if c.grid != "" {
			write(c.grid)
		}
		code, _, stderr := runCLI(append(append([]string{"exp", "create", "--file", grid}, c.args...), "--data-dir", dir)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s %v: exit %d, stderr %q; want exit 2 saying %q", c.grid, c.args, code, firstLine(stderr), c.want)
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// TestExpCreateExecutorIsChosen: a grid naming slurm is refused by `exp
// create` without --executor slurm (the command line's queue offers local
// alone), and --executor takes a list whose first is the default.
func TestExpCreateExecutorIsChosen(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	grid := filepath.Join(dir, "grid.json")
	if err := os.WriteFile(grid, []byte(`{"dataset":"tiny","executor":"slurm","epochs":1,"axes":{"system":["pyg+"],"mem_limit":["64MiB"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("exp", "create", "--file", grid, "--data-dir", dir)
	if code != 2 || !strings.Contains(stderr, `"slurm" is not offered here`) {
		t.Errorf("grid naming slurm without --executor: exit %d, %q", code, firstLine(stderr))
	}
	if code, stdout, stderr := runCLI("exp", "create", "--file", grid, "--executor", "local,slurm", "--data-dir", dir); code != 0 || !strings.Contains(stdout, "`outcore serve --executor local,slurm`") {
		t.Errorf("--executor local,slurm: exit %d, %q, %q", code, stdout, firstLine(stderr))
	}
	if code, _, stderr := runCLI("exp", "create", "--file", grid, "--executor", "slurm", "--slurm-args", "--export=ALL", "--data-dir", dir); code != 2 || !strings.Contains(stderr, "--export is not allowed") {
		t.Errorf("--slurm-args --export=ALL: exit %d, %q", code, firstLine(stderr))
	}
}
