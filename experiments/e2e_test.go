package experiments

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestGridFromCLI builds the outcore binary and runs the grid of the
// issue — 3 variants × 3 memory limits × 2 repeats on the tiny dataset —
// from the command line, with the real engine (`outcore train`) as the
// child of every run. Skipped with -short (it builds the binary).
func TestGridFromCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the outcore binary and runs 18 real training runs")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "outcore")
	build := exec.Command("go", "build", "-o", bin, "outcore/cmd/outcore")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	dataDir := filepath.Join(tmp, "data")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "OUTCORE_DATA="+dataDir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("outcore %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return string(out)
	}
	run("data", "gen", "--preset", "tiny")
	gridText := filepath.Join(tmp, "grid.json")
	if err := os.WriteFile(gridText, []byte(`{"name":"ci-grid","dataset":"tiny","model":"sage","epochs":1,
		"hidden":16,"fanout":[5,5],
		"axes":{"system":["pyg+","ginex","gnndrive"],"mem_limit":["64MiB","128MiB","256MiB"],"repeat":2}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	out := run("exp", "create", "--file", gridText, "--wait", "--data-dir", dataDir)
	t.Logf("18 runs in %.1f s", time.Since(t0).Seconds())
	if !strings.Contains(out, "experiment 1 finished: 18 done, 0 oom, 0 failed") {
		t.Fatalf("create --wait output:\n%s", out)
	}

	list := strings.Split(strings.TrimSpace(run("exp", "list")), "\n")
	if len(list) != 2 || !strings.HasPrefix(list[0], "ID ") || !strings.HasPrefix(list[1], "1 ") || !strings.Contains(list[1], "finished") {
		t.Fatalf("exp list:\n%s", strings.Join(list, "\n"))
	}
	show := run("exp", "show", "1")
	for _, sys := range []string{"pyg+", "ginex", "gnndrive"} {
		runRow := regexp.MustCompile(`(?m)^\d+\s+\d+\s+1\s+` + regexp.QuoteMeta(sys) + `\s+tiny\s+.*\sdone\s`)
		cellRow := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sys) + `\s+\d+MiB\s+32\s+1000\s+sage\s+5,5\s+tiny\s+-\s+2\s+2\s+0\s+0\s`)
		if n, c := len(runRow.FindAllString(show, -1)), len(cellRow.FindAllString(show, -1)); n != 6 || c != 3 {
			t.Errorf("exp show: %d done runs and %d cells of %s, want 6 and 3:\n%s", n, c, sys, show)
		}
	}

	for what, rows := range map[string]int{"runs": 18, "epochs": 18} {
		recs, err := csv.NewReader(strings.NewReader(run("exp", "export", "1", "--csv", "--what", what))).ReadAll()
		if err != nil || len(recs) != rows+1 {
			t.Fatalf("export %s: %d records, %v", what, len(recs), err)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for _, r := range recs[1:] {
			if r[col["status"]] != "done" || r[col["run_id"]] == "" {
				t.Fatalf("export %s row %v", what, r)
			}
			if what == "runs" && (r[col["limit_enforced"]] != "1" && haveCgroups(t)) {
				t.Fatalf("run %s: limit not enforced: %s", r[col["run_id"]], r[col["limit_note"]])
			}
			if what == "epochs" && r[col["epoch_s"]] == "0" {
				t.Fatalf("epoch row %v", r)
			}
		}
	}
	if recs, err := csv.NewReader(strings.NewReader(run("exp", "export", "1", "--csv", "--what", "samples"))).ReadAll(); err != nil || len(recs) < 2 {
		t.Fatalf("export samples: %d records, %v", len(recs), err)
	}
}
