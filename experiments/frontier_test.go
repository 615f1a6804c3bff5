package experiments

import (
	"strings"
	"testing"

	"outcore/experiments/grid"
	"outcore/store"
)

// The bisection policy, from tables: each row is the probes so far and
// what comes next.
func TestNextFrontierProbe(t *testing.T) {
	const MiB = 1 << 20
	ok := func(l int64) FrontierProbe { return FrontierProbe{Limit: l * MiB, Epoch: true} }
	bad := func(l int64) FrontierProbe { return FrontierProbe{Limit: l * MiB} }
	timed := func(p FrontierProbe, s float64) FrontierProbe { p.WallS = s; return p }
	spec := grid.FrontierSpec{Tolerance: 0.05, MaxProbes: 12}
	for _, c := range []struct {
		name        string
		floor, ceil int64 // MiB
		probes      []FrontierProbe
		next        int64 // MiB; 0 = done
		frontier    int64 // MiB
		note        string
	}{
		{"first probe at 100 %", 10, 100, nil, 100, 0, ""},
		{"fails at 100 %: the top is raised", 10, 100, []FrontierProbe{bad(100)}, 200, 0, "no epoch finished at 100MiB: raising the top"},
		{"the raised top finishes: bisect above the failure", 10, 200, []FrontierProbe{bad(100), ok(200)}, 150, 200, ""},
		{"raised FrontierRaises times: no frontier", 10, 800, []FrontierProbe{bad(100), bad(200), bad(400), bad(800)}, 0, 0, "no epoch finished even at 800MiB"},
		{"then the floor", 10, 100, []FrontierProbe{ok(100)}, 10, 100, ""},
		{"finishes at its floor: done", 10, 100, []FrontierProbe{ok(100), ok(10)}, 0, 10, "finished at its computed floor"},
		{"bisect between floor and 100 %", 10, 100, []FrontierProbe{ok(100), bad(10)}, 55, 100, ""},
		{"success moves hi down", 10, 100, []FrontierProbe{ok(100), bad(10), ok(55)}, 32, 55, ""},
		{"failure moves lo up", 10, 100, []FrontierProbe{ok(100), bad(10), ok(55), bad(32)}, 43, 55, ""},
		{"within tolerance: done", 10, 100, []FrontierProbe{ok(100), bad(10), ok(42), bad(41)}, 0, 42, ""},
		{"1 MiB steps at least", 1, 4, []FrontierProbe{ok(4), bad(1), ok(3), bad(2)}, 0, 3, ""},
		{"probe budget", 10, 1000, []FrontierProbe{ok(1000), bad(10), ok(505), bad(257), ok(381), bad(319)}, 0, 381, "stopped after 6 probes"},
		{"floor at 100 %", 100, 100, []FrontierProbe{ok(100)}, 0, 100, "finished at its computed floor"},
		{"floor above the least success", 120, 100, []FrontierProbe{ok(100)}, 0, 100, "floor is at or above"},
		{"time budget spent by the top probe: done", 10, 100, []FrontierProbe{timed(ok(100), 120)}, 0, 100, "stopped by the time budget: 1 probes took 120 s of 100 s; no failure below it probed"},
		{"time budget left: go on", 10, 100, []FrontierProbe{timed(ok(100), 30), timed(bad(10), 30)}, 55, 100, ""},
		{"time budget spent mid-bisection", 10, 100, []FrontierProbe{timed(ok(100), 30), timed(bad(10), 30), timed(ok(55), 50)}, 0, 55, "largest failure below it 10MiB"},
		{"time budget with nothing finished: no raise", 10, 100, []FrontierProbe{timed(bad(100), 150)}, 0, 0, "stopped by the time budget"},
		{"not monotone: a failure above is named", 10, 100, []FrontierProbe{ok(100), bad(10), ok(55), bad(70)}, 32, 55, "failed at 70MiB, above the frontier"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := spec
			if c.name == "probe budget" {
				s.MaxProbes = 6
			}
			if strings.HasPrefix(c.name, "time budget") {
				s.MaxCellSeconds = 100
			}
			got := NextFrontierProbe(c.floor*MiB, c.ceil*MiB, c.probes, s)
			if got.Next != c.next*MiB || got.Frontier != c.frontier*MiB || (c.next == 0) != got.Done || !strings.Contains(got.Note, c.note) {
				t.Errorf("step %+v (next %d MiB, frontier %d MiB), want next %d MiB, frontier %d MiB, note %q",
					got, got.Next/MiB, got.Frontier/MiB, c.next, c.frontier, c.note)
			}
		})
	}
}

// A top below the variant's floor is raised to the floor rounded up to
// whole MiB (firstProbes); when that probe finishes it is the floor's,
// and no second probe less than 1 MiB below it follows.
func TestFrontierFloorRoundedUp(t *testing.T) {
	const MiB = 1 << 20
	spec := grid.FrontierSpec{Tolerance: 0.1, MaxProbes: 6}
	floor := 11420*int64(MiB) + 300<<10
	top := 11421 * int64(MiB)
	got := NextFrontierProbe(floor, top, []FrontierProbe{{Limit: top, Epoch: true}}, spec)
	if !got.Done || got.Frontier != top || !strings.Contains(got.Note, "finished at its computed floor") {
		t.Errorf("step %+v, want done at %d MiB, finished at its computed floor", got, top/MiB)
	}
	// A floor 1 MiB or more below the least success is still probed.
	got = NextFrontierProbe(floor-MiB, top, []FrontierProbe{{Limit: top, Epoch: true}}, spec)
	if got.Done || got.Next != floor-MiB {
		t.Errorf("step %+v, want the floor %d next", got, floor-MiB)
	}
}

func TestFrontierGrid(t *testing.T) {
	g, err := grid.ParseGrid([]byte(`{"dataset":"tiny","axes":{"system":["fake","fake2"]},"frontier":{"tolerance":0.1}}`))
	if err != nil || g.Frontier == nil || g.Frontier.Tolerance != 0.1 {
		t.Fatalf("%+v, %v", g, err)
	}
	if back, err := grid.ParseGrid(g.JSON()); err != nil || back.Frontier == nil {
		t.Fatalf("round trip %v", err)
	}
	for _, c := range []struct{ grid, want string }{
		{`{"dataset":"tiny","system":"fake","frontier":{},"axes":{"mem_limit":["1GiB"]}}`, "a frontier search chooses its own limits"},
		{`{"dataset":"tiny","system":"fake","frontier":{},"axes":{"repeat":3}}`, "runs each probe once"},
		{`{"dataset":"tiny","system":"fake","frontier":{"tolerance":2}}`, "frontier: tolerance 2"},
		{`{"dataset":"tiny","system":"fake","frontier":{"probes":3}}`, `unknown field "probes"`},
		{`{"dataset":"tiny","system":"fake","frontier":{"max_probes":1000}}`, "max_probes 1000"},
		{`{"dataset":"tiny","system":"fake","frontier":{"max_cell_s":-5}}`, "max_cell_s -5"},
	} {
		if _, err := grid.ParseGrid([]byte(c.grid)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.grid, err, c.want)
		}
	}
}

func TestFrontierLines(t *testing.T) {
	const MiB = 1 << 20
	run := func(seq int, sys string, limit int64, status string, epochs int) store.Run {
		return store.Run{Seq: seq, System: sys, MemLimitBytes: limit * MiB, Status: status, EpochsDone: epochs}
	}
	lines := store.FrontierLines([]store.Run{
		run(0, "a", 100, store.StatusDone, 1), run(1, "b", 100, store.StatusDone, 1),
		run(2, "a", 10, store.StatusOOM, 0), run(3, "b", 10, store.StatusDone, 1),
		run(4, "a", 55, store.StatusDone, 1), run(5, "a", 32, store.StatusOOM, 0), run(6, "a", 43, store.StatusQueued, 0),
	})
	want := []store.FrontierLine{{System: "a", Frontier: 55 * MiB, FailBelow: 32 * MiB, Probes: 4, Searching: true}, {System: "b", Frontier: 10 * MiB, Probes: 2}}
	if len(lines) != 2 || lines[0] != want[0] || lines[1] != want[1] {
		t.Errorf("lines %+v, want %+v", lines, want)
	}
}
