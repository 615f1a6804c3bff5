package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outcore/internal/cgroup"
	"outcore/store"
)

// externalRegistry writes a systems.json in dir registering the worked
// example, examples/external/tiny_sgd.py, as tiny-sgd (the name of
// examples/external/systems.json), and returns its path. It skips the
// test where the example cannot run (no python3 on the programs' PATH).
func externalRegistry(t *testing.T, dir string) string {
	t.Helper()
	found := false
	for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
		if _, err := os.Stat(filepath.Join(d, "python3")); err == nil {
			found = true
		}
	}
	if !found {
		t.Skip("no python3 on the PATH external programs get")
	}
	prog, err := filepath.Abs("../../../examples/external/tiny_sgd.py")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(prog); err != nil {
		t.Fatal(err)
	}
	reg := map[string]any{"systems": []any{map[string]any{
		"name": "tiny-sgd", "help": "the worked example", "command": []string{prog},
		"options": map[string]any{
			"epochs":      map[string]any{"type": "int", "min": 1, "max": 100, "default": 3},
			"lr":          map[string]any{"type": "float", "min": 0.0001, "max": 10, "default": 0.05},
			"train_limit": map[string]any{"type": "int", "min": 0, "max": 100000000, "default": 0},
		},
	}}}
	b, _ := json.Marshal(reg)
	p := filepath.Join(dir, "systems.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil { // whatever the umask: only its owner writes it
		t.Fatal(err)
	}
	return p
}

// TestExternalSystemGrid is the worked example of DESIGN §14 in `make
// test`: tiny_sgd.py registered as an external system runs in a grid on
// tiny beside two built-ins (reference and pyg+) through the queue of
// `exp create --wait`, in its memory cgroup at the grid's limit; its
// epochs are stored and exported, its summary is done, and a comparison
// chart's data has its series.
func TestExternalSystemGrid(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real training")
	}
	dir := t.TempDir()
	externalRegistry(t, dir)
	if code, _, stderr := runCLI("data", "gen", "--quiet", "--preset", "tiny", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	if code, out, stderr := runCLI("systems", "--data-dir", dir); code != 0 || !strings.Contains(out, "external:tiny-sgd") || !strings.Contains(out, "train_limit") {
		t.Fatalf("systems: %s\n%s", out, stderr)
	}
	const ext = "external:tiny-sgd:epochs=2,train_limit=1200"
	grid := filepath.Join(dir, "grid.json")
	body := `{"name":"byo","dataset":"tiny","epochs":1,"compute":"none","hidden":16,"fanout":[5,5],
		"axes":{"system":["reference","pyg+","` + ext + `"],"mem_limit":["256MiB","512MiB"]}}`
	if err := os.WriteFile(grid, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI("exp", "create", "--data-dir", dir, "--file", grid, "--wait")
	if code != 0 || !strings.Contains(out, "6 done, 0 oom, 0 failed") {
		t.Fatalf("exp create --wait: %s\n%s", out, stderr)
	}

	st, err := store.OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.RunFilter{ExperimentID: 1})
	if err != nil {
		t.Fatal(err)
	}
	var x *store.Run
	for i := range runs {
		if runs[i].System == ext && runs[i].MemLimitBytes == 256<<20 {
			x = &runs[i]
		}
	}
	if x == nil {
		t.Fatalf("no run of %s at 256MiB among %d runs", ext, len(runs))
	}
	if x.Status != store.StatusDone {
		t.Errorf("external run: %s (%s), limit %d", x.Status, x.Error, x.MemLimitBytes)
	}
	if _, err := cgroup.Detect(); err == nil && !x.LimitEnforced {
		t.Errorf("memory cgroups work here but the external run's limit was not enforced: %s", x.LimitNote)
	}
	t.Logf("external run %d: %s; peak cgroup %v", x.ID, x.LimitNote, x.PeakCgroupBytes)
	var sum struct {
		Outcome         string `json:"outcome"`
		Epochs          int    `json:"epochs"`
		PeakCgroupBytes int64  `json:"peak_cgroup_bytes"`
	}
	if err := json.Unmarshal(x.Summary, &sum); err != nil || sum.Outcome != "done" || sum.Epochs != 2 {
		t.Errorf("external run's summary %s (%v): want outcome done after 2 epochs", x.Summary, err)
	}
	if x.LimitEnforced && (sum.PeakCgroupBytes <= 0 || sum.PeakCgroupBytes > x.MemLimitBytes) {
		t.Errorf("summary peak %d: want the cgroup's peak, within the %d limit", sum.PeakCgroupBytes, x.MemLimitBytes)
	}
	eps, err := st.Epochs(context.Background(), x.ID)
	if err != nil || len(eps) != 2 {
		t.Fatalf("external run: %d epochs stored (%v), want 2", len(eps), err)
	}
	stdoutLogs, _ := filepath.Glob(filepath.Join(dir, "runs", "*", "*", "stdout.log"))
	if len(stdoutLogs) != 2 {
		t.Errorf("want the external runs' stdout kept (a stdout.log each), found %q", stdoutLogs)
	}

	code, out, stderr = runCLI("exp", "export", "1", "--csv", "--what", "epochs", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("export epochs: %s", stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	n := 0
	for _, r := range recs[1:] {
		if r[col["system"]] == ext {
			n++
		}
	}
	if n != 4 {
		t.Errorf("epochs CSV has %d rows of %s, want 4 (2 runs of 2 epochs):\n%s", n, ext, out)
	}
	code, out, stderr = runCLI("exp", "export", "1", "--figure", "epoch-vs-mem", "--format", "csv", "--out", "-", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, ext) || !strings.Contains(out, "pyg+") {
		t.Errorf("comparison chart data lacks the external series: %s\n%s", out, stderr)
	}
}

// TestExternalSystemRefusals: a grid that names an unregistered external
// system, sets an undeclared option (a command, an environment) or tries
// to give a command in a grid key is refused at `exp create`, naming what
// is wrong; nothing is created.
func TestExternalSystemRefusals(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--quiet", "--preset", "tiny", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	grid := func(system, extra string) string {
		p := filepath.Join(t.TempDir(), "grid.json")
		body := `{"dataset":"tiny","epochs":1` + extra + `,"axes":{"system":["reference","` + system + `"]}}`
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// No registry in the data directory: no external system at all.
	if code, _, stderr := runCLI("exp", "create", "--data-dir", dir, "--file", grid("external:tiny-sgd", "")); code == 0 ||
		!strings.Contains(stderr, `"tiny-sgd" is not a registered external system (no registry file is loaded)`) {
		t.Errorf("unregistered system without a registry: %d %s", code, stderr)
	}
	externalRegistry(t, dir)
	for _, c := range []struct{ system, extra, want string }{
		{"external:nope", "", `"nope" is not a registered external system`},
		{"external:tiny-sgd:command=/bin/sh", "", `external system "tiny-sgd" has no option "command"`},
		{"external:tiny-sgd:env=LD_PRELOAD", "", `has no option "env"`},
		{"external:tiny-sgd:fanout=5", "", `has no option "fanout"`},
		{"external:tiny-sgd:epochs=1000", "", `option "epochs": 1000 is outside [1, 100]`},
		{"external:tiny-sgd", `,"command":["/bin/sh","-c","id"]`, `command`},
		{"external:tiny-sgd", `,"env":{"LD_PRELOAD":"x"}`, `env`},
		{"external:", "", `has no external system name`},
	} {
		code, _, stderr := runCLI("exp", "create", "--data-dir", dir, "--file", grid(c.system, c.extra))
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s%s: exit %d, stderr %q, want %q", c.system, c.extra, code, stderr, c.want)
		}
	}
	if code, out, _ := runCLI("exp", "list", "--data-dir", dir); code != 0 || strings.Count(strings.TrimSpace(out), "\n") > 0 {
		t.Errorf("a refused grid created an experiment:\n%s", out)
	}
	// --systems names another registry; a file others may write is refused.
	other := filepath.Join(t.TempDir(), "reg.json")
	b, _ := os.ReadFile(filepath.Join(dir, "systems.json"))
	if err := os.WriteFile(other, b, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(other, 0o666)
	if code, _, stderr := runCLI("exp", "create", "--data-dir", dir, "--systems", other, "--file", grid("external:tiny-sgd", "")); code == 0 || !strings.Contains(stderr, "writable by its group or by others") {
		t.Errorf("--systems with a world-writable file: %d %s", code, stderr)
	}
}
