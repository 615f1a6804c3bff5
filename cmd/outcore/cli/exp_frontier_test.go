package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"outcore/experiments/grid"
	"outcore/store"
)

// TestFrontierEndToEnd runs a real memory-frontier search on `tiny` from
// the command line: every probe is `outcore train` in its own memory
// cgroup (the test binary plays the child), probes after the first are
// added as earlier ones end, and the search stops with a frontier between
// the variant's floor and 100 % that finished an epoch, every probe below
// it that was tried having failed.
func TestFrontierEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real training probes")
	}
	needCgroups(t)
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	code, out, stderr := runCLI("exp", "frontier", "--data-dir", dir, "--dataset", "tiny", "--system", "pyg+",
		"--tolerance", "0.25", "--max-probes", "8", "--max-limit", "256MiB", "--wait")
	if code != 0 {
		t.Fatalf("exp frontier: %d\n%s\n%s", code, out, stderr)
	}
	m := regexp.MustCompile(`frontier pyg\+: (\d+(?:\.\d+)?)([KMG]iB) \(floor`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no frontier in the output:\n%s", out)
	}
	st, err := store.OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.RunFilter{ExperimentID: 1, Current: true})
	if err != nil || len(runs) < 2 {
		t.Fatalf("%d probes, %v:\n%s", len(runs), err, out)
	}
	var least int64
	for _, r := range runs {
		t.Logf("probe %d: limit %d MiB, %s, %d epochs, enforced %v", r.Seq, r.MemLimitBytes>>20, r.Status, r.EpochsDone, r.LimitEnforced)
		if r.EpochsDone > 0 && (least == 0 || r.MemLimitBytes < least) {
			least = r.MemLimitBytes
		}
	}
	if runs[0].MemLimitBytes <= runs[1].MemLimitBytes {
		t.Errorf("first probe %d, second %d: want 100 %% first, then lower", runs[0].MemLimitBytes, runs[1].MemLimitBytes)
	}
	for _, r := range runs {
		if r.MemLimitBytes < least && r.EpochsDone > 0 {
			t.Errorf("probe at %d finished below the frontier %d", r.MemLimitBytes, least)
		}
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	unit := map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[2]]
	if got := int64(v * unit); got < least-least/100 || got > least+least/100 {
		t.Errorf("printed frontier %s%s, least limit that finished %d", m[1], m[2], least)
	}
	if !strings.Contains(out, "experiment 1 finished") {
		t.Errorf("output:\n%s", out)
	}
	// The figure file of the search: the epoch-vs-mem chart, as the
	// dashboard draws it.
	svg := filepath.Join(dir, "frontier.svg")
	if code, _, stderr := runCLI("exp", "export", "1", "--data-dir", dir, "--figure", "epoch-vs-mem", "--format", "svg", "--out", svg); code != 0 {
		t.Fatalf("exp export: %s", stderr)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("pyg+")) {
		t.Errorf("figure %s: %v, %d bytes, want an SVG naming pyg+", svg, err, len(b))
	}
	// A time budget smaller than one probe: the search stops after the
	// first, keeping its result and saying why.
	code, out, stderr = runCLI("exp", "frontier", "--data-dir", dir, "--dataset", "tiny", "--system", "pyg+",
		"--max-limit", "256MiB", "--max-cell-seconds", "0.001", "--train-max-nodes", "2000", "--wait")
	if code != 0 {
		t.Fatalf("exp frontier with a time budget: %d\n%s\n%s", code, out, stderr)
	}
	runs, err = st.Runs(context.Background(), store.RunFilter{ExperimentID: 2, Current: true})
	if err != nil || len(runs) != 1 || !strings.Contains(out, "stopped by the time budget") {
		t.Fatalf("%d probes (%v) with a budget of 1 ms, want 1 and the budget named:\n%s", len(runs), err, out)
	}
	if !strings.Contains(string(runs[0].Config), `"train_max_nodes":2000`) {
		t.Errorf("probe config without the training subset: %s", runs[0].Config)
	}
}

// TestFrontierNameFits: a search of many variants gets a name the grid
// accepts (at most grid.MaxNameLen characters), naming as many variants as
// fit and counting the rest; a short list is named whole.
func TestFrontierNameFits(t *testing.T) {
	short := []string{"pyg+", "ginex"}
	if got, want := frontierName(short), "memory frontier of pyg+, ginex"; got != want {
		t.Errorf("frontierName(%q) = %q, want %q", short, got, want)
	}
	long := []string{"pyg+", "ginex", "gnndrive", "gnndrive:feature_buffer=device", "diskgnn", "mariusgnn", "gids", "helios", "ali+pg", "dgl-ondisk"}
	got := frontierName(long)
	if n := len([]rune(got)); n > grid.MaxNameLen {
		t.Fatalf("frontierName of %d variants is %d characters, above %d: %q", len(long), n, grid.MaxNameLen, got)
	}
	m := regexp.MustCompile(`^memory frontier of (.+) and (\d+) more$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("frontierName of %d variants = %q, want the first ones and a count of the rest", len(long), got)
	}
	named := strings.Split(m[1], ", ")
	if rest, _ := strconv.Atoi(m[2]); len(named)+rest != len(long) || named[0] != "pyg+" {
		t.Errorf("frontierName = %q: %d named and %s more, want the first ones of %d", got, len(named), m[2], len(long))
	}
	huge := []string{strings.Repeat("v", 120)}
	if got := frontierName(huge); got != "memory frontier of 1 variant" {
		t.Errorf("frontierName of one 120-character variant = %q, want the count", got)
	}
}
