package web

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"outcore/engine/metrics"
	"outcore/experiments/grid"
	"outcore/report"
	"outcore/store"
	"outcore/web/views"
)

// This file turns store rows into the view models of package views.

// timeFormat is how the pages write wall-clock times.
const timeFormat = "2006-01-02 15:04:05"

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.Local().Format(timeFormat)
}

func msOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fmtInt writes a count with thousands separators: 2,097,152.
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// fmtF writes a measurement with 3 significant decimals, "–" for none.
func fmtF(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1000 || v <= -1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 100 || v <= -100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1 || v <= -1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func fmtPF(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmtF(*v)
}

// fmtMeanSD writes "0.812 ± 0.004" (the spread only with n > 1).
func fmtMeanSD(p report.Point) string {
	if p.Y == nil {
		return "–"
	}
	if p.N > 1 {
		return fmtF(*p.Y) + " ± " + fmtF(p.SD)
	}
	return fmtF(*p.Y)
}

// fmtCount writes a mean count: "3", or "2.5 (2–3)" when runs differ.
func fmtCount(p report.Point) string {
	if p.Y == nil {
		return "–"
	}
	if p.Min == p.Max {
		return strconv.FormatFloat(p.Min, 'f', 0, 64)
	}
	return fmt.Sprintf("%s (%g–%g)", fmtF(*p.Y), p.Min, p.Max)
}

// counts converts the store's status counts.
func counts(c store.StatusCounts) views.Counts {
	return views.Counts{Total: c.Total, Queued: c.Queued, Running: c.Running, Done: c.Done,
		Failed: c.Failed, OOM: c.OOM, Cancelled: c.Cancelled, Interrupted: c.Interrupted,
		Dropped: c.CancelledUnstarted, Refused: c.Refused}
}

// experimentState is an experiment's state in words: the store's state,
// except that a finished experiment with cancelled (or interrupted) runs
// says so instead of "finished".
func experimentState(c store.StatusCounts) string {
	st := c.State()
	if st == "finished" {
		switch {
		case c.Cancelled > 0:
			return store.StatusCancelled
		case c.Interrupted > 0:
			return store.StatusInterrupted
		}
	}
	return st
}

// experimentTitle is an experiment's name, or a made-up one.
func experimentTitle(e store.Experiment) string {
	if strings.TrimSpace(e.Name) != "" {
		return e.Name
	}
	return fmt.Sprintf("experiment %d", e.ID)
}

// runSpan is the wall-clock span of a set of runs: first start, last end
// (0 while any run is unfinished).
func runSpan(runs []store.Run) (started, ended int64) {
	open := false
	for _, r := range runs {
		if s := msOf(r.StartedAt); s != 0 && (started == 0 || s < started) {
			started = s
		}
		if !store.Finished(r.Status) {
			open = true
		}
		if e := msOf(r.EndedAt); e > ended {
			ended = e
		}
	}
	if open || started == 0 {
		ended = 0
	}
	return started, ended
}

// variantList puts variant names in display order.
func variantList(systems []string) []string {
	rd := make([]report.RunData, len(systems))
	for i, s := range systems {
		rd[i] = report.RunData{System: s}
	}
	return report.NewComparison(rd).Variants()
}

// experimentRow is an experiment's line in the list, from the store's
// per-experiment aggregates (no run is read).
func experimentRow(e store.Experiment) views.ExperimentRow {
	s, en := msOf(e.FirstStarted), msOf(e.LastEnded)
	if e.Counts.Queued+e.Counts.Running > 0 || s == 0 {
		en = 0
	}
	return views.ExperimentRow{
		ID: e.ID, Name: experimentTitle(e), Dataset: e.Dataset, Tags: e.Tags, Notes: e.Notes,
		Variants: strings.Join(variantList(e.Systems), ", "),
		State:    experimentState(e.Counts), Counts: counts(e.Counts),
		Created:   fmtTime(e.CreatedAt),
		StartedMS: s, EndedMS: en,
	}
}

// runConfig reads the fields of a run's child configuration the pages show.
type runConfig struct {
	Epochs int `json:"epochs"`
}

func parseRunConfig(raw json.RawMessage) runConfig {
	var c runConfig
	_ = json.Unmarshal(raw, &c) // a config the page cannot read shows no epoch total
	return c
}

// runProgress says how far a run is.
func runProgress(r store.Run) views.Progress {
	total := 0
	if r.Status != store.StatusQueued && r.Status != store.StatusDone {
		total = parseRunConfig(r.Config).Epochs // only where the bar needs it: parsing costs
	}
	p := views.Progress{Status: r.State()}
	switch r.Status {
	case store.StatusQueued:
		p.Label = "queued"
	case store.StatusRunning:
		var pr metrics.ProgressRecord
		if len(r.Progress) > 0 && json.Unmarshal(r.Progress, &pr) == nil && pr.Batches > 0 {
			frac := float64(pr.Batch) / float64(pr.Batches)
			if total > 0 {
				p.Percent = 100 * (float64(pr.Epoch) + frac) / float64(total)
				p.Label = fmt.Sprintf("epoch %d/%d · batch %d/%d", pr.Epoch+1, total, pr.Batch, pr.Batches)
			} else {
				p.Percent = 100 * frac
				p.Label = fmt.Sprintf("epoch %d · batch %d/%d", pr.Epoch+1, pr.Batch, pr.Batches)
			}
			if pr.Phase != "" && pr.Phase != "train" {
				p.Label += " · " + pr.Phase
			}
		} else {
			p.Label = "starting"
		}
		p.Status = ""
		if r.Stall != "" { // no records while its process lives
			p.Label, p.Status = "stalled · "+p.Label, store.StatusStalled
		}
	case store.StatusDone:
		p.Percent = 100
		p.Label = fmt.Sprintf("done · %d epochs", r.EpochsDone)
	default:
		if total > 0 {
			p.Percent = 100 * float64(r.EpochsDone) / float64(total)
		}
		p.Label = fmt.Sprintf("%s after %d epochs", r.Status, r.EpochsDone)
		if r.Status == store.StatusOOM {
			p.Label = fmt.Sprintf("out of memory after %d epochs", r.EpochsDone)
		}
	}
	return p
}

// runRow is a run's line in the queue table.
func runRow(r store.Run) views.RunRow {
	dim := "dataset's"
	if r.FeatureDim > 0 {
		dim = strconv.Itoa(r.FeatureDim)
	}
	batch := "–"
	if r.BatchSize > 0 {
		batch = strconv.Itoa(r.BatchSize)
	}
	return views.RunRow{
		ID: r.ID, ExperimentID: r.ExperimentID, Seq: r.Seq, Attempt: r.Attempt,
		System: r.System, Cell: grid.CellWords(r.Cell), MemLimit: report.MemLabel(r.MemLimitBytes), Dim: dim, Batch: batch,
		Model: r.Model, Fanout: r.Fanout, Repeat: r.Repeat, Status: r.State(),
		Progress:  runProgress(r),
		EpochTime: fmtPF(r.MeanEpochS), BestVal: bestValText(r),
		StartedMS: msOf(r.StartedAt), EndedMS: msOf(r.EndedAt),
		Error:     cmp.Or(r.Error, r.Stall),
		CanCancel: r.Status == store.StatusQueued || r.Status == store.StatusRunning,
		CanRetry:  store.Finished(r.Status) && !r.Superseded,
	}
}

// naText stands for a loss or accuracy of a run that trained no model.
const naText = "n/a"

// bestValText is a run's best validation accuracy for its row.
func bestValText(r store.Run) string {
	if !r.Trains() {
		return naText
	}
	return fmtPF(r.BestValAcc)
}

// computeFact is a run's compute mode, with what it means.
func computeFact(r store.Run) string {
	switch {
	case r.Trains():
		return "cpu (the CPU trainer)"
	case r.Compute == "none":
		return "none (the loader alone: features checksummed and released; loss and accuracy n/a)"
	}
	return r.Compute + " (batches held for an accelerator's modelled step time, no CPU training; loss and accuracy n/a)"
}

// epochRow is one line of a run's epoch table.
func epochRow(r store.Run, e metrics.EpochRecord) views.EpochRow {
	runID := r.ID
	hit := "–"
	if h, ok := report.DigestEpochs([]metrics.EpochRecord{e}).HitRatio(); ok {
		hit = fmtF(h)
	}
	row := views.EpochRow{
		RunID: runID, Epoch: e.Epoch, Warmup: e.Warmup,
		EpochS: fmtF(e.EpochS), SampleS: fmtF(e.SampleS), ExtractS: fmtF(e.ExtractS), TrainS: fmtF(e.TrainS), StallS: fmtF(e.StallS),
		Batches: strconv.Itoa(e.Batches), HitRatio: hit,
		ReadMiB: fmtF(float64(e.BytesRead) / (1 << 20)), Amplification: "–", FeatMiB: "–", TopoMiB: "–",
		Loss: fmtF(e.TrainLoss), TrainAcc: fmtF(e.TrainAcc), ValAcc: "–", TestAcc: "–",
		WallS: fmtF(e.WallS), IOFloor: fmtPF(e.IOFloorS), IOEff: fmtPF(e.IOEfficiency),
		IOTitle: "device reads replayed at the measured capability of the storage the run read, on its host (DESIGN §11; the run's I/O floor fact names the profile)",
	}
	if e.IOFloorS == nil {
		row.IOTitle = "none yet: the run's storage had not been measured (its I/O floor fact says why); an epoch that kept its reads gets its floor once a profile exists"
	}
	if e.IOEfficiency != nil && *e.IOEfficiency > 1 {
		// The floor is the profile's capability: an epoch above it read
		// faster than the profile measured the disk, and the number must
		// not read as a system beating the hardware (DESIGN §11).
		row.IOTitle = "above 1: this epoch's reads went faster than the storage profile measured the disk going (a queue deeper than the profile measures, or a disk faster than when profiled), so here the floor is not a floor"
		if d := e.DiskService; d != nil && d.Reads > 0 {
			row.IOTitle += fmt.Sprintf("; the disk served %d reads at a mean depth of %.0f", d.Reads, d.Depth)
		}
	}
	// the wall-clock stages, which add up to the epoch (DESIGN §5); epochs
	// recorded before them show their summed stage seconds, and say so
	row.StageTitle = "summed seconds of each stage's calls (recorded before metrics version 3): parallel workers' seconds add up, so they can exceed the epoch"
	if e.MetricsVersion >= metrics.WallStagesVersion {
		row.SampleS, row.ExtractS, row.TrainS, row.StallS = fmtF(e.WallSampleS), fmtF(e.WallLoadS), fmtF(e.WallTrainS), fmtF(e.WallStallS)
		row.StageTitle = "wall clock: what the trainer did (train) or waited on (load, sample, stall); the four add up to the epoch time"
	}
	if e.MetricsVersion >= 2 {
		row.FeatMiB = fmtF(float64(e.FeatureBytesRead) / (1 << 20))
		row.TopoMiB = fmtF(float64(e.TopologyBytesRead) / (1 << 20))
		row.AmpTitle = fmt.Sprintf("%d feature bytes read for %d rows from the device", e.FeatureBytesRead, e.RowsFromDevice)
		if e.RowsFromDevice > 0 {
			row.Amplification = fmtF(e.ReadAmplification)
		}
	} else {
		// Before metrics version 2, read_amplification was bytes_read /
		// bytes_needed (DESIGN §5): not the same quantity.
		row.AmpTitle = fmt.Sprintf("recorded before metrics version 2: not measured (bytes read / bytes needed was %s)", fmtF(e.ReadAmplification))
	}
	// host pressure over the epoch (DESIGN §5): what competed with it
	row.Host, row.HostTitle = "–", "host pressure not recorded"
	if h := e.HostPressure; h != nil {
		row.Host = fmt.Sprintf("%.0f / %.0f", h.OthersCPUPct, h.StealPct)
		row.HostTitle = report.PressureText(h)
	}
	if why := metrics.EpochBusyReasons(e); len(why) > 0 {
		row.Busy = true
		row.HostTitle = "busy: " + strings.Join(why, "; ") + " — " + row.HostTitle
	}
	if report.Evaluated(e) { // epochs skipped by eval_every have no accuracy
		row.ValAcc, row.TestAcc = fmtF(e.ValAcc), fmtF(e.TestAcc)
	}
	if !r.Trains() { // compute none or model: no model, no loss (DESIGN §10)
		row.Loss, row.TrainAcc, row.ValAcc, row.TestAcc = naText, naText, naText, naText
	}
	return row
}

// logLine is one event of a run's log.
func logLine(ev store.Event, start time.Time) views.LogLine {
	t := fmtTime(ev.At)
	if !start.IsZero() && !ev.At.Before(start) {
		t = fmt.Sprintf("%7.1fs", ev.At.Sub(start).Seconds())
	}
	msg := ev.Msg
	if ev.Kind == store.EventStatus && msg == "" {
		var d struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		msg = "status: " + d.Status
	}
	return views.LogLine{ID: ev.ID, T: t, Level: ev.Level, Msg: msg}
}

// chartSlot places a chart of an experiment or run page, with its export links.
func chartSlot(base string, ch report.Chart, wide bool) views.ChartSlot {
	return views.ChartSlot{ID: ch.ID, Title: ch.Title, Note: ch.Note, Wide: wide,
		CSV: base + "/charts/" + ch.ID + ".csv",
		SVG: base + "/charts/" + ch.ID + ".svg",
		PDF: base + "/charts/" + ch.ID + ".pdf"}
}

// accuracyRows is the accuracy table of a comparison.
func accuracyRows(cmp *report.Comparison) []views.AccuracyRow {
	var out []views.AccuracyRow
	for _, r := range cmp.AccuracyRows() {
		col := cmp.Color(r.Variant)
		status := r.Val.Detail
		if r.Val.Status != report.StatusOK && r.Val.Status != report.StatusPartial && status == "" {
			status = r.Val.Status
		}
		cell := r.Cell
		out = append(out, views.AccuracyRow{
			Variant: r.Variant, Cell: cell, Color: col, N: r.Val.N,
			Val: fmtMeanSD(r.Val), Test: fmtMeanSD(r.Test), Eps: fmtCount(r.Epochs), Status: status,
		})
	}
	return out
}

// render renders a component to a string (for the live stream).
func render(ctx context.Context, c templ.Component) (string, error) {
	var b bytes.Buffer
	if err := c.Render(ctx, &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

func contains(xs []string, s string) bool { return slices.Contains(xs, s) }

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// frontierFacts are a memory-frontier search's lines: each cell's least
// limit that finished an epoch and the largest below it that did not.
func frontierFacts(runs []store.Run) []views.KV {
	var out []views.KV
	for _, l := range store.FrontierLines(runs) {
		v := "none yet"
		if l.Frontier > 0 {
			v = report.MemLabel(l.Frontier)
			if l.FailBelow > 0 {
				v += fmt.Sprintf(" (failed at %s)", report.MemLabel(l.FailBelow))
			} else {
				v += " (nothing below it failed)"
			}
		}
		v += fmt.Sprintf(" · %d probes", l.Probes)
		if l.Searching {
			v += " · searching"
		}
		out = append(out, views.KV{K: l.System, V: v})
	}
	return out
}
