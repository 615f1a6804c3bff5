package report

// A reproduction study's comparison (docs/REPRODUCTION.md): the studies
// themselves — grid, the paper's numbers, why ours differ — are study
// files in the registry (experiments/studies); here an experiment made for
// one is set beside the paper: its runs matched to the paper's points and
// ratios (CompareStudy), as CSV (WriteStudyCSV). Nothing here knows HTTP.

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"outcore/engine/metrics/fields"
	"outcore/experiments/studies"
)

// StudyRow is one system at one limit (and, where the grid varies
// another axis kept in the runs' configuration — the ids axis, a path
// axis — one cell of it): the paper's number and ours.
type StudyRow struct {
	System, Label, MemLimit string
	// Cell is the runs' cell on those axes in words ("ids=local"), ""
	// when the grid has none; Label then ends with it.
	Cell       string
	Paper      float64 // 0: the paper gives none
	Ours       float64 // mean of Metric over the done runs
	HaveOurs   bool
	Runs, Done int
	// Outcomes of the runs that did not finish as done, e.g. "oom ×1".
	Outcomes string
	// Side is the evidence of Ours: how many of the done runs are quiet
	// and warm, cold, busy.
	Side Side
}

// MinEvidence is the least number of quiet, warm runs per side a ratio's
// verdict is given on (below it the verdict is "not enough evidence").
const MinEvidence = 3

// Side is the evidence of one side of a ratio: its done runs that have
// the metric (N), of them those whose means are over warm epochs only
// and measured on a quiet host (QuietWarm), those whose means include
// the run's cold first epoch (Cold), and those measured on a busy host
// (Busy).
type Side struct {
	N, QuietWarm, Cold, Busy int
}

// Words says the side's evidence: "n=3 (3 quiet warm)", "n=1 (cold, busy)".
func (s Side) Words() string {
	var q []string
	if s.QuietWarm > 0 {
		q = append(q, fmt.Sprintf("%d quiet warm", s.QuietWarm))
	}
	if s.Cold > 0 {
		q = append(q, fmt.Sprintf("%d cold", s.Cold))
	}
	if s.Busy > 0 {
		q = append(q, fmt.Sprintf("%d busy", s.Busy))
	}
	if len(q) == 0 {
		return fmt.Sprintf("n=%d", s.N)
	}
	return fmt.Sprintf("n=%d (%s)", s.N, strings.Join(q, ", "))
}

// RatioRow is one of the paper's ratios beside ours.
type RatioRow struct {
	studies.PaperRatio
	// Ours is the ratio of the sides' means: over their quiet warm runs
	// when each side has MinEvidence of them (Evidence), else over every
	// done run. OursMedian is the ratio of the sides' medians over the
	// same runs (the claims table's "medians of 3", ClaimsTable).
	Ours, OursMedian float64
	HaveOurs         bool
	// NumSide and DenSide are the evidence of each side; Evidence is
	// whether both have MinEvidence quiet warm runs (the verdict stands).
	NumSide, DenSide Side
	Evidence         bool
	// NumOOM and DenOOM: that side's runs all ended out of memory (its
	// ratio cannot be had: the side is OOM, not pending).
	NumOOM, DenOOM bool
	// Within reports whether ours (OursMedian, the ratio of the sides'
	// medians) lies within ClaimTolerance of the paper's number or range:
	// the one rule of the dashboard, the study CSV and the claims table
	// (ClaimVerdict).
	Within bool
}

// StudyTable is a study's comparison against one experiment's runs.
type StudyTable struct {
	Study  studies.Study
	Rows   []StudyRow
	Ratios []RatioRow
}

// CompareStudy matches an experiment's runs to the study's points: a run
// belongs to (system entry, limit) when its system is the entry and its
// memory limit is the limit's share of its own feature bytes (rounded to
// whole percent): featureBytes, the experiment's dataset's, scaled to the
// run's feature dimension where a study sweeps it (dim is the dataset's;
// 0 when unknown or when the experiment's grid takes its shares of the
// dataset for every run, "mem_share_of": "base": every run then at
// featureBytes). Ours is the mean of the
// study's metric over the runs that finished as done.
func CompareStudy(s studies.Study, runs []RunData, featureBytes int64, dim int) StudyTable {
	t := StudyTable{Study: s}
	share := func(r RunData) string {
		fb := featureBytes
		if dim > 0 && r.Dim > 0 && r.Dim != dim {
			fb = featureBytes / int64(dim) * int64(r.Dim)
		}
		return limitShare(r.MemLimit, fb)
	}
	type key struct{ sys, lim, cell string }
	sum := map[key]float64{}
	done := map[key]int{}
	all := map[key]int{}
	other := map[key]map[string]int{}
	var cells []string // the runs' cells on the configuration-kept axes, in order
	for _, r := range runs {
		if !slices.Contains(cells, r.Cell) {
			cells = append(cells, r.Cell)
		}
	}
	slices.Sort(cells)
	if len(cells) == 0 {
		cells = []string{""}
	}
	for _, r := range runs {
		k := key{r.System, share(r), r.Cell}
		all[k]++
		if r.Status == RunDone && r.Digest != nil {
			if v, ok := MetricValue(r, s.Metric); ok {
				sum[k] += v
				done[k]++
				continue
			}
		}
		if other[k] == nil {
			other[k] = map[string]int{}
		}
		other[k][r.Status]++
	}
	ours := func(sys, lim, cell string) (float64, bool) {
		k := key{sys, lim, cell}
		if done[k] == 0 {
			return 0, false
		}
		return sum[k] / float64(done[k]), true
	}
	// a ratio's own metric: the mean over the side's runs' values of it
	// (only the quiet warm ones when quietWarm; of one cell, or of every
	// cell when cell is nil), and the side's evidence
	side := func(metric, sys, lim string, cell *string, quietWarm bool) (float64, float64, bool, Side) {
		if metric == "" {
			metric = s.Metric
		}
		var total float64
		var sd Side
		var vals []float64
		for _, r := range runs {
			if r.System != sys || share(r) != lim || r.Status != RunDone || cell != nil && r.Cell != *cell {
				continue
			}
			v, ok := MetricValue(r, metric)
			if !ok {
				continue
			}
			sd.N++
			qw := r.Digest.EpochKind() == EpochsWarm && r.Digest.Quiet()
			if qw {
				sd.QuietWarm++
			}
			if r.Digest.EpochKind() != EpochsWarm {
				sd.Cold++
			}
			if !r.Digest.Quiet() {
				sd.Busy++
			}
			if quietWarm && !qw {
				continue
			}
			total += v
			vals = append(vals, v)
		}
		if len(vals) == 0 {
			return 0, 0, false, sd
		}
		return total / float64(len(vals)), median(vals), true, sd
	}
	for _, lim := range s.MemLimits {
		for _, sys := range s.Systems {
			for _, cell := range cells {
				k := key{sys, studies.NormShare(lim), cell}
				row := StudyRow{System: sys, Label: s.Label(sys), MemLimit: lim, Cell: cell, Runs: all[k], Done: done[k]}
				if cell != "" {
					row.Label += " · " + cell
				}
				for _, p := range s.Points {
					if p.System == sys && studies.NormShare(p.MemLimit) == k.lim {
						row.Paper = p.Value
					}
				}
				row.Ours, row.HaveOurs = ours(sys, k.lim, cell)
				_, _, _, row.Side = side(s.Metric, sys, k.lim, &cell, false)
				var outs []string
				for _, st := range slices.Sorted(maps.Keys(other[k])) {
					outs = append(outs, fmt.Sprintf("%s ×%d", st, other[k][st]))
				}
				row.Outcomes = strings.Join(outs, ", ")
				t.Rows = append(t.Rows, row)
			}
		}
	}
	for _, pr := range s.Ratios {
		rr := RatioRow{PaperRatio: pr}
		m := s.RatioMetrics[pr.Label]
		lim := studies.NormShare(pr.MemLimit)
		n, nm, okn, ns := side(m.Num, pr.Num, lim, nil, false)
		d, dm, okd, ds := side(m.Den, pr.Den, lim, nil, false)
		rr.NumSide, rr.DenSide = ns, ds
		if rr.Evidence = ns.QuietWarm >= MinEvidence && ds.QuietWarm >= MinEvidence; rr.Evidence {
			n, nm, okn, _ = side(m.Num, pr.Num, lim, nil, true)
			d, dm, okd, _ = side(m.Den, pr.Den, lim, nil, true)
		}
		allOOM := func(sys string) bool {
			runs, oom := 0, 0
			for _, cell := range cells {
				k := key{sys, studies.NormShare(pr.MemLimit), cell}
				runs += all[k]
				oom += other[k][RunOOM]
			}
			return runs > 0 && oom == runs
		}
		rr.NumOOM, rr.DenOOM = allOOM(pr.Num), allOOM(pr.Den)
		if okn && okd && d > 0 && dm > 0 {
			rr.Ours, rr.OursMedian, rr.HaveOurs = n/d, nm/dm, true
			rr.Within = ClaimVerdict(rr.OursMedian, true, true, pr.Low, pr.High) == ClaimHolds
		}
		t.Ratios = append(t.Ratios, rr)
	}
	return t
}

// MetricValue is a run's value of a study metric: a Digest mean, the
// run's hit ratio (studies.MetricHitRatio), one of the derived metrics
// a ratio may compare (studies.MetricEpochNoSample,
// studies.MetricEpochPlusPrepare), or else a run-level measurement
// (fields.Runs, from its summary: DiskGNN Fig. 12's
// feature_disk_blowup); false when the run does not have it.
func MetricValue(r RunData, metric string) (float64, bool) {
	if r.Digest == nil {
		return 0, false
	}
	switch metric {
	case studies.MetricHitRatio:
		return r.Digest.HitRatio()
	case studies.MetricEpochNoSample:
		if r.Digest.WallMeasured == 0 {
			return 0, false
		}
		return r.Digest.Mean["epoch_s"] - r.Digest.Mean["wall_sample_s"], true
	case studies.MetricEpochPlusPrepare:
		if r.PrepareS == nil || r.Digest.Epochs == 0 {
			return 0, false
		}
		return r.Digest.Mean["epoch_s"] + *r.PrepareS/float64(r.Digest.Epochs), true
	}
	if v, ok := r.Digest.Mean[metric]; ok {
		return v, true
	}
	if f, ok := fields.FindRun(metric); ok {
		return f.Value(r.Values)
	}
	return 0, false
}

// limitShare writes a memory limit as a whole-percent share of the
// feature bytes ("60%"); "none" without a limit.
func limitShare(limit, featureBytes int64) string {
	if limit <= 0 {
		return "none"
	}
	if featureBytes <= 0 {
		return strconv.FormatInt(limit, 10)
	}
	return fmt.Sprintf("%d%%", int64(math.Round(100*float64(limit)/float64(featureBytes))))
}

// WriteStudyCSV writes a study table as tidy CSV: one row per system and
// limit (kind "point") and one per ratio (kind "ratio"), the paper's
// value beside ours (empty where there is none).
func WriteStudyCSV(w io.Writer, t StudyTable) error {
	cw := csv.NewWriter(w)
	num := func(v float64, have bool) string {
		if !have {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	_ = cw.Write([]string{"study", "kind", "label", "system", "mem_limit", "metric", "paper", "ours", "runs", "done", "other_outcomes",
		"quiet_warm", "cold", "busy", "num_evidence", "den_evidence", "enough_evidence"})
	for _, r := range t.Rows {
		_ = cw.Write([]string{t.Study.ID, "point", r.Label, r.System, r.MemLimit, t.Study.Metric,
			num(r.Paper, r.Paper > 0), num(r.Ours, r.HaveOurs), strconv.Itoa(r.Runs), strconv.Itoa(r.Done), r.Outcomes,
			strconv.Itoa(r.Side.QuietWarm), strconv.Itoa(r.Side.Cold), strconv.Itoa(r.Side.Busy), "", "", ""})
	}
	for _, r := range t.Ratios {
		metric := t.Study.Metric
		if m, ok := t.Study.RatioMetrics[r.Label]; ok {
			side := func(x string) string {
				if x == "" {
					return t.Study.Metric
				}
				return x
			}
			metric = side(m.Num) + " / " + side(m.Den)
		}
		enough := "no"
		if r.Evidence {
			enough = "yes"
		}
		_ = cw.Write([]string{t.Study.ID, "ratio", r.Label, r.Num + " / " + r.Den, r.MemLimit, metric,
			r.Paper, num(r.OursMedian, r.HaveOurs), "", "", "", "", "", "", r.NumSide.Words(), r.DenSide.Words(), enough})
	}
	cw.Flush()
	return cw.Error()
}
