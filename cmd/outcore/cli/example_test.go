package cli

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"outcore/experiments"
	"outcore/experiments/grid"
	"outcore/store"
	"outcore/web"
)

// TestExampleStartsAndTheREADMESaysWhat: the example a first start writes
// on `default` (the small preset) is accepted by the queue as it is (its
// cells below a floor skipped and refused with their reasons, not a 422),
// and the README's description of it is true: its cells, and on a 2-core
// machine (the floors depend on the cores) how many run and how many are
// refused.
func TestExampleStartsAndTheREADMESaysWhat(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := firstStart(ctx, dir, "", io.Discard, log.New(io.Discard, "", 0)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(web.ExamplesDir(dir), exampleFile))
	if err != nil {
		t.Fatal(err)
	}
	g, err := grid.ParseGrid(b)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := experiments.New(experiments.Options{DataDir: dir, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	refused := m.Refusals(g, nil)
	e, err := m.Create(ctx, b)
	if err != nil {
		t.Fatalf("the example on default: %v", err)
	}
	if e.Counts.Total+len(e.Refused) != g.Count() || len(e.Refused) != len(refused) {
		t.Fatalf("%d runs + %d refused of %d cells", e.Counts.Total, len(e.Refused), g.Count())
	}
	for _, r := range e.Refused {
		if !strings.Contains(r.Reason, "needs to start on default") {
			t.Errorf("refused without a reason: %+v", r)
		}
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	lims := strings.Join(g.Axes.MemLimit, ", ")
	for _, want := range []string{
		fmt.Sprintf("× %s memory limits × %d repeats, %d epochs each", map[int]string{3: "three", 4: "four", 5: "five"}[len(g.Axes.MemLimit)], g.Axes.Repeat, exampleEpochs),
		fmt.Sprintf("its %d cells are", g.Count()),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the README does not say %q (limits %s)", want, lims)
		}
	}
	if runtime.NumCPU() == 2 {
		if want := fmt.Sprintf("%d runs and %d cells that cannot start", e.Counts.Total, len(e.Refused)); !strings.Contains(text, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
}
