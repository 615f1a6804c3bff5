package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/store"
)

// TestExpCreateStudy: --study creates a study's grid (a reproduction
// study or an example of the registry); a
// dataset too small for its limits, an unknown study and --file with
// --study are usage errors naming what is wrong.
func TestExpCreateStudy(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--study", "gnndrive-table2", "--study-dataset", "tiny"}, `"60%" is 614.4KiB of tiny, below 1MiB`},
		{[]string{"--study", "gnndrive-table2", "--study-dataset", "absent"}, `"absent" not found`},
		{[]string{"--study", "nosuch"}, `--study "nosuch": no such study (have diskgnn-`},
		{[]string{"--study", "ginex-overall", "--file", "g.json"}, "give one of --file and --study"},
		{[]string{"--file", "g.json", "--study-dataset", "tiny"}, "--study-dataset needs --study"},
	} {
		code, _, stderr := runCLI(append(append([]string{"exp", "create"}, c.args...), "--data-dir", dir)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", c.args, code, firstLine(stderr), c.want)
		}
	}
	// the registry's examples are studies too: one starts on the dataset given
	code, stdout, stderr := runCLI("exp", "create", "--study", "gids-fig09-accumulator", "--study-dataset", "tiny", "--data-dir", dir)
	if code != 0 || !strings.Contains(stdout+stderr, "6 runs") {
		t.Errorf("an example by id: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestExpCreateStudyGeneratesPreset: on a fresh data directory `exp
// create --study` generates the study's dataset when it is a preset
// (here tiny, given by --study-dataset; a study's own is medium or
// papers-reach), saying so with progress, and queues its runs; a name
// that is no preset is left to the plan, which says it is missing.
func TestExpCreateStudyGeneratesPreset(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI("exp", "create", "--study", "gids-fig09-accumulator", "--study-dataset", "tiny", "--data-dir", dir)
	if code != 0 || !strings.Contains(stdout, "6 runs queued") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"dataset tiny is absent: generating preset tiny (8192 nodes", "outcore exp: generating tiny:", "outcore exp: generated tiny in"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	meta, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(dir), "tiny"))
	if err != nil || meta.Nodes != 8192 || meta.Source.Preset != "tiny" {
		t.Fatalf("generated tiny: %+v, %v", meta, err)
	}
	// present now: a second study on it generates nothing
	code, _, stderr = runCLI("exp", "create", "--study", "gids-fig09-accumulator", "--study-dataset", "tiny", "--data-dir", dir)
	if code != 0 || strings.Contains(stderr, "is absent: generating") {
		t.Errorf("second create: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI("exp", "create", "--study", "gids-fig09-accumulator", "--study-dataset", "absent", "--data-dir", dir)
	if code != 2 || strings.Contains(stderr, "is absent: generating") || !strings.Contains(stderr, `"absent" not found`) {
		t.Errorf("a name that is no preset: exit %d, stderr %q", code, firstLine(stderr))
	}
}

// TestExpCreateStudyTestbed: a reproduction study created by id runs
// under its paper's testbed (DESIGN §13, "Studies"): every run's config
// names it. The dataset (128 MiB of features) is one where 60% of the
// features holds at least one of the study's variants' floors.
func TestExpCreateStudyTestbed(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--nodes", "262144", "--dim", "128", "--name", "t128", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	if code, stdout, stderr := runCLI("exp", "create", "--study", "gnndrive-table2", "--study-dataset", "t128", "--data-dir", dir); code != 0 {
		t.Fatalf("exp create --study gnndrive-table2: exit %d\n%s\n%s", code, stdout, stderr)
	}
	ctx := context.Background()
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(ctx, store.RunFilter{})
	st.Close()
	if err != nil || len(runs) == 0 { // the cells below their variant's floor are skipped (skip_infeasible)
		t.Fatalf("runs: %d, %v; want the study's", len(runs), err)
	}
	for _, r := range runs {
		if !strings.Contains(string(r.Config), `"testbed":"gnndrive-icpp24"`) {
			t.Errorf("run %d (%s): config names no testbed gnndrive-icpp24: %s", r.ID, r.System, r.Config)
		}
	}
}
