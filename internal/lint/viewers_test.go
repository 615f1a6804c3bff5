package lint

import (
	"strings"
	"testing"
)

// TestViewerImports: report and web (their non-test packages) depend on
// no supervisor, cgroup manager, Slurm executor or the runner itself.
func TestViewerImports(t *testing.T) {
	pkgs := goList(t, "-deps", "./report/...", "./web/...")
	seen := 0
	for _, p := range pkgs {
		if p.ImportPath == "outcore/report" || p.ImportPath == "outcore/web" {
			seen++
		}
	}
	if seen != 2 {
		t.Fatalf("go list listed %d of report and web", seen)
	}
	for _, v := range ViewerViolations(pkgs) {
		t.Error(v)
	}
}

// TestViewerViolations checks the rule itself on made-up packages.
func TestViewerViolations(t *testing.T) {
	pkgs := []Package{
		// allowed
		{ImportPath: "outcore/report", Imports: []string{"outcore/experiments/grid"}, Deps: []string{"outcore/store", "outcore/internal/cgroupish"}},
		{ImportPath: "outcore/web/views", Deps: []string{"outcore/experiments/grid", "outcore/internal/units"}},
		{ImportPath: "outcore/cmd/outcore/cli", Deps: []string{"outcore/experiments", "outcore/experiments/supervise"}},
		{ImportPath: "outcore/experiments", Deps: []string{"outcore/internal/cgroup"}},
		// broken
		{ImportPath: "outcore/web", Imports: []string{"outcore/experiments"}},
		{ImportPath: "outcore/report", Deps: []string{"outcore/engine/metrics", "outcore/internal/cgroup"}},
		{ImportPath: "outcore/report/x", Deps: []string{"outcore/experiments/supervise"}},
		{ImportPath: "outcore/web/views", Deps: []string{"outcore/experiments/slurm/sub"}},
		{ImportPath: "outcore/web/x", Deps: []string{"outcore/engine/vocab", "outcore/engine/train"}},
		{ImportPath: "outcore/report/y", Deps: []string{"outcore/engine/system/kit"}},
	}
	got := ViewerViolations(pkgs)
	want := []string{
		"outcore/web depends on outcore/experiments",
		"outcore/report depends on outcore/internal/cgroup",
		"outcore/report/x depends on outcore/experiments/supervise",
		"outcore/web/views depends on outcore/experiments/slurm/sub",
		"outcore/web/x depends on outcore/engine/train",
		"outcore/report/y depends on outcore/engine/system/kit",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]+" (") {
			t.Errorf("violation %d = %q, want %q…", i, got[i], want[i])
		}
	}
}
