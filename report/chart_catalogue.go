package report

import (
	"fmt"
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

// timeToAccuracy is validation accuracy against wall-clock time (GNNDrive
// Fig. 14): one line per variant and grid point, each point an epoch —
// its mean wall-clock time and mean validation accuracy over the repeated
// runs that reached it, error bars ± one standard deviation of the accuracy.
func (c *Comparison) timeToAccuracy(e ChartEntry, _ string) Chart {
	ch := Chart{ID: e.ID, Title: e.Title, XLabel: "time since run start (s)", YLabel: "validation accuracy", XUnit: "s",
		XType: "value", YType: "value", Kind: "line",
		Note: "Validation accuracy after each epoch against the wall-clock time at the end of that epoch (evaluation included); each point is the mean over the repeated runs that reached that epoch (x: mean time, y: mean accuracy, error bars ± one standard deviation of the accuracy, n in the tooltip and CSV). OOM runs are left out. After " + e.Paper + "."}
	type group struct {
		variant, name string
		runs          []RunData
	}
	var groups []*group
	byName := map[string]*group{}
	for _, r := range c.runs { // in variant, then grid order
		if r.Digest == nil || r.Status == RunOOM {
			continue
		}
		name := r.System
		if l := c.cellLabel(r); l != "" {
			name += " · " + l
		}
		g := byName[name]
		if g == nil {
			g = &group{variant: r.System, name: name}
			byName[name] = g
			groups = append(groups, g)
		}
		g.runs = append(g.runs, r)
	}
	perVariant := map[string]int{}
	for _, g := range groups {
		col, mk := c.seriesStyle(g.variant)
		s := Series{Name: g.name, Color: col, Marker: mk, Dash: perVariant[g.variant] % 4}
		perVariant[g.variant]++
		for k := 0; ; k++ {
			var walls, accs []float64
			var ids []int64
			epoch := 0
			for _, r := range g.runs {
				if k < len(r.Digest.Curve) {
					p := r.Digest.Curve[k]
					walls, accs, ids, epoch = append(walls, p.WallS), append(accs, p.ValAcc), append(ids, r.ID), p.Epoch
				}
			}
			if len(accs) == 0 {
				break
			}
			pt := point(summarise(walls).mean, fmt.Sprintf("epoch %d", epoch), accs)
			pt.Runs = ids
			s.Points = append(s.Points, pt)
		}
		ch.Series = append(ch.Series, s)
	}
	if len(ch.Series) == 0 {
		ch.Empty = "No epoch has finished yet."
	}
	return ch
}
