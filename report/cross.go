package report

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"outcore/store"
)

// A comparison across experiments (DESIGN §6) pools the runs of two or
// more experiments, optionally only the cells a filter picks, into one
// Comparison with the experiment as one more grid axis: the same charts
// then show each variant's cells side by side per experiment. Changes
// lists the cells measured in more than one experiment and flags those
// that got slower beyond their spread.

// LoadCrossComparison loads experiments ids (in that order) into one
// comparison; conds, when set, keep only the runs that meet them.
func LoadCrossComparison(ctx context.Context, src Source, cache *DigestCache, ids []int64, conds []store.Cond) (*Comparison, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: pick at least one experiment", ErrFilter)
	}
	var all []RunData
	var runs []store.Run
	byExp := map[int64][]store.Run{}
	for order, id := range ids {
		cmp, err := LoadComparison(ctx, src, cache, id)
		if err != nil {
			return nil, err
		}
		keep := map[int64]bool{}
		if len(conds) > 0 {
			rs, err := src.Runs(ctx, store.RunFilter{ExperimentID: id, Current: true, Conds: conds})
			if err != nil {
				return nil, err
			}
			for _, r := range rs {
				keep[r.ID] = true
			}
		}
		for _, r := range cmp.runs {
			if len(conds) > 0 && !keep[r.ID] {
				continue
			}
			r.Experiment, r.ExpLabel, r.ExpOrder = id, fmt.Sprintf("#%d", id), order
			all = append(all, r)
		}
		rs, err := src.Runs(ctx, store.RunFilter{ExperimentID: id, Current: true})
		if err != nil {
			return nil, err
		}
		runs = append(runs, rs...)
		for _, r := range rs {
			if len(conds) == 0 || keep[r.ID] {
				byExp[id] = append(byExp[id], r)
			}
		}
	}
	cmp := NewComparison(all)
	cmp.meta = MetaOf(0, runs)
	cmp.caveats = crossCaveats(ids, byExp)
	return cmp, nil
}

// CellChange is one variant's grid point measured in two experiments:
// the mean epoch time in each, over runs of the same epoch kind (warm
// against warm, cold against cold), and whether it got slower beyond its
// spread. Where the two experiments measured the point only in different
// kinds, Unlike says so and nothing is compared.
type CellChange struct {
	Variant, Cell string // the grid point without the experiment
	// Epochs is the kind of epochs both sides' means are over
	// (Digest.EpochKind: warm, cold, or cold and warm).
	Epochs   string
	From, To Point  // mean epoch time in the earlier and later experiment
	FromExp  string // "#3"
	ToExp    string
	Ratio    float64 // To / From
	Slower   bool    // slower beyond the spread (SlowerBeyondSpread)
	// Unlike is set when the experiments measured the point only in
	// different epoch kinds: "#3 cold, #5 warm" (From, To and Ratio unset).
	Unlike string
}

// Changes compares each variant's grid point between consecutive
// experiments of a cross comparison that both measured it, runs of one
// epoch kind against runs of the same kind only (a cold first epoch is no
// measure of a warm one).
func (c *Comparison) Changes() []CellChange {
	type key struct{ variant, cell string }
	type at struct {
		order int
		kind  string
	}
	var g cellGroups[key, at]
	orders := map[key]map[int]string{} // the experiments' labels, by order
	for _, r := range c.runs {
		k := key{r.System, c.cellLabel(r, "experiment")}
		kind := EpochsCold
		if r.Digest != nil {
			kind = r.Digest.EpochKind()
		}
		g.add(k, at{r.ExpOrder, kind}, func() *cell { return &cell{x: float64(r.ExpOrder), label: r.ExpLabel} }, r)
		if orders[k] == nil {
			orders[k] = map[int]string{}
		}
		orders[k][r.ExpOrder] = r.ExpLabel
	}
	kinds := []string{EpochsWarm, EpochsCold, EpochsMixed}
	var out []CellChange
	for _, k := range g.keys {
		var os []int
		for o := range orders[k] {
			os = append(os, o)
		}
		sort.Ints(os)
		cell := k.cell
		if cell == "" {
			cell = "all runs"
		}
		for i := 1; i < len(os); i++ {
			var measuredIn [2][]string
			compared := false
			for _, kind := range kinds {
				ca, cb := g.cells[k][at{os[i-1], kind}], g.cells[k][at{os[i], kind}]
				var a, b Point
				if ca != nil {
					if a = aggregate(ca, mean("epoch_s", 1)); a.Y != nil {
						measuredIn[0] = append(measuredIn[0], kind)
					}
				}
				if cb != nil {
					if b = aggregate(cb, mean("epoch_s", 1)); b.Y != nil {
						measuredIn[1] = append(measuredIn[1], kind)
					}
				}
				if a.Y == nil || b.Y == nil || *a.Y <= 0 {
					continue
				}
				compared = true
				out = append(out, CellChange{Variant: k.variant, Cell: cell, Epochs: kind, From: a, To: b, FromExp: a.Label, ToExp: b.Label,
					Ratio: *b.Y / *a.Y, Slower: SlowerBeyondSpread(a, b)})
			}
			if !compared && len(measuredIn[0]) > 0 && len(measuredIn[1]) > 0 {
				out = append(out, CellChange{Variant: k.variant, Cell: cell, FromExp: orders[k][os[i-1]], ToExp: orders[k][os[i]],
					Unlike: fmt.Sprintf("%s %s, %s %s", orders[k][os[i-1]], strings.Join(measuredIn[0], " and "), orders[k][os[i]], strings.Join(measuredIn[1], " and "))})
			}
		}
	}
	return out
}

// SlowerBeyondSpread reports whether b's mean epoch time is above a's by
// more than their spread: more than two standard errors of the difference
// (√(sd_a²/n_a + sd_b²/n_b)), and at least 10% of a's mean when either
// side has a single run (no spread measured).
func SlowerBeyondSpread(a, b Point) bool {
	if a.Y == nil || b.Y == nil {
		return false
	}
	d := *b.Y - *a.Y
	if d <= 0 {
		return false
	}
	if a.N < 2 || b.N < 2 {
		return d > 0.1**a.Y
	}
	se := math.Sqrt(a.SD*a.SD/float64(a.N) + b.SD*b.SD/float64(b.N))
	return d > 2*se
}

// ParseIDs reads experiment ids ("3", "3,5 7").
func ParseIDs(vals []string) ([]int64, error) {
	var out []int64
	seen := map[int64]bool{}
	for _, v := range vals {
		for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			var id int64
			if _, err := fmt.Sscan(f, &id); err != nil || id <= 0 || fmt.Sprint(id) != f {
				return nil, fmt.Errorf("%w: experiment id %q is not a whole number above 0", ErrFilter, f)
			}
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out, nil
}
