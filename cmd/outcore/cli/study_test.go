package cli

import (
	"strings"
	"testing"
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
