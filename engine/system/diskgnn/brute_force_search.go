package diskgnn

// DiskGNN §5.1 "Approximate search method" and Table 4's baseline: the
// brute-force search over the segmented disk cache's two parameters, "to
// iterate over all possible combinations of m and s that satisfy the disk
// space constraint, calculate the I/O traffic for an epoch, and select the
// configuration with the lowest I/O traffic", building and reordering the
// segmented disk cache for every combination (which Algorithm 2 avoids;
// segment_search.go). Option search=brute selects it, to measure Table 4's
// search time and the quality of Algorithm 2's answer against it.
//
// The grid is finite here: segment sizes 1, 2, 4, … and n; per segment
// size, m at the nodes accessed more than once by the largest segment
// scaled by 0, 1/4, 1/2, 3/4 and 1 (m = 0 packs everything). For each
// combination the segmentBuilder of the layout (segmented_disk_cache.go)
// chooses, MinHash-reorders and places every segment's entries exactly as
// the layout would; the disk space is the disk caches' rows plus the
// packed rows, and an epoch's I/O traffic is each sample's packed rows
// (read whole, in pages) plus the pages of its segment's disk cache it
// touches. The samples are read again for every pass of every combination.

import (
	"context"
	"fmt"
	"math"
)

// bruteForcePlan is the brute-force search's answer and its cost.
type bruteForcePlan struct {
	segmentPlan
	// TrafficBytes is the answer's I/O traffic for an epoch (pages read).
	TrafficBytes int64
	// Combinations is how many (s, m) were built and measured.
	Combinations int
}

// bruteForceSegments searches (s, m) by building every combination.
// inputs(g) returns sample g's input nodes; plan holds the memory tiers;
// budgetRows is Algorithm 2's c in rows (math.MaxInt64: unlimited); page is
// the disk-cache read granularity.
func bruteForceSegments(ctx context.Context, n int, plan *tierPlan, budgetRows, rowBytes, page int64, hashes int, seed uint64,
	inputs func(ctx context.Context, g int, buf []int64) ([]int64, error)) (bruteForcePlan, error) {
	var best bruteForcePlan
	if n < 1 || rowBytes <= 0 || page <= 0 {
		return best, fmt.Errorf("diskgnn: brute-force search over %d samples, %d-byte rows, %d-byte pages", n, rowBytes, page)
	}
	var sizes []int
	for s := 1; s < n; s *= 2 {
		sizes = append(sizes, s)
	}
	sizes = append(sizes, n)
	// m's scale: the nodes the largest segment (all samples) reads twice or more
	most, err := repeatedCold(ctx, n, plan, inputs)
	if err != nil {
		return best, err
	}
	best.TrafficBytes = math.MaxInt64
	found := false
	seen := map[[2]int64]bool{}
	for _, s := range sizes {
		for _, q := range []int64{0, 1, 2, 3, 4} {
			m := most * q / 4
			if seen[[2]int64{int64(s), m}] {
				continue
			}
			seen[[2]int64{int64(s), m}] = true
			rows, traffic, _, err := measureSegments(ctx, n, s, m, plan, rowBytes, page, hashes, seed, inputs)
			if err != nil {
				return best, err
			}
			best.Combinations++
			if rows > budgetRows && budgetRows != math.MaxInt64 {
				continue
			}
			if !found || traffic < best.TrafficBytes {
				best.segmentPlan = segmentPlan{Size: s, DiskEntries: m, EstimatedRows: rows, Fits: true}
				best.TrafficBytes = traffic
				found = true
			}
		}
	}
	if !found {
		// nothing fits: Algorithm 2's answer for that case, one segment of
		// every sample with every repeated node in its disk cache
		rows, traffic, entries, err := measureSegments(ctx, n, n, most, plan, rowBytes, page, hashes, seed, inputs)
		if err != nil {
			return best, err
		}
		best.segmentPlan = segmentPlan{Size: n, DiskEntries: entries, EstimatedRows: rows}
		best.TrafficBytes = traffic
	}
	return best, nil
}

// repeatedCold counts the cold nodes (in no memory tier) that two or more
// of the n samples read.
func repeatedCold(ctx context.Context, n int, plan *tierPlan, inputs func(context.Context, int, []int64) ([]int64, error)) (int64, error) {
	count := make([]uint8, len(plan.Slot))
	var buf []int64
	var rep int64
	for g := 0; g < n; g++ {
		var err error
		if buf, err = inputs(ctx, g, buf); err != nil {
			return 0, err
		}
		for _, v := range buf {
			if plan.Slot[v] >= 0 {
				continue
			}
			if count[v] == 1 {
				rep++
			}
			if count[v] < 2 {
				count[v]++
			}
		}
	}
	return rep, nil
}

// measureSegments builds the segmented disk cache of segment size s with
// at most m entries per segment and returns the rows it stores on disk
// (disk caches and packed rows), an epoch's I/O traffic in bytes and the
// most entries one segment got.
func measureSegments(ctx context.Context, n, s int, m int64, plan *tierPlan, rowBytes, page int64, hashes int, seed uint64,
	inputs func(context.Context, int, []int64) ([]int64, error)) (rows, traffic int64, most int64, err error) {
	b := newSegmentBuilder(plan, m, hashes, seed)
	rowsPerPage := max(1, page/rowBytes)
	pagesPerRow := (rowBytes + page - 1) / page
	var buf []int64
	pages := map[int64]struct{}{}
	for lo := 0; lo < n; lo += s {
		hi := min(lo+s, n)
		for g := lo; g < hi; g++ {
			if buf, err = inputs(ctx, g, buf); err != nil {
				return
			}
			b.Count(buf)
		}
		if err = b.Choose(hi-lo, lo/s); err != nil {
			return
		}
		for g := lo; g < hi && b.Reorders(); g++ {
			if buf, err = inputs(ctx, g, buf); err != nil {
				return
			}
			if err = b.Hash(g-lo, buf); err != nil {
				return
			}
		}
		entries := b.Reorder()
		rows += int64(len(entries))
		most = max(most, int64(len(entries)))
		for g := lo; g < hi; g++ {
			if buf, err = inputs(ctx, g, buf); err != nil {
				return
			}
			clear(pages)
			var packed int64
			for _, v := range buf {
				switch {
				case b.slot[v] >= 0:
				case b.loc[v] >= 0:
					p := int64(b.loc[v])
					if pagesPerRow > 1 {
						for k := int64(0); k < pagesPerRow; k++ {
							pages[p*pagesPerRow+k] = struct{}{}
						}
					} else {
						pages[p/rowsPerPage] = struct{}{}
					}
				default:
					packed++
				}
			}
			rows += packed
			traffic += int64(len(pages))*page + (packed*rowBytes+page-1)/page*page
		}
		b.Done()
		if err = ctx.Err(); err != nil {
			return
		}
	}
	return
}
