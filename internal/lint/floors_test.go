package lint

import (
	"os"
	"strings"
	"testing"
)

// TestFloors: the imports between top-level folders point down the
// floors, tests included, and every top-level folder with Go code has a
// floor.
func TestFloors(t *testing.T) {
	pkgs := goList(t, "-test", "./...")
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	for _, v := range FloorViolations(pkgs) {
		t.Error(v)
	}
	if len(UpwardAllowed) > 1 {
		t.Errorf("%d upward imports allowed; the architecture allows at most one", len(UpwardAllowed))
	}
}

// TestInternalHoldsLeaves: no package under internal/ imports a package of
// the module outside internal/ (the command line lives in cmd/).
func TestInternalHoldsLeaves(t *testing.T) {
	for _, p := range goList(t, "./internal/...") {
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "outcore/") && topFolder(imp) != "internal" && topFolder(imp) != "third_party" {
				t.Errorf("%s imports %s: internal/ holds only leaves", p.ImportPath, imp)
			}
		}
	}
}

// TestFloorsDoc: docs/ARCHITECTURE.md draws the floors of lint.Floors,
// from the top down, one line each.
func TestFloorsDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, after, ok := strings.Cut(doc, "<!-- floors:begin -->")
	body, _, ok2 := strings.Cut(after, "<!-- floors:end -->")
	if !ok || !ok2 {
		t.Fatal("docs/ARCHITECTURE.md has no <!-- floors:begin --> … <!-- floors:end --> section")
	}
	if got, want := strings.TrimSpace(body), FloorsDiagram(); got != want {
		t.Errorf("docs/ARCHITECTURE.md floors section is\n%s\nwant\n%s", got, want)
	}
}

// TestFloorViolations checks the rule on made-up packages.
func TestFloorViolations(t *testing.T) {
	pkgs := []Package{
		{ImportPath: "outcore/engine/x", Imports: []string{"outcore/internal/osutil", "fmt"}},
		{ImportPath: "outcore/engine/y [outcore/engine/y.test]", Imports: []string{"outcore/store"}},
		{ImportPath: "outcore/web", Imports: []string{"outcore/report", "outcore/engine/train"}},
		{ImportPath: "outcore/newtop/z", Imports: nil},
	}
	got := FloorViolations(pkgs)
	want := []string{
		`outcore/engine/y imports outcore/store: store/ is above engine/ (docs/ARCHITECTURE.md, Floors)`,
		`outcore/newtop/z: top-level folder "newtop" has no floor in lint.Floors`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
