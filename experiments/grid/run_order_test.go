package grid

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func orderOf(t *testing.T, grid string) []string {
	t.Helper()
	g, err := ParseGrid([]byte(grid))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, c := range g.Cells() {
		if c.Seq != i {
			t.Fatalf("cell %d has seq %d", i, c.Seq)
		}
		out = append(out, fmt.Sprintf("%d:%s:%s", c.Repeat, c.System, c.MemLimit))
	}
	return out
}

const orderGrid = `{"dataset":"tiny","axes":{"system":["pyg+","ginex"],"mem_limit":["64MiB","128MiB"],"repeat":2}%s}`

func TestRunOrder(t *testing.T) {
	grid := orderOf(t, fmt.Sprintf(orderGrid, ""))
	want := "0:pyg+:64MiB 0:pyg+:128MiB 0:ginex:64MiB 0:ginex:128MiB 1:pyg+:64MiB 1:pyg+:128MiB 1:ginex:64MiB 1:ginex:128MiB"
	if got := strings.Join(grid, " "); got != want {
		t.Errorf("grid order %s", got)
	}
	inter := orderOf(t, fmt.Sprintf(orderGrid, `,"run_order":"interleave"`))
	want = "0:pyg+:64MiB 0:ginex:64MiB 0:pyg+:128MiB 0:ginex:128MiB 1:pyg+:64MiB 1:ginex:64MiB 1:pyg+:128MiB 1:ginex:128MiB"
	if got := strings.Join(inter, " "); got != want {
		t.Errorf("interleaved order %s", got)
	}
	// random: the same cells, each repeat complete before the next, the
	// same order for the same seed (so the grid records it), another for
	// another seed
	rnd := orderOf(t, fmt.Sprintf(orderGrid, `,"run_order":"random","run_order_seed":7`))
	if slices.Equal(rnd, orderOf(t, fmt.Sprintf(orderGrid, `,"run_order":"random","run_order_seed":7`))) == false {
		t.Error("a random order with one seed is not reproducible")
	}
	differs := false
	for s := 1; s <= 8 && !differs; s++ {
		other := orderOf(t, fmt.Sprintf(orderGrid, fmt.Sprintf(`,"run_order":"random","run_order_seed":%d`, 100+s)))
		differs = !slices.Equal(rnd, other)
	}
	if !differs {
		t.Error("eight other seeds give the same random order")
	}
	sorted := append([]string(nil), rnd...)
	slices.Sort(sorted)
	all := append([]string(nil), grid...)
	slices.Sort(all)
	if !slices.Equal(sorted, all) {
		t.Errorf("random order %v is not a permutation of %v", rnd, grid)
	}
	for i, c := range rnd {
		if want := fmt.Sprint(i / 4); !strings.HasPrefix(c, want+":") {
			t.Errorf("random order %v mixes repeats", rnd)
			break
		}
	}
	// the grid file keeps the choice
	g, _ := ParseGrid([]byte(fmt.Sprintf(orderGrid, `,"run_order":"random","run_order_seed":7`)))
	if j := string(g.JSON()); !strings.Contains(j, `"run_order":"random"`) || !strings.Contains(j, `"run_order_seed":7`) {
		t.Errorf("grid JSON %s", j)
	}
	for _, bad := range []string{`,"run_order":"sorted"`, `,"run_order":3`, `,"run_order_seed":"x"`} {
		if _, err := ParseGrid([]byte(fmt.Sprintf(orderGrid, bad))); err == nil || !strings.Contains(err.Error(), "run_order") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// Repeats get distinct seeds (recorded in each run's configuration); the
// cells of one repeat share theirs.
func TestRepeatSeeds(t *testing.T) {
	g, err := ParseGrid([]byte(`{"dataset":"tiny","seed":40,"axes":{"system":["fake","reference"],"repeat":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[int]map[int64]bool{}
	for _, c := range g.Cells() {
		cfg, err := g.CellConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		if seeds[c.Repeat] == nil {
			seeds[c.Repeat] = map[int64]bool{}
		}
		seeds[c.Repeat][cfg.Seed] = true
	}
	for rep := 0; rep < 3; rep++ {
		if len(seeds[rep]) != 1 || !seeds[rep][RepeatSeed(40, rep)] {
			t.Errorf("repeat %d seeds %v, want only %d", rep, seeds[rep], 40+rep)
		}
	}
}
