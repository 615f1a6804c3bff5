package experiments

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outcore/experiments/grid"
	"outcore/experiments/slurm"
	"outcore/store"
)

// createProblems creates a grid and returns its problems' messages (the
// test fails when the grid is accepted).
func createProblems(t *testing.T, m *Manager, gridText string) string {
	t.Helper()
	_, err := m.Create(context.Background(), []byte(gridText))
	if !errors.Is(err, grid.ErrInvalid) {
		t.Fatalf("grid %s accepted (err %v)", gridText, err)
	}
	var msgs []string
	for _, p := range grid.ProblemsOf(err) {
		msgs = append(msgs, p.Message)
	}
	return strings.Join(msgs, "; ")
}

// TestExecutorIsTheServers: a queue started with the local executor alone
// (serve's default) refuses a grid that names slurm — the attack ran
// `--export=ALL,BASH_ENV=$(id >FILE)` through Slurm on such a server — and
// never claims a Slurm run another process queued.
func TestExecutorIsTheServers(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Executors = nil })
	msg := createProblems(t, h.m, `{"dataset":"tiny","system":"fake","epochs":1,"executor":"slurm",
		"slurm":{"args":"--export=ALL,BASH_ENV=$(id>/tmp/pwned)"}}`)
	for _, want := range []string{`executor: "slurm" is not offered here: this queue runs local`, "slurm.args: sbatch option --export is not allowed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("problems %q lack %q", msg, want)
		}
	}
	if _, err := h.m.CreateWith(context.Background(), []byte(`{"dataset":"tiny","system":"fake","epochs":1}`),
		CreateOptions{Executor: slurm.Name}); !errors.Is(err, grid.ErrInvalid) || !strings.Contains(err.Error(), "not offered here") {
		t.Errorf("create asking for slurm on a local queue: %v", err)
	}
	if ps := h.m.Check(mustParse(t, `{"dataset":"tiny","system":"fake","executor":"slurm"}`), nil); len(ps) == 0 || ps[0].Field != "executor" {
		t.Errorf("Check of a slurm grid on a local queue: %+v", ps)
	}

	// A run queued for Slurm by another process (`exp create --executor
	// slurm` on a shared data directory) waits: this queue does not offer it.
	other, err := New(testOptions(h.dataDir, h.st))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	e, err := other.Create(context.Background(), []byte(`{"dataset":"tiny","system":"fake","epochs":1,"executor":"slurm"}`))
	if err != nil {
		t.Fatal(err)
	}
	local := h.create(`{"dataset":"tiny","system":"fake","epochs":1}`)
	h.start()
	h.waitRuns(local.ID, "finished", finished)
	time.Sleep(300 * time.Millisecond)
	runs, err := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusQueued {
		t.Fatalf("the Slurm run on a local-only queue: %+v %v, want it still queued", runs, err)
	}
	// Nor does a retry bring it back on this queue.
	if err := other.CancelRun(context.Background(), runs[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.m.RetryRun(context.Background(), runs[0].ID); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "does not offer") {
		t.Errorf("retry of a Slurm run on a local-only queue: %v", err)
	}
}

func mustParse(t *testing.T, gridText string) *grid.Grid {
	t.Helper()
	g, err := grid.ParseGrid([]byte(gridText))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSlurmGridSettingsConfined: on a queue that offers Slurm, a grid's
// sbatch options come from the allow-list with checked values, and its
// node data directory must lie inside the data directory (or the queue's
// own node data directory), after following symbolic links.
func TestSlurmGridSettingsConfined(t *testing.T) {
	h := newHarness(t, nil)
	outside := t.TempDir()
	link := filepath.Join(h.dataDir, "link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(h.dataDir, "node data")
	for _, c := range []struct{ slurm, want string }{
		{`{"args":"--export=ALL,BASH_ENV=$(id>/tmp/x)"}`, "sbatch option --export is not allowed: outcore sets the job's environment"},
		{`{"args":"--qos=low --chdir=/root"}`, "sbatch option --chdir is not allowed"},
		{`{"args":"--output=/etc/cron.d/x"}`, "sbatch option --output is not allowed"},
		{`{"args":"--wrap='id'"}`, "sbatch option --wrap is not allowed"},
		{`{"args":"--comment=$(id)"}`, `sbatch option --comment="$(id)": want words`},
		{`{"args":"--qos=low;id"}`, `sbatch option --qos="low;id"`},
		{`{"args":"-A=acct"}`, "write the long form"},
		{`{"args":"--frobnicate=1"}`, "is not allowed (allowed: --account"},
		{`{"args":"--exclusive=user"}`, "--exclusive takes no value"},
		{`{"args":"--nice=99999"}`, "--nice=\"99999\": want a whole number from 0 to 10000"},
		{`{"node_data_dir":"/etc/../root"}`, `slurm.node_data_dir: "/etc/../root": no ".." allowed`},
		{`{"node_data_dir":"/root"}`, "/root is outside the folder node data directories may be in"},
		{fmt.Sprintf(`{"node_data_dir":%q}`, filepath.Join(link, "x")), "resolves to " + filepath.Join(outside, "x")},
		{`{"cpus":2147483648}`, "slurm.cpus: 2147483648 is not a whole number from 1 to 4096"},
		{`{"time":"99999999999"}`, "at most 366 days"},
		{`{"mem_allowance":"1e30"}`, "slurm.mem_allowance"},
	} {
		msg := createProblems(t, h.m, `{"dataset":"tiny","system":"fake","epochs":1,"executor":"slurm","slurm":`+c.slurm+`}`)
		if !strings.Contains(msg, c.want) {
			t.Errorf("slurm %s: problems %q, want %q", c.slurm, msg, c.want)
		}
	}
	for _, slurm := range []string{
		fmt.Sprintf(`{"node_data_dir":%q}`, inside),
		`{"args":"--qos=low --account=a1 --comment='two words' --constraint=ssd,fast --gres=gpu:1 --exclusive --nodelist=node[1-4] --hint=nomultithread"}`,
		`{"cpus":64,"time":"2-00:00:00","mem_allowance":"2GiB"}`,
	} {
		if _, err := h.m.Create(context.Background(), []byte(`{"dataset":"tiny","system":"fake","epochs":1,"executor":"slurm","slurm":`+slurm+`}`)); err != nil {
			t.Errorf("slurm %s refused: %v", slurm, err)
		}
	}
	// With a node data directory of its own, the queue confines grids to it.
	nodeRoot := filepath.Join(t.TempDir(), "node root")
	o, _ := h.m.opts.ExecutorOptions[slurm.Name].(slurm.Options)
	o.NodeDataDir = nodeRoot
	if _, err := o.Merged(&slurm.GridOptions{NodeDataDir: filepath.Join(nodeRoot, "a")}, h.dataDir); err != nil {
		t.Errorf("a folder inside the queue's node data directory: %v", err)
	}
	if _, err := o.Merged(&slurm.GridOptions{NodeDataDir: inside}, h.dataDir); err == nil || !errors.Is(err, slurm.ErrOutsideNodeDataRoot) {
		t.Errorf("a folder outside the queue's node data directory: %v", err)
	}
	// A grid stored before these checks is checked again at submission.
	if _, err := o.Merged(&slurm.GridOptions{Args: "--export=ALL"}, h.dataDir); err == nil {
		t.Error("merged accepted --export")
	}
}
