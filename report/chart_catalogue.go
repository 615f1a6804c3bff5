package report

import (
	"fmt"
	"sort"

	"outcore/engine/metrics"
)

// ChartIDs lists the experiment page's charts in page order.
var ChartIDs = []string{
	"epoch-vs-mem", "epoch-vs-dim", "epoch-vs-batch", "normalised", "stages", "stage-time",
	"hit-vs-mem", "tier-hits", "disk-read", "disk-read-kind", "amplification", "io-efficiency", "worker-time", "memory", "time-to-accuracy", "accuracy",
}

// ChartAxis is the grid axis along a chart's x ("mem_limit", "dim",
// "batch_size"), or "" for a chart not drawn against one: where that axis
// has a single value the chart has nothing to draw.
func ChartAxis(id string) string {
	return map[string]string{"epoch-vs-mem": "mem_limit", "epoch-vs-dim": "dim", "epoch-vs-batch": "batch_size"}[id]
}

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
	switch id {
	case "epoch-vs-mem":
		return c.versus(ChartAxis(id), id, "Epoch time vs memory limit", "GNNDrive Fig. 9, DiskGNN Fig. 9"), true
	case "epoch-vs-dim":
		return c.versus(ChartAxis(id), id, "Epoch time vs feature dimension", "GNNDrive Fig. 8"), true
	case "epoch-vs-batch":
		return c.versus(ChartAxis(id), id, "Epoch time vs batch size", "GNNDrive Fig. 10"), true
	case "normalised":
		return c.normalised(baseline), true
	case "stages":
		return c.stages(), true
	case "stage-time":
		return c.stageTime(), true
	case "hit-vs-mem":
		return c.hitVsMem(), true
	case "tier-hits":
		return c.tierHits(), true
	case "disk-read":
		ch := c.perCell(id, "Disk read per epoch", "MiB read from the SSD per epoch",
			"DiskGNN Table 1", mean("bytes_read", 1.0/(1<<20)))
		ch.YUnit = "MiB"
		return ch, true
	case "disk-read-kind":
		return c.diskReadKind(), true
	case "amplification":
		ch := c.perCell(id, "Read amplification", "feature bytes read / bytes of the rows read",
			"DiskGNN Fig. 10", func(r RunData) (float64, bool) { return r.Digest.Amplification() })
		ch.Note = "Feature bytes read from the SSD per byte of the feature rows read from the SSD (feature_bytes_read / (rows_from_device × row size), DESIGN §5): what fetching a row costs, 1 when exactly the rows are read, more for whole blocks or pages around them, below 1 when rows read together share blocks. Cache hits do not lower it (see the hit-ratio charts). " + ch.Note + legacyNote
		if e := c.onlyLegacy(); e != "" {
			ch.Empty = e
		}
		return ch, true
	case "io-efficiency":
		return c.ioEfficiency(), true
	case "worker-time":
		return c.workerTime(), true
	case "memory":
		return c.memoryPeaks(), true
	case "time-to-accuracy":
		return c.timeToAccuracy(), true
	case "accuracy":
		return c.accuracy(), true
	}
	return Chart{}, false
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
func (c *Comparison) normalised(baseline string) Chart {
	if !contains(c.variants, baseline) && len(c.variants) > 0 {
		baseline = c.variants[0]
	}
	title := "Runtime normalised to " + baseline
	if baseline == "" {
		title = "Runtime normalised to a baseline variant"
	}
	ch := Chart{ID: "normalised", Title: title, XLabel: "grid point",
		YLabel: "epoch time / " + baseline + " epoch time", XType: "category", YType: "value", Kind: "bar",
		Note: "Each variant's mean epoch time divided by the baseline's mean epoch time at the same grid point (1 = as fast as " + baseline + ", below 1 = faster); error bars ± the variant's standard deviation divided by the baseline mean; n = the variant's runs. No bar where the baseline or the variant has no measurement (OOM, failed). After DiskGNN Fig. 8."}
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
func (c *Comparison) diskReadKind() Chart {
	ch := Chart{ID: "disk-read-kind", Title: "Disk read per epoch by file kind", XLabel: "variant · grid point", YLabel: "MiB read from the SSD per epoch", YUnit: "MiB",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Bytes read from the block device per steady epoch: feature files (features.bin and a variant's own copies of feature rows), topology files (indices, a neighbour cache on disk) and the rest of the process's reads (runtime files and others), mean over repeated runs ± one standard deviation per layer; n in the tooltip and CSV. Direct I/O is counted exactly; memory-mapped files by the page-fault reads of the threads that touch them (DESIGN §5). After DiskGNN Table 1." + legacyNote}
	key := map[string]string{"features": "feature_bytes_read", "topology": "topology_bytes_read", "other": "other_bytes_read"}
	return c.stacked(ch, []string{"features", "topology", "other"}, func(l string) func(RunData) (float64, bool) {
		return measuredMean(key[l], 1.0/(1<<20))
	})
}

// workerTime is the busy and wait worker-seconds of the sampling and
// extracting stages per epoch (DESIGN §5).
func (c *Comparison) workerTime() Chart {
	ch := Chart{ID: "worker-time", Title: "Sampler and extractor time: busy and waiting", XLabel: "variant · grid point", YLabel: "worker-seconds per epoch", YUnit: "s",
		XType: "category", YType: "value", Kind: "stack",
		Note: "Worker-seconds per steady epoch of the sampling and extracting stages, summed over each stage's workers (sampling goroutines, extractors, gather threads): busy is their CPU time, wait the rest of the time they belonged to the stage — blocked on queues, on the SSD, on another worker's reads, or runnable without a core (DESIGN §5). Mean over repeated runs ± one standard deviation per layer." + legacyNote}
	key := map[string]string{"sample busy": "sample_busy_s", "sample wait": "sample_wait_s", "extract busy": "extract_busy_s", "extract wait": "extract_wait_s"}
	return c.stacked(ch, []string{"sample busy", "sample wait", "extract busy", "extract wait"}, func(l string) func(RunData) (float64, bool) {
		return measuredMean(key[l], 1)
	})
}

// hitVsMem is the overall cache hit ratio against the memory limit, one line per variant (Ginex Fig. 5, GIDS Fig. 11).
func (c *Comparison) hitVsMem() Chart {
	ch := Chart{ID: "hit-vs-mem", Title: "Cache hit ratio vs memory limit", XLabel: MemAxisLabel, YLabel: "hit ratio",
		XType: "category", YType: "value", Kind: "line",
		Note: "Feature lookups served from memory (the GPU and CPU tiers) over all lookups; rows of disk-resident tiers (DiskGNN's disk cache and packed chunks, MariusGNN's partition buffer) were read from the SSD in the epoch and are not hits. Steady epochs; mean over repeated runs, error bars ± one standard deviation; ✕ = OOM. Variants without a feature cache have no points. After Ginex Fig. 5 and GIDS Fig. 11."}
	if c.noRuns(&ch) {
		return ch
	}
	c.overAxis(&ch, axisByKey("mem_limit"), hitRatio)
	return ch
}

// tierOrder is the display order of cache tiers.
var tierOrder = []string{metrics.TierGPU, metrics.TierCPU, metrics.TierDiskCache, metrics.TierPacked, metrics.TierPartition, metrics.TierDevice}

// tierHits is each tier's hit ratio per variant and grid point.
func (c *Comparison) tierHits() Chart {
	ch := Chart{ID: "tier-hits", Title: "Hit ratio per cache tier", XLabel: "variant · grid point", YLabel: "hits / lookups at the tier",
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
func (c *Comparison) timeToAccuracy() Chart {
	ch := Chart{ID: "time-to-accuracy", Title: "Time to accuracy", XLabel: "time since run start (s)", YLabel: "validation accuracy", XUnit: "s",
		XType: "value", YType: "value", Kind: "line",
		Note: "Validation accuracy after each epoch against the wall-clock time at the end of that epoch (evaluation included); each point is the mean over the repeated runs that reached that epoch (x: mean time, y: mean accuracy, error bars ± one standard deviation of the accuracy, n in the tooltip and CSV). OOM runs are left out. After GNNDrive Fig. 14."}
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
