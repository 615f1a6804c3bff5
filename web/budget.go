package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/engine/vocab"
	"outcore/experiments/grid"
	"outcore/internal/units"
	"outcore/store"
	"outcore/web/views"
)

// Budget-aware grid design (DESIGN §6): the form's memory limits default
// to shares of the chosen dataset's feature bytes, the preview marks the
// cells a variant cannot start in (its sizing's least memory,
// grid.VariantMinMemory) and estimates the grid's duration from
// past runs of similar cells; an experiment's page says how long its
// remaining runs will take.

// limitShares are the shares of a dataset's feature bytes the form offers
// as memory limits (the papers' axes are shares of the features: 25/50/
// 100%), smallest first.
var limitShares = []int{10, 25, 50, 75, 100, 150, 200, 300, 400}

// formConfig is the engine configuration the form's cells start from: the
// engine's defaults (one set for the form, grid files and the API), the
// form's first batch size and fanout, and the data directory, so that the
// floor is the one the submit checks (vocab.MinMemoryFor probes the first
// batch where the dataset exists).
func formConfig(in FormInput, meta dataset.Meta, dataDir string) vocab.Config {
	cfg := vocab.DefaultConfig()
	cfg.Dataset, cfg.DataDir = meta.Name, dataDir
	if in.Model != "" {
		cfg.Model = in.Model
	}
	if bs := splitList(in.Batches); len(bs) > 0 {
		if b, err := strconv.Atoi(bs[0]); err == nil && b > 0 {
			cfg.Batch = b
		}
	}
	if fanouts, _ := parseFanouts(in.Fanouts); len(fanouts) > 0 {
		cfg.Fanout, cfg.Layers = fanouts[0], len(fanouts[0])
	}
	return cfg
}

// defaultLimits are the form's first memory limits on a dataset: the
// example's (ExampleLimits) from the floors of the chosen variants
// (vocab.MinMemoryFor at the form's model, batch and fanout): shares of
// the features from the lowest floor with headroom up to one every chosen
// variant starts in, so the grid goes out of core where the floors allow
// it; doubling sizes on a dataset whose features are below the floors.
func defaultLimits(in FormInput, meta dataset.Meta, dataDir string) string {
	cfg := formConfig(in, meta, dataDir)
	var floors []int64
	for _, v := range in.Variants {
		cfg.System = v
		floors = append(floors, vocab.MinMemoryFor(cfg, meta))
	}
	return strings.Join(ExampleLimits(meta, floors), ", ")
}

// pastRuns indexes finished runs by variant (the system as the grid names
// it, options included) for estimates.
type pastRuns map[string][]pastRun

// pastRun is one done run: what it ran, and its time split into its
// epochs (secPerEpoch: its mean epoch) and the rest (fixedS: process,
// first-batch probe, preparation, evaluation), so that a run of the same
// cell with another number of epochs is estimated as fixedS + epochs ×
// secPerEpoch. Runs without a mean epoch keep their whole time per epoch.
type pastRun struct {
	limit       int64 // 0 = none
	secPerEpoch float64
	fixedS      float64
	cell        pastCell
}

// pastCell is what decides a run's time besides its variant, dataset and
// limit; two runs of one cell ran the same work.
type pastCell struct {
	model, fanout, compute string
	batch, maxNodes        int
}

// cellOf is the pastCell of a grid cell.
// A cell's empty fields are the engine's defaults, as its run has them.
func cellOf(c grid.Cell, maxNodes int) pastCell {
	def := vocab.DefaultConfig()
	pc := pastCell{model: c.Model, fanout: grid.FormatFanout(c.Fanout), compute: c.Compute, batch: c.BatchSize, maxNodes: maxNodes}
	if pc.compute == "" {
		pc.compute = "cpu"
	}
	if pc.model == "" {
		pc.model = def.Model
	}
	if len(c.Fanout) == 0 {
		pc.fanout = grid.FormatFanout(def.Fanout)
	}
	if pc.batch <= 0 {
		pc.batch = def.Batch
	}
	return pc
}

// loadPastRuns reads the done runs on a dataset.
func loadPastRuns(ctx context.Context, st Store, ds string) pastRuns {
	if st == nil || ds == "" {
		return nil
	}
	runs, err := st.Runs(ctx, store.RunFilter{Brief: true, Conds: []store.Cond{{Field: "status", Op: "=", Value: store.StatusDone}, {Field: "dataset", Op: "=", Value: ds}}})
	if err != nil {
		return nil
	}
	p := pastRuns{}
	for _, r := range runs {
		if r.TotalS == nil || r.EpochsDone <= 0 {
			continue
		}
		pr := pastRun{limit: r.MemLimitBytes, secPerEpoch: *r.TotalS / float64(r.EpochsDone)}
		if r.MeanEpochS != nil && *r.MeanEpochS > 0 && *r.MeanEpochS*float64(r.EpochsDone) <= *r.TotalS {
			pr.secPerEpoch, pr.fixedS = *r.MeanEpochS, *r.TotalS-*r.MeanEpochS*float64(r.EpochsDone)
		}
		var bound struct {
			MaxNodes int `json:"train_max_nodes"`
		}
		_ = json.Unmarshal(r.Config, &bound)
		compute := r.Compute
		if compute == "" {
			compute = "cpu"
		}
		pr.cell = pastCell{model: r.Model, fanout: r.Fanout, compute: compute, batch: r.BatchSize, maxNodes: bound.MaxNodes}
		p[r.System] = append(p[r.System], pr)
	}
	return p
}

// sameCell estimates a run of system at limit in cell from the past runs
// of exactly that (variant, limit and cell, on the dataset: this host ran
// it before): the mean of their epochs and of their fixed parts; n is how
// many runs it is from (0: none).
func (p pastRuns) sameCell(system string, limit int64, cell pastCell) (perEpoch, fixed float64, n int) {
	for _, r := range p[system] {
		if r.limit == limit && r.cell == cell {
			perEpoch += r.secPerEpoch
			fixed += r.fixedS
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	return perEpoch / float64(n), fixed / float64(n), n
}

// perEpoch estimates a variant's seconds per epoch at a limit: the mean of
// its past runs at that limit, else at the nearest limit (by ratio); n is
// how many runs it is from (0 = no estimate).
func (p pastRuns) perEpoch(system string, limit int64) (sec float64, n int) {
	runs := p[system]
	if len(runs) == 0 {
		return 0, 0
	}
	dist := func(a int64) float64 {
		if a == limit {
			return 0
		}
		if a <= 0 || limit <= 0 {
			return math.Inf(1)
		}
		return math.Abs(math.Log(float64(a) / float64(limit)))
	}
	best := math.Inf(1)
	for _, r := range runs {
		best = math.Min(best, dist(r.limit))
	}
	for _, r := range runs {
		if dist(r.limit) == best {
			sec += r.secPerEpoch
			n++
		}
	}
	return sec / float64(n), n
}

// budgetPreview builds the preview's cell matrix (variants × limits, the
// cells that cannot start marked with the reason the submit would give:
// refused, from Queue.Refusals) and the grid's estimated duration. meta is
// the dataset's (or the preset's to be generated).
func budgetPreview(in FormInput, meta dataset.Meta, past pastRuns, refused []store.RefusedCell) (*views.CellMatrix, string) {
	if len(in.Variants) == 0 || meta.Nodes == 0 {
		return nil, ""
	}
	fb := int64(meta.FeatureDim) * 4 * meta.Nodes
	items := splitList(in.MemLimits)
	var limits []int64
	var labels []string
	for _, it := range items {
		if strings.EqualFold(it, "none") {
			limits, labels = append(limits, 0), append(labels, "no limit")
			continue
		}
		b, err := units.ParseMemLimit(it, fb)
		if err != nil || b <= 0 {
			return nil, "" // the form's own check says what is wrong
		}
		label := units.Bytes(b)
		if strings.HasSuffix(it, "%") {
			label += " (" + it + ")"
		}
		limits, labels = append(limits, b), append(labels, label)
	}
	if len(limits) == 0 {
		limits, labels = []int64{0}, []string{"no limit"}
	}
	fanouts, _ := parseFanouts(in.Fanouts)
	why := map[string]string{} // variant + "\x00" + the limit as typed → the reason it cannot start
	for _, r := range refused {
		k := r.System + "\x00" + strings.TrimSpace(r.MemLimit)
		if _, ok := why[k]; !ok {
			why[k] = r.Reason
		}
	}
	epochs, _ := strconv.Atoi(strings.TrimSpace(in.Epochs))
	repeats, _ := strconv.Atoi(strings.TrimSpace(in.Repeats))
	others := max(1, len(splitList(in.Dims))) * max(1, len(splitList(in.Batches))) * max(1, len(fanouts))
	m := &views.CellMatrix{Limits: labels}
	var total float64
	var known, unknown, based int
	for _, v := range in.Variants {
		row := views.CellRow{Variant: v}
		for i, lim := range limits {
			c := views.Cell{}
			item := "none"
			if i < len(items) {
				item = strings.TrimSpace(items[i])
			}
			if reason, ok := why[v+"\x00"+item]; ok {
				c.Impossible, c.Text = true, "✕"
				c.Title = "cannot start: " + reason
				m.Refused++
			} else if sec, n := past.perEpoch(v, lim); n > 0 && epochs > 0 {
				run := sec * float64(epochs)
				c.Text = units.Estimate(run)
				c.Title = fmt.Sprintf("about %s a run, from %d past run(s) of %s on %s", units.Estimate(run), n, v, meta.Name)
				total += run * float64(max(1, repeats)*others)
				known++
				based += n
			} else {
				c.Text, c.Title = "?", "no past run of "+v+" on "+meta.Name+" to estimate from"
				unknown++
			}
			row.Cells = append(row.Cells, c)
		}
		m.Rows = append(m.Rows, row)
	}
	est := ""
	if known > 0 {
		est = fmt.Sprintf("Estimated: about %s for the cells with past runs (%d past runs of these variants on %s)", units.Estimate(total), based, meta.Name)
		if unknown > 0 {
			est += fmt.Sprintf("; %d cell(s) without one not counted", unknown)
		}
		est += "."
	}
	return m, est
}

// timeLeft estimates how long an experiment's queued and running runs
// will take, one after another: a run's own progress (elapsed over the
// share done, evaluations included since elapsed time holds them), else
// the finished runs of its grid cell, else of its variant, else any.
// It returns the estimate in words ("" when nothing is left or nothing to
// go by).
func timeLeft(runs []store.Run, now time.Time) string {
	type key struct {
		sys   string
		limit int64
		dim   int
		batch int
		fan   string
	}
	cellSum, cellN := map[key]float64{}, map[key]int{}
	sysSum, sysN := map[string]float64{}, map[string]int{}
	var allSum float64
	var allN int
	k := func(r store.Run) key { return key{r.System, r.MemLimitBytes, r.FeatureDim, r.BatchSize, r.Fanout} }
	for _, r := range runs {
		if r.Status == store.StatusDone && r.TotalS != nil {
			cellSum[k(r)] += *r.TotalS
			cellN[k(r)]++
			sysSum[r.System] += *r.TotalS
			sysN[r.System]++
			allSum += *r.TotalS
			allN++
		}
	}
	// Before any run finished, a queued run takes as long as a running
	// run's own estimate (its variant's first): counting only the running
	// run made the first minutes' estimate far too optimistic.
	ownSys, ownAll := map[string]float64{}, 0.0
	for _, r := range runs {
		if r.Status == store.StatusRunning && !r.StartedAt.IsZero() {
			if e, ok := ownEstimate(r, now.Sub(r.StartedAt).Seconds()); ok {
				ownSys[r.System] = max(ownSys[r.System], e)
				ownAll = max(ownAll, e)
			}
		}
	}
	estimate := func(r store.Run) (float64, bool) {
		switch {
		case cellN[k(r)] > 0:
			return cellSum[k(r)] / float64(cellN[k(r)]), true
		case sysN[r.System] > 0:
			return sysSum[r.System] / float64(sysN[r.System]), true
		case allN > 0:
			return allSum / float64(allN), true
		case ownSys[r.System] > 0:
			return ownSys[r.System], true
		case ownAll > 0:
			return ownAll, true
		}
		return 0, false
	}
	var left float64
	pending, unknown := 0, 0
	for _, r := range runs {
		switch r.Status {
		case store.StatusQueued:
			pending++
			if e, ok := estimate(r); ok {
				left += e
			} else {
				unknown++
			}
		case store.StatusRunning:
			pending++
			elapsed := 0.0
			if !r.StartedAt.IsZero() {
				elapsed = now.Sub(r.StartedAt).Seconds()
			}
			if e, ok := ownEstimate(r, elapsed); ok {
				left += math.Max(0, e-elapsed)
			} else if e, ok := estimate(r); ok {
				left += math.Max(0, e-elapsed)
			} else {
				unknown++
			}
		}
	}
	if pending == 0 || pending == unknown {
		return ""
	}
	s := fmt.Sprintf("about %s left (%d run(s) to go, from %d finished)", units.Estimate(left), pending, allN)
	if allN == 0 {
		s = fmt.Sprintf("about %s left (%d run(s) to go, each as long as the running run's progress predicts)", units.Estimate(left), pending)
	}
	if unknown > 0 {
		s += fmt.Sprintf("; %d without an estimate", unknown)
	}
	return s
}

// ownEstimate is a running run's total time from its progress: elapsed
// over the share of its epochs done (the current epoch's batches counted;
// during an evaluation the epoch's training is done).
func ownEstimate(r store.Run, elapsed float64) (float64, bool) {
	var pr metrics.ProgressRecord
	if len(r.Progress) == 0 || json.Unmarshal(r.Progress, &pr) != nil || elapsed <= 0 {
		return 0, false
	}
	epochs := parseRunConfig(r.Config).Epochs
	if epochs <= 0 || pr.Batches <= 0 || pr.Phase == "prepare" {
		return 0, false
	}
	frac := float64(pr.Epoch) + float64(pr.Batch)/float64(pr.Batches)
	if pr.Phase == "eval" {
		frac = float64(pr.Epoch + 1)
	}
	frac /= float64(epochs)
	if frac < 0.05 {
		return 0, false // too early to tell
	}
	return elapsed / math.Min(frac, 1), true
}

// metaOf is a form's dataset as meta: an existing dataset's, or the
// preset's about to be generated.
func metaOf(in FormInput, entries []dataset.Entry) (dataset.Meta, bool) {
	if in.DatasetMode == "generate" {
		m, ok := presetMeta(in.Preset)
		m.Name = in.NewDataset
		return m, ok
	}
	for _, e := range entries {
		if e.Name == in.Dataset && e.Err == nil {
			return e.Meta, true
		}
	}
	return dataset.Meta{}, false
}

// budgetView adds the cell matrix and estimate to a form's preview.
func (h *ExperimentsHandler) budgetView(ctx context.Context, f *views.ExperimentForm, in FormInput, entries []dataset.Entry, g *grid.Grid) {
	meta, ok := metaOf(in, entries)
	if !ok {
		return
	}
	for _, k := range []string{"dims", "batches", "fanouts"} {
		if f.Errors[k] != "" {
			// The grid has the engine's defaults where the field did not
			// parse: its cells and floors would not be the form's.
			return
		}
	}
	var refused []store.RefusedCell
	if g != nil {
		// The cells that cannot start, by the submit's own check, even
		// while another field is still being typed (a repeat count of 0
		// does not change which cells can start).
		gg := *g
		gg.Axes.Repeat = max(gg.Axes.Repeat, 1)
		refused = h.Queue.Refusals(&gg, pendingOf(in, meta))
	}
	past := loadPastRuns(ctx, h.Store, meta.Name)
	f.Preview.Cells, f.Preview.Estimate = budgetPreview(in, meta, past, refused)
	if g != nil && len(f.Errors) == 0 {
		// the whole grid: past runs where there are some, else the prior
		f.Preview.Estimate = "Estimated: " + gridEstimate(g, meta, past, refused) + "."
	}
	if len(in.Variants) > 0 && meta.Nodes > 0 && (in.DatasetMode != "generate" || pendingOf(in, meta) != nil) {
		// what the form would offer for this dataset and these variants
		if sug := defaultLimits(in, meta, h.DataDir); sug != strings.Join(splitList(in.MemLimits), ", ") {
			f.Preview.Suggested = sug
		}
	}
	if f.Preview.Cells != nil && f.Preview.Cells.Refused > 0 {
		f.Preview.Refused = len(refused)
	}
}

// pendingOf is the dataset a form will generate, as the checks see it.
func pendingOf(in FormInput, meta dataset.Meta) map[string]dataset.Meta {
	if in.DatasetMode != "generate" {
		return nil
	}
	if pm, ok := presetMeta(in.Preset); ok {
		pm.Name = meta.Name
		return map[string]dataset.Meta{meta.Name: pm}
	}
	return nil
}

// ExampleBatch and ExampleFanout are the batch size and fanout of the
// example experiment (outcore serve writes it on first start) and the
// new-experiment form's first values: one declaration for both, so the
// form's first grid is the example's cell shape.
const ExampleBatch = 1024

// ExampleFanout is the example's and the form's first fanout (a new
// slice on each call: callers may keep it).
func ExampleFanout() []int { return []int{10, 5} }

// withHeadroom is floor raised by a quarter: a floor (vocab.MinMemoryFor)
// is a lower bound, and a variant's profiled plan may need a little more,
// so a limit just at it can be refused at start or run out of memory. The
// example's and the small-scale studies' limits start from it.
func withHeadroom(floor int64) int64 { return floor + floor/4 }

// ExampleLimits are the memory limits of the example experiment on a
// dataset, given the floors of its variants (vocab.MinMemoryFor): the
// three smallest shares of the features (limitShares) at or above the
// lowest floor with a quarter of headroom (a floor is a lower bound: a
// limit just above it may still run out of memory, and the example's
// runs should end done), so that every limit runs some variant, plus the
// first share at or above the highest floor when those three leave a
// variant without a limit it can start in. A dataset whose features are
// smaller than the floors gets doubling sizes from there instead. The
// cells below a variant's floor are skipped and shown as refused.
func ExampleLimits(meta dataset.Meta, floors []int64) []string {
	if len(floors) == 0 {
		return nil
	}
	lo, hi := floors[0], floors[0]
	for _, f := range floors {
		lo, hi = min(lo, f), max(hi, f)
	}
	lo = withHeadroom(lo)
	fb := meta.FeatureBytes()
	var out []string
	top := int64(0)
	for _, p := range limitShares {
		b := fb * int64(p) / 100
		switch {
		case b < lo:
		case len(out) < 3:
			out, top = append(out, fmt.Sprintf("%d%%", p)), b
		case top < hi:
			out, top = append(out, fmt.Sprintf("%d%%", p)), b
		}
	}
	if len(out) >= 3 && top >= hi {
		return out
	}
	out, top = nil, 0
	p := int64(1 << 20)
	for p < lo {
		p *= 2
	}
	for i := 0; i < 3 || top < hi; i++ {
		out, top = append(out, units.Bytes(p)), p
		p *= 2
	}
	return out
}
