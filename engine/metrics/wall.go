package metrics

import (
	"sort"
	"time"
)

// The wall-clock stage breakdown (DESIGN §5, "Stage vocabulary") is the
// epoch's critical path as the trainer sees it. Every instant of the epoch
// (epoch_s) is in exactly one stage:
//
//   - train: the trainer computing (inside Env.TrainStep);
//   - load: the trainer not computing while a feature load (an extract_s
//     span: a gather, an extractor's batch, an I/O completion wait) was in
//     progress — it waited on loading;
//   - sample: the trainer not computing, no load in progress, while a
//     sampling span (sample_s) was — it waited on sampling;
//   - stall: the trainer not computing and neither in progress — handoffs,
//     queues, and a variant's other work (cache switches, changesets).
//
// The four add up to epoch_s whatever runs in parallel: workers'
// concurrent seconds are in the busy/wait fields, not here. Offline
// preparation (the summary's prepare_s) is apart from every epoch.

// Wall-clock stage classes of a span.
const (
	wallTrain = iota
	wallLoad
	wallSample
	wallClasses
)

// wallClass is the class of spans a stage's Add records (-1: none).
func wallClass(name string) int {
	switch name {
	case StageSample:
		return wallSample
	case StageExtract:
		return wallLoad
	case StageTrain:
		return wallTrain
	}
	return -1
}

// wallClassOf is wallClass for a stage of this epoch's variant: its own
// stages count as the wall stage it declared (WallStagesAs).
func (s *EpochStats) wallClassOf(name string) int {
	if c := wallClass(name); c >= 0 {
		return c
	}
	if as, ok := s.wallAs[name]; ok && as != StageTrain {
		return wallClass(as)
	}
	return -1
}

// WallStagesAs declares which wall-clock stage (StageSample or
// StageExtract) each of a variant's own stages counts as: the trainer's
// waits while one is in progress are sampling or loading (a cache switch
// that reads features is loading; a superbatch's sampling pass is
// sampling). The run loop calls it before the epoch, from the variant's
// registry entry (train.Variant.WallStages).
func (s *EpochStats) WallStagesAs(as map[string]string) {
	s.mu.Lock()
	s.wallAs = as
	s.mu.Unlock()
}

// span is one interval of a stage's activity, in nanoseconds of the
// monotonic clock since the EpochStats was made.
type span struct{ a, b int64 }

// addSpan appends [a, b] to list, extending the last span when the new one
// overlaps or touches it (spans of one worker arrive in order, so the list
// stays short).
func addSpan(list []span, a, b int64) []span {
	if b <= a {
		return list
	}
	if n := len(list); n > 0 && a <= list[n-1].b && a >= list[n-1].a {
		list[n-1].b = max(list[n-1].b, b)
		return list
	}
	return append(list, span{a, b})
}

// mergeSpans returns the disjoint union of list, sorted, clipped to [lo, hi].
func mergeSpans(list []span, lo, hi int64) []span {
	in := make([]span, 0, len(list))
	for _, s := range list {
		a, b := max(s.a, lo), min(s.b, hi)
		if b > a {
			in = append(in, span{a, b})
		}
	}
	sort.Slice(in, func(i, j int) bool { return in[i].a < in[j].a })
	out := in[:0]
	for _, s := range in {
		if n := len(out); n > 0 && s.a <= out[n-1].b {
			out[n-1].b = max(out[n-1].b, s.b)
			continue
		}
		out = append(out, s)
	}
	return out
}

// spanLength is the total length of disjoint spans.
func spanLength(list []span) int64 {
	var n int64
	for _, s := range list {
		n += s.b - s.a
	}
	return n
}

// subtractSpans returns the parts of a (disjoint, sorted) outside b
// (disjoint, sorted).
func subtractSpans(a, b []span) []span {
	var out []span
	j := 0
	for _, s := range a {
		cur := s.a
		for j < len(b) && b[j].b <= cur {
			j++
		}
		k := j
		for k < len(b) && b[k].a < s.b {
			if b[k].a > cur {
				out = append(out, span{cur, b[k].a})
			}
			cur = max(cur, b[k].b)
			k++
		}
		if cur < s.b {
			out = append(out, span{cur, s.b})
		}
	}
	return out
}

// WallStages is an epoch's wall-clock stage breakdown in seconds; the four
// add up to the epoch's epoch_s.
type WallStages struct {
	Sample, Load, Train, Stall float64
}

// Sum is the four stages' total.
func (w WallStages) Sum() float64 { return w.Sample + w.Load + w.Train + w.Stall }

// wallBreakdown splits the window [lo, hi] by the spans of each class
// (train first, then load, then sample; the rest is stall).
func wallBreakdown(spans [wallClasses][]span, lo, hi int64) WallStages {
	if hi <= lo {
		return WallStages{}
	}
	rest := []span{{lo, hi}}
	var got [wallClasses]int64
	for _, c := range []int{wallTrain, wallLoad, wallSample} {
		left := subtractSpans(rest, mergeSpans(spans[c], lo, hi))
		got[c] = spanLength(rest) - spanLength(left)
		rest = left
	}
	sec := func(ns int64) float64 { return time.Duration(ns).Seconds() }
	return WallStages{Train: sec(got[wallTrain]), Load: sec(got[wallLoad]), Sample: sec(got[wallSample]), Stall: sec(spanLength(rest))}
}
