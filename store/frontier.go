package store

// The summary of a memory-frontier experiment's stored runs per cell
// (DESIGN §12; the search's settings are experiments/grid's FrontierSpec,
// the search itself the runner's experiments/frontier_run.go): pure
// functions of the runs, what the views show.

import "sort"

// FrontierKey is a cell of a frontier search: every axis but the limit.
type FrontierKey struct {
	System, Dataset, Model, Fanout, Compute string
	Dim, Batch                              int
}

// FrontierKeyOf is the cell of a frontier search that run r probes.
func FrontierKeyOf(r Run) FrontierKey {
	return FrontierKey{r.System, r.Dataset, r.Model, r.Fanout, r.Compute, r.FeatureDim, r.BatchSize}
}

// FrontierLine is one cell of a frontier experiment as its stored runs
// say (the views; no floor needed): the least limit that finished an
// epoch, the largest below it that did not, and the probes so far.
type FrontierLine struct {
	System    string
	Frontier  int64 // 0: none finished (yet)
	FailBelow int64 // largest failed limit below Frontier (0: none)
	Probes    int   // finished probes
	Searching bool  // a probe is queued or running
}

// FrontierLines summarises a frontier experiment's runs per cell, in the
// order of their first runs.
func FrontierLines(runs []Run) []FrontierLine {
	idx := map[FrontierKey]int{}
	var out []FrontierLine
	sorted := append([]Run(nil), runs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Seq < sorted[j].Seq })
	for _, r := range sorted {
		k := FrontierKeyOf(r)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, FrontierLine{System: r.System})
		}
		l := &out[i]
		if !Finished(r.Status) {
			l.Searching = true
			continue
		}
		l.Probes++
		if r.EpochsDone > 0 && (l.Frontier == 0 || r.MemLimitBytes < l.Frontier) {
			l.Frontier = r.MemLimitBytes
		}
	}
	for _, r := range sorted {
		k := FrontierKeyOf(r)
		l := &out[idx[k]]
		if Finished(r.Status) && r.EpochsDone == 0 && (l.Frontier == 0 || r.MemLimitBytes < l.Frontier) {
			l.FailBelow = max(l.FailBelow, r.MemLimitBytes)
		}
	}
	return out
}
