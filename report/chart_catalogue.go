package report

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"outcore/engine/metrics"
)

// Chart builds one view by id; baseline names the variant the normalised
// runtime divides by ("" = the first variant). ok is false for an unknown id.
func (c *Comparison) Chart(id, baseline string) (Chart, bool) {
	ch, ok := c.chart(id, baseline)
	if ok && ch.Empty == "" && !hasMarks(ch) {
		ch.Empty = "Nothing measured yet: the chart fills in as runs report epochs."
	}
	return ch, ok
}

// hasMarks reports whether a chart has anything to draw: a value, or an OOM or failed cell.
func hasMarks(ch Chart) bool {
	for _, s := range ch.Series {
		for _, p := range s.Points {
			if p.Y != nil || statusWord(p.Status) != "" {
				return true
			}
		}
	}
	return false
}

func (c *Comparison) chart(id, baseline string) (Chart, bool) {
	e, ok := chartOf(ScopeExperiment, id)
	if !ok {
		return Chart{}, false
	}
	ch, _ := e.Build(e, ChartInput{Cmp: c, Baseline: baseline})
	return ch, true
}

// versusChart is epoch time along the entry's grid axis.
func versusChart(c *Comparison, e ChartEntry, _ string) Chart {
	return c.versus(e.Axis, e.ID, e.Title, e.Paper)
}

// diskRead is the MiB read from the SSD per epoch per grid point.
func (c *Comparison) diskRead(e ChartEntry, _ string) Chart {
	ch := c.perCell(e.ID, e.Title, "MiB read from the SSD per epoch",
		e.Paper, mean("bytes_read", 1.0/(1<<20)))
	ch.YUnit = "MiB"
	return ch
}

// amplification is the feature bytes read per byte of the rows read.
func (c *Comparison) amplification(e ChartEntry, _ string) Chart {
	ch := c.perCell(e.ID, e.Title, "feature bytes read / bytes of the rows read",
		e.Paper, func(r RunData) (float64, bool) { return r.Digest.Amplification() })
	ch.Note = "Feature bytes read from the SSD per byte of the feature rows read from the SSD (feature_bytes_read / (rows_from_device × row size), DESIGN §5): what fetching a row costs, 1 when exactly the rows are read, more for whole blocks or pages around them, below 1 when rows read together share blocks. Cache hits do not lower it (see the hit-ratio charts). " + ch.Note + legacyNote
	if e := c.onlyLegacy(); e != "" {
		ch.Empty = e
	}
	return ch
}

// Charts builds every view in page order.
func (c *Comparison) Charts(baseline string) []Chart {
	out := make([]Chart, 0, len(ChartIDs))
	for _, id := range ChartIDs {
		ch, _ := c.Chart(id, baseline)
		out = append(out, ch)
	}
	return out
}

// normalised is runtime relative to a baseline variant at each grid point (DiskGNN Fig. 8).
func (c *Comparison) normalised(e ChartEntry, baseline string) Chart {
	if !contains(c.variants, baseline) && len(c.variants) > 0 {
		baseline = c.variants[0]
	}
	title := "Runtime normalised to " + baseline
	if baseline == "" {
		title = e.Title
	}
	ch := Chart{ID: e.ID, Title: title, XLabel: "grid point",
		YLabel: "epoch time / " + baseline + " epoch time", XType: "category", YType: "value", Kind: "bar",
		Note: "Each variant's mean epoch time divided by the baseline's mean epoch time at the same grid point (1 = as fast as " + baseline + ", below 1 = faster); error bars ± the variant's standard deviation divided by the baseline mean; n = the variant's runs. No bar where the baseline or the variant has no measurement (OOM, failed). After " + e.Paper + "."}
	if c.noRuns(&ch) {
		return ch
	}
	cats, idx := c.cellCategories()
	ch.Categories = cats
	base := map[int]float64{}
	for _, s := range c.seriesByVariant(cats, idx, mean("epoch_s", 1)) {
		if s.Name != baseline {
			continue
		}
		for _, p := range s.Points {
			if p.Y != nil && *p.Y > 0 {
				base[int(p.X)] = *p.Y
			}
		}
	}
	for _, s := range c.seriesByVariant(cats, idx, mean("epoch_s", 1)) {
		for i := range s.Points {
			p := &s.Points[i]
			b, ok := base[int(p.X)]
			if p.Y == nil {
				continue
			}
			if !ok {
				p.Y = nil
				p.Status = StatusNoBaseline
				p.Detail = "no " + baseline + " measurement at this grid point"
				continue
			}
			y := *p.Y / b
			p.Y, p.SD, p.Min, p.Max = &y, p.SD/b, p.Min/b, p.Max/b
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// diskReadKind is the device reads per epoch by file kind: features,
// topology and the rest (DiskGNN Table 1, split as DESIGN §5 measures it).
func (c *Comparison) diskReadKind(e ChartEntry, _ string) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "variant · grid point", YLabel: "MiB read from the SSD per epoch", YUnit: "MiB",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Bytes read from the block device per steady epoch: feature files (features.bin and a variant's own copies of feature rows), topology files (indices, a neighbour cache on disk) and the rest of the process's reads (runtime files and others), mean over repeated runs ± one standard deviation per layer; n in the tooltip and CSV. Direct I/O is counted exactly; memory-mapped files by the page-fault reads of the threads that touch them (DESIGN §5). After " + e.Paper + "." + legacyNote}
	key := map[string]string{"features": "feature_bytes_read", "topology": "topology_bytes_read", "other": "other_bytes_read"}
	return c.stacked(ch, []string{"features", "topology", "other"}, func(l string) func(RunData) (float64, bool) {
		return measuredMean(key[l], 1.0/(1<<20))
	})
}

// workerTime is the busy and wait worker-seconds of the sampling and
// extracting stages per epoch (DESIGN §5).
func (c *Comparison) workerTime(e ChartEntry, _ string) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "variant · grid point", YLabel: "worker-seconds per epoch", YUnit: "s",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Worker-seconds per steady epoch of the sampling and extracting stages, summed over each stage's workers (sampling goroutines, extractors, gather threads): busy is their CPU time, wait the rest of the time they belonged to the stage — blocked on queues, on the SSD, on another worker's reads, or runnable without a core (DESIGN §5). Mean over repeated runs ± one standard deviation per layer." + legacyNote}
	key := map[string]string{"sample busy": "sample_busy_s", "sample wait": "sample_wait_s", "extract busy": "extract_busy_s", "extract wait": "extract_wait_s"}
	return c.stacked(ch, []string{"sample busy", "sample wait", "extract busy", "extract wait"}, func(l string) func(RunData) (float64, bool) {
		return measuredMean(key[l], 1)
	})
}

// hitVsMem is the overall cache hit ratio against the memory limit, one line per variant (Ginex Fig. 5, GIDS Fig. 11).
func (c *Comparison) hitVsMem(e ChartEntry, _ string) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: MemAxisLabel, YLabel: "hit ratio",
		XType: "category", YType: "value", Kind: "line",
		Note: "Feature lookups served from memory (the GPU and CPU tiers) over all lookups; rows of disk-resident tiers (DiskGNN's disk cache and packed chunks, MariusGNN's partition buffer) were read from the SSD in the epoch and are not hits. Steady epochs; mean over repeated runs, error bars ± one standard deviation; ✕ = OOM. Variants without a feature cache have no points. After " + e.Paper + "."}
	if c.noRuns(&ch) {
		return ch
	}
	c.overAxis(&ch, axisByKey("mem_limit"), hitRatio)
	return ch
}

// tierOrder is the display order of cache tiers.
var tierOrder = []string{metrics.TierGPU, metrics.TierCPU, metrics.TierDiskCache, metrics.TierPacked, metrics.TierPartition, metrics.TierDevice}

// tierHits is each tier's hit ratio per variant and grid point.
func (c *Comparison) tierHits(e ChartEntry, _ string) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "variant · grid point", YLabel: "hits / lookups at the tier",
		XType: "category", YType: "value", Kind: "bar",
		Note: "For each memory tier (gpu, cpu), the lookups that reached it and were served there (hits / lookups at the tier); for the ssd tier, the share of all lookups served from the SSD (read from the features file for the batch, through the page cache for a memory-mapped variant: every row that reaches it is served there, so its own ratio would be 1). Steady epochs, mean over repeated runs ± one standard deviation. The disk-resident tiers (disk cache, packed chunks, partition buffer) serve rows read from the variant's own files in the epoch and are shown as their own tiers."}
	if c.noRuns(&ch) {
		return ch
	}
	present := map[string]bool{}
	for _, r := range c.runs {
		if r.Digest != nil {
			for t := range r.Digest.Tiers {
				present[t] = true
			}
		}
	}
	var tiers []string
	for _, t := range tierOrder {
		if present[t] {
			tiers = append(tiers, t)
			delete(present, t)
		}
	}
	var rest []string
	for t := range present {
		rest = append(rest, t)
	}
	sort.Strings(rest)
	tiers = append(tiers, rest...)
	if len(tiers) == 0 {
		ch.Empty = "No run has reported cache tiers yet."
		return ch
	}
	cats, cells := c.variantCellRuns()
	ch.Categories = cats
	for i, tier := range tiers {
		col, mk := style(i + 1)
		s := Series{Name: metrics.TierLabel(tier), Color: col, Marker: mk}
		t := tier
		for _, cl := range cells {
			if cl == nil {
				continue
			}
			s.Points = append(s.Points, aggregate(cl, func(r RunData) (float64, bool) {
				if r.Digest == nil || r.Digest.Tiers[t].Lookups == 0 {
					return 0, false
				}
				tc := r.Digest.Tiers[t]
				if t == metrics.TierDevice && r.Digest.Lookups > 0 {
					// the last tier serves every row that reaches it: its
					// share of all lookups is the number that says something
					return float64(tc.Hits) / r.Digest.Lookups, true
				}
				return float64(tc.Hits) / float64(tc.Lookups), true
			}))
		}
		sortPoints(s.Points)
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// TTAMinEvaluated is how many evaluated epochs the time-to-accuracy chart
// needs in at least one run before it draws: one point is not a curve.
const TTAMinEvaluated = 2

// timeToAccuracy is validation accuracy against wall-clock time (GNNDrive
// Fig. 14): one line per variant and grid point, one point per evaluated
// epoch. x is the epoch record's wall_s, the seconds since the run started
// at the end of that epoch: the variant's preparation (Prepare: Ginex's
// neighbour cache, DiskGNN's offline sampling and packing, ...) and the
// evaluations after earlier epochs count, as the paper's curves charge a
// system everything it spends before it reaches an accuracy (its §5.4 puts
// MariusGNN's preparation in its overall time). Repeated runs are
// aggregated per epoch number, never per position: the point of epoch k is
// the mean time and mean validation accuracy (± one standard deviation, n)
// over the runs that evaluated epoch k, so no point mixes epochs. Epochs
// without an evaluation (eval_every) are left out, never drawn as 0; OOM
// runs are left out as on the other charts. With no run of TTAMinEvaluated
// evaluated epochs the chart is empty and says why (ttaEmpty).
func (c *Comparison) timeToAccuracy(e ChartEntry, _ string) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "wall-clock time since the run started (s)", YLabel: "validation accuracy", XUnit: "s",
		XType: "value", YType: "value", Kind: "line",
		Note: "Validation accuracy after each evaluated epoch against the wall-clock time at the end of that epoch, counted from the run's start: preparation and the evaluations after earlier epochs included; epochs without an evaluation (eval_every) are left out. Each point is the mean over the repeated runs that evaluated that epoch (x: mean time, y: mean accuracy, error bars ± one standard deviation of the accuracy, n in the tooltip and CSV). OOM runs are left out. After " + e.Paper + "."}
	if c.noRuns(&ch) {
		return ch
	}
	type epochRuns struct {
		walls, accs []float64
		ids         []int64
	}
	type group struct {
		variant, name string
		cell          *Cell
		epochs        map[int]*epochRuns
	}
	var groups []*group
	byName := map[string]*group{}
	var st ttaState
	for _, r := range c.runs { // in variant, then grid order
		if r.Digest == nil {
			continue
		}
		if r.Status == RunOOM {
			st.oom++
			continue
		}
		st.runs++
		st.trains = st.trains || Trains(r.Compute)
		st.most = max(st.most, len(r.Digest.Curve))
		if len(r.Digest.Curve) == 0 {
			continue
		}
		name := r.System
		if l := c.cellLabel(r); l != "" {
			name += " · " + l
		}
		g := byName[name]
		if g == nil {
			g = &group{variant: r.System, name: name, cell: cellOf(r), epochs: map[int]*epochRuns{}}
			byName[name] = g
			groups = append(groups, g)
		}
		for _, p := range r.Digest.Curve {
			er := g.epochs[p.Epoch]
			if er == nil {
				er = &epochRuns{}
				g.epochs[p.Epoch] = er
			}
			er.walls, er.accs, er.ids = append(er.walls, p.WallS), append(er.accs, p.ValAcc), append(er.ids, r.ID)
		}
	}
	if st.most < TTAMinEvaluated {
		ch.Empty = ttaEmpty(st)
		return ch
	}
	perVariant := map[string]int{}
	for _, g := range groups {
		col, mk := c.seriesStyle(g.variant)
		s := Series{Name: g.name, Color: col, Marker: mk, Dash: perVariant[g.variant] % 4}
		perVariant[g.variant]++
		for _, ep := range slices.Sorted(maps.Keys(g.epochs)) {
			er := g.epochs[ep]
			pt := point(summarise(er.walls).mean, fmt.Sprintf("epoch %d", ep), er.accs)
			pt.Runs, pt.Cell = er.ids, g.cell
			s.Points = append(s.Points, pt)
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// ttaState is what the time-to-accuracy chart found in the runs: runs
// with finished epochs (OOM runs apart), whether any trains a model, and
// the most evaluated epochs of one run.
type ttaState struct {
	runs, oom, most int
	trains          bool
}

// ttaEmpty says why the time-to-accuracy chart has nothing to draw.
func ttaEmpty(st ttaState) string {
	const need = "a curve needs validation accuracy after two epochs or more"
	switch {
	case st.runs == 0 && st.oom > 0:
		return "Only runs that ran out of memory finished epochs, and they are left out."
	case st.runs == 0:
		return "No epoch has finished yet."
	case !st.trains:
		return "The runs train no model (compute none or model:PROFILE), so no epoch has an accuracy; time to accuracy needs compute cpu."
	case st.most == 0:
		return "No finished epoch has been evaluated yet (eval_every skips epochs; the last is always evaluated): " + need + "."
	}
	return "Each run has validation accuracy after one epoch only: " + need + "; run more epochs or evaluate more often (eval_every)."
}
