package report

// accuracy is the test accuracy at each run's best validation epoch, per
// variant and grid point (DiskGNN Table 3); AccuracyRows gives the table.
func (c *Comparison) accuracy(e ChartEntry, _ string) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "grid point", YLabel: "test accuracy",
		XType: "category", YType: "value", Kind: "bar",
		Note: "Each run's test accuracy at the epoch of its best validation accuracy; mean over repeated runs ± one standard deviation, n runs. MariusGNN samples only inside buffered partitions, so lower accuracy there is expected. After " + e.Paper + "."}
	if c.noRuns(&ch) {
		return ch
	}
	cats, idx := c.cellCategories()
	ch.Categories = cats
	ch.Series = c.seriesByVariant(cats, idx, func(r RunData) (float64, bool) { _, t, ok := bestAcc(r); return t, ok })
	return ch
}

// AccuracyRow is one line of the accuracy table: a variant at a grid point.
type AccuracyRow struct {
	Variant, Cell string
	Val, Test     Point // best validation accuracy and test accuracy at that epoch
	Epochs        Point // epochs run
}

// AccuracyRows is the accuracy table (DiskGNN Table 3), variants then grid points.
func (c *Comparison) AccuracyRows() []AccuracyRow {
	cats, idx := c.cellCategories()
	val := c.seriesByVariant(cats, idx, func(r RunData) (float64, bool) { v, _, ok := bestAcc(r); return v, ok })
	test := c.seriesByVariant(cats, idx, func(r RunData) (float64, bool) { _, t, ok := bestAcc(r); return t, ok })
	eps := c.seriesByVariant(cats, idx, func(r RunData) (float64, bool) {
		if r.Digest != nil {
			return float64(r.Digest.Epochs), true
		}
		return float64(r.EpochsDone), true
	})
	var rows []AccuracyRow
	for i := range val {
		for j, p := range val[i].Points {
			rows = append(rows, AccuracyRow{Variant: val[i].Name, Cell: p.Label, Val: p, Test: test[i].Points[j], Epochs: eps[i].Points[j]})
		}
	}
	return rows
}

// bestAcc is a run's best validation accuracy and the test accuracy at that
// epoch (the first such epoch on ties), from its epochs or else from the
// store's aggregates.
func bestAcc(r RunData) (val, test float64, ok bool) {
	if !Trains(r.Compute) {
		return 0, 0, false // no model was trained: n/a
	}
	if r.Digest != nil {
		return r.Digest.BestVal, r.Digest.TestAtBest, true
	}
	if r.BestVal != nil && r.TestAt != nil {
		return *r.BestVal, *r.TestAt, true
	}
	return 0, 0, false
}
