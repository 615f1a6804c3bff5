package cli

import (
	"context"
	"strings"
	"testing"

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
		{[]string{"--study", "gnndrive-table2"}, `"medium" not found`},
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
