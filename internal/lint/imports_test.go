package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// goList runs `go list -json args...` at the module root.
func goList(t *testing.T, args ...string) []Package {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestEngineImports: nothing the engine or its tests depend on is the
// runner, the store, the dashboard or the CLI.
func TestEngineImports(t *testing.T) {
	pkgs := goList(t, "-deps", "-test", "./engine/...")
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	engine := 0
	for _, p := range pkgs {
		if under(basePath(p.ImportPath), "outcore/engine") {
			engine++
		}
		for _, f := range engineForbidden {
			if under(basePath(p.ImportPath), f) {
				t.Errorf("%s is in the engine's dependencies", p.ImportPath)
			}
		}
	}
	if engine == 0 {
		t.Fatal("no engine package listed")
	}
	for _, v := range Violations(pkgs) {
		t.Error(v)
	}
}

// TestReportImports: no package named report depends on the dashboard.
func TestReportImports(t *testing.T) {
	for _, v := range Violations(goList(t, "./...")) {
		t.Error(v)
	}
}

// TestViolations checks the rules themselves on made-up packages.
func TestViolations(t *testing.T) {
	pkgs := []Package{
		{ImportPath: "outcore/engine/train", Name: "train", Imports: []string{"outcore/engine/metrics", "outcore/internal/osutil"}},
		{ImportPath: "outcore/engine/system/kit", Name: "kit", Imports: []string{"outcore/experiments"}},
		{ImportPath: "outcore/engine/x [outcore/engine/x.test]", Name: "x", Imports: []string{"outcore/store [outcore/engine/x.test]"}},
		{ImportPath: "outcore/engine/y_test", Name: "y_test", Imports: []string{"outcore/cmd/outcore/cli"}},
		{ImportPath: "outcore/engine/z", Name: "z", Imports: []string{"outcore/webby", "outcore/storefront", "outcore/web/views"}},
		{ImportPath: "outcore/experiments", Name: "experiments", Imports: []string{"outcore/store"}},
		{ImportPath: "outcore/report", Name: "report", Deps: []string{"outcore/engine/metrics", "outcore/web/views"}},
		{ImportPath: "outcore/x/report", Name: "report", Imports: []string{"outcore/store"}},
	}
	got := Violations(pkgs)
	want := []string{
		"outcore/engine/system/kit imports outcore/experiments",
		"outcore/engine/x imports outcore/store",
		"outcore/engine/y imports outcore/cmd/outcore/cli",
		"outcore/engine/z imports outcore/web/views",
		"outcore/report depends on outcore/web/views",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("violation %d = %q, want %q…", i, got[i], want[i])
		}
	}
	if slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "webby") || strings.Contains(s, "storefront") }) {
		t.Error("a package whose name only starts like a forbidden one was flagged")
	}
}
