package kit

import "testing"

func TestFitHostTier(t *testing.T) {
	budget := int64(1 << 30)
	room := budget - ReserveBytes(budget) // what the budget holds beside the reserve
	for _, c := range []struct {
		name                          string
		budget, host, want, nodes, rb int64
		rows                          int64
		feasible                      bool
	}{
		{"no budget: all asked", 0, 1 << 40, 1000, 10, 512, 1000, true},
		{"room for all", budget, 0, 1000, 10, 512, 1000, true},
		{"cut to what is left after the slot map", budget, room - 40 - 512*3, 1000, 10, 512, 3, true},
		{"nothing left: no rows, still feasible", budget, room, 1000, 10, 512, 0, true},
		{"host over the budget", budget, room + 1, 1000, 10, 512, 0, false},
		{"none asked", budget, room + 1, 0, 10, 512, 0, false},
	} {
		rows, ok := FitHostTier(c.budget, c.host, c.want, c.nodes, c.rb)
		if rows != c.rows || ok != c.feasible {
			t.Errorf("%s: %d rows, feasible %v; want %d, %v", c.name, rows, ok, c.rows, c.feasible)
		}
	}
}
