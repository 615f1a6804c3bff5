package lint

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVariantsTakeTheMemoryPlan: every variant package (and the toy of
// "Adding a system") keeps PlanViolations' rules.
func TestVariantsTakeTheMemoryPlan(t *testing.T) {
	root := "../../engine/system"
	variants := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+"/"))
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if variantOf("outcore/engine/system/"+dir) == "" && dir != "systest/toy" {
			return nil
		}
		variants[dir] = true
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		v, err := PlanViolations("engine/system/"+rel, src)
		if err != nil {
			return err
		}
		for _, line := range v {
			t.Error(line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"alipg", "dglondisk", "diskgnn", "gids", "ginex", "gnndrive", "helios", "mariusgnn", "pygplus", "systest/toy"} {
		if !variants[want] {
			t.Errorf("read no file of %s (read %v)", want, variants)
		}
	}
}

// TestPlanViolations checks the rules on made-up files.
func TestPlanViolations(t *testing.T) {
	long := "package v\n\nfunc (x *v) Prepare() error {\n" + strings.Repeat("\t_ = 1\n", MaxPrepareLines-1) + "}\n"
	short := "package v\n\nfunc (x *v) Prepare() error {\n" + strings.Repeat("\t_ = 1\n", MaxPrepareLines-3) + "\treturn nil\n}\n"
	for _, c := range []struct {
		name, src, want string
	}{
		{"long", long, "Prepare is 81 lines"},
		{"short", short, ""},
		{"limit", "package v\n\nfunc f(b *B) { b.LimitGo(1, 2, 3) }\n", "calls LimitGo"},
		{"strict", "package v\n\nfunc f(b *B) { b.LimitGoStrict(1, 2, 3) }\n", "calls LimitGoStrict"},
		{"runtime", "package v\n\nimport \"runtime/debug\"\n\nfunc f() { debug.SetMemoryLimit(1) }\n", "calls SetMemoryLimit"},
		{"hold", "package v\n\nfunc f(b *B) { b.HoldOutside(nil) }\n", "calls HoldOutside"},
		{"held text", "package v\n\nfunc f(e *E) { e.Deviate(\"the cache is held outside the %d MiB budget\", 1) }\n", "hand-writes"},
		{"fixed text", "package v\n\nvar d = \"the cache is host memory held outside the host budget\"\n", ""},
		{"enter", "package v\n\nfunc f(b *B) { b.Enter(p.heap()); b.Apply(p.memory()) }\n", ""},
		{"bisection", "package v\n\nfunc f() int64 { return kit.MinBudget(fits) }\n", "calls MinBudget"},
		{"floor", "package v\n\nvar m = kit.MinMemoryOf(parse, fits)\n", "calls MinMemoryOf"},
		{"least text", "package v\n\nvar e = fmt.Errorf(\"too small: the least budget that fits is %d MiB\", n)\n", "hand-writes the least budget"},
		{"minimum text", "package v\n\nvar e = fmt.Errorf(\"below the minimum of %d MiB\", n)\n", "hand-writes the least budget"},
		{"one sizing", "package v\n\nfunc f() { p, least := kit.Size(size, s); _ = p.memory(least) }\n", ""},
	} {
		v, err := PlanViolations(c.name+".go", []byte(c.src))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := strings.Join(v, "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: violations %q, want %q", c.name, got, c.want)
		}
	}
}
