package diskgnn

// DiskGNN §5.1 "Approximate search method", Algorithm 2. The segmented
// disk cache has two parameters: the number of disk cache entries m and
// the segment size s (graph samples per segment). A brute-force search
// over (m, s) would build and reorder the segmented cache for every pair;
// Algorithm 2 searches s alone:
//
//   - m is set to the number of nodes accessed more than once ("this is
//     equivalent to storing all node features in the disk cache since node
//     features with accessed count = 1 will always be grouped together, in
//     the same manner as packed features");
//   - the disk space of one segment of i samples is (|Vd| + |Vp|) rows,
//     Vd the nodes its samples access more than once (stored once in the
//     segment's disk cache) and Vp those accessed once (packed once), and
//     the epoch's is estimated by scaling with |G|/i;
//   - the samples are read once, in order, growing the segment by one
//     sample per step (line 2), and the first i whose estimate fits the
//     disk budget c is the answer: the smallest segment, hence the best
//     locality after reordering, that the budget allows.
//
// Only the cold nodes count (line 3, Vi − Vc − Vg): the memory tiers are
// placed first (tier_plan.go). The artifact (search_method.py
// search_disk_cache_approximate) also stops at the last sample when
// nothing fits; searchSegmentSize reports that case with Fits false and the
// caller decides.

import (
	"fmt"
	"math"
)

// segmentPlan is the result of the search.
type segmentPlan struct {
	// Size is s, the number of consecutive graph samples per segment.
	Size int
	// DiskEntries is m, the number of disk-cache entries per segment: the
	// nodes the first segment's samples access more than once.
	DiskEntries int64
	// EstimatedRows is the estimated number of feature rows stored on disk
	// for all samples: (|Vd| + |Vp|) × n / s.
	EstimatedRows int64
	// Fits reports whether the estimate is within the budget (false only
	// when even one segment of all samples exceeds it).
	Fits bool
}

// segmentSearcher runs Algorithm 2 incrementally: Add one sample's cold
// nodes at a time and stop as soon as Fit says so.
type segmentSearcher struct {
	n          int     // |G|, samples in all
	budgetRows int64   // c / (f × 4)
	count      []int32 // per node, accesses among the samples added so far
	touched    []int32 // nodes with count > 0, to reset count
	gt1, eq1   int64   // |Vd|, |Vp|
	i          int     // samples added
}

// newSegmentSearcher prepares a search over n samples of a graph with
// nodes nodes, under a budget of budgetRows feature rows (math.MaxInt64 =
// unlimited).
func newSegmentSearcher(n int, nodes int, budgetRows int64) (*segmentSearcher, error) {
	if n < 1 {
		return nil, fmt.Errorf("diskgnn: segment search over %d samples", n)
	}
	if budgetRows < 0 {
		return nil, fmt.Errorf("diskgnn: negative disk budget (%d rows)", budgetRows)
	}
	return &segmentSearcher{n: n, budgetRows: budgetRows, count: make([]int32, nodes)}, nil
}

// Add counts the cold nodes of the next sample (lines 3–5; ids distinct
// within a sample) and returns the plan for a segment of the samples added
// so far, with Fits set when its estimate is within the budget (lines
// 6–9).
func (s *segmentSearcher) Add(cold []int32) (segmentPlan, error) {
	if s.i >= s.n {
		return segmentPlan{}, fmt.Errorf("diskgnn: segment search: more than %d samples", s.n)
	}
	s.i++
	for _, v := range cold {
		if v < 0 || int(v) >= len(s.count) {
			return segmentPlan{}, fmt.Errorf("diskgnn: segment search: node %d outside the graph", v)
		}
		c := s.count[v]
		switch c {
		case 0:
			s.eq1++
			s.touched = append(s.touched, v)
		case 1:
			s.eq1--
			s.gt1++
		}
		s.count[v] = c + 1
	}
	return s.plan(), nil
}

func (s *segmentSearcher) plan() segmentPlan {
	rows := s.gt1 + s.eq1
	// rows × n / i without overflow for any realistic graph
	est := int64(math.Ceil(float64(rows) * float64(s.n) / float64(s.i)))
	fits := s.budgetRows == math.MaxInt64 || est <= s.budgetRows
	return segmentPlan{Size: s.i, DiskEntries: s.gt1, EstimatedRows: est, Fits: fits}
}

// Reset forgets the samples added (the count array is kept).
func (s *segmentSearcher) Reset() {
	for _, v := range s.touched {
		s.count[v] = 0
	}
	s.touched = s.touched[:0]
	s.gt1, s.eq1, s.i = 0, 0, 0
}

// searchSegmentSize is Algorithm 2 over n samples whose cold nodes cold(i)
// returns in training order (each sample read once, and only until the
// answer is found). When no segment size fits, it returns the plan for one
// segment of all samples with Fits false.
func searchSegmentSize(n, nodes int, budgetRows int64, cold func(i int) ([]int32, error)) (segmentPlan, error) {
	s, err := newSegmentSearcher(n, nodes, budgetRows)
	if err != nil {
		return segmentPlan{}, err
	}
	var p segmentPlan
	for i := 0; i < n; i++ {
		ids, err := cold(i)
		if err != nil {
			return segmentPlan{}, err
		}
		if p, err = s.Add(ids); err != nil {
			return segmentPlan{}, err
		}
		if p.Fits {
			return p, nil
		}
	}
	return p, nil
}

// coldInputs appends to dst[:0] the inputs not in a memory tier (slot -1):
// Algorithm 2's Vi − Vc − Vg.
func coldInputs(inputs []int64, slot []int32, dst []int32) []int32 {
	dst = dst[:0]
	for _, v := range inputs {
		if slot[v] < 0 {
			dst = append(dst, int32(v))
		}
	}
	return dst
}

// fixedSegmentPlan is the plan for a segment size given instead of
// searched (option segment_size; size >= n or segmentGlobal: one global
// disk cache of all n samples): m and the estimate are Algorithm 2's for a
// segment of the first size samples (lines 6–7), and Fits is true, the
// disk budget not being searched against.
func fixedSegmentPlan(n, nodes, size int, cold func(i int) ([]int32, error)) (segmentPlan, error) {
	if size == segmentGlobal || size > n {
		size = n
	}
	if size < 1 {
		return segmentPlan{}, fmt.Errorf("diskgnn: segment size %d", size)
	}
	s, err := newSegmentSearcher(n, nodes, math.MaxInt64)
	if err != nil {
		return segmentPlan{}, err
	}
	var p segmentPlan
	for i := 0; i < size; i++ {
		ids, err := cold(i)
		if err != nil {
			return segmentPlan{}, err
		}
		if p, err = s.Add(ids); err != nil {
			return segmentPlan{}, err
		}
	}
	return p, nil
}
