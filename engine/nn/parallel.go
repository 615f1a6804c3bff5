package nn

import (
	"runtime"
	"slices"
	"sync"
)

// parallelFor splits [0, n) into contiguous ranges of at least grain items
// and runs body on them across GOMAXPROCS goroutines. Small n runs inline.
// Ranges are disjoint, so body may write rows it owns without locking.
func parallelFor(n, grain int, body func(lo, hi int)) {
	if n <= 0 {
		return
	}
	workers := runtime.GOMAXPROCS(0)
	if grain < 1 {
		grain = 1
	}
	if w := n / grain; w < workers {
		workers = max(w, 1)
	}
	if workers == 1 {
		body(0, n)
		return
	}
	// a few more pieces than workers balances skewed degree distributions
	pieces := workers * 4
	if pieces > n/grain {
		pieces = max(n/grain, workers)
	}
	var wg sync.WaitGroup
	var next int64
	var mu sync.Mutex
	take := func() (int, int, bool) {
		mu.Lock()
		defer mu.Unlock()
		i := int(next)
		if i >= pieces {
			return 0, 0, false
		}
		next++
		return i * n / pieces, (i + 1) * n / pieces, true
	}
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			for {
				lo, hi, ok := take()
				if !ok {
					return
				}
				body(lo, hi)
			}
		}()
	}
	wg.Wait()
}

// grainFor picks a grain so each piece does roughly 64k multiply-adds.
func grainFor(workPerItem int) int {
	return max(1, (1<<16)/max(workPerItem, 1))
}

// parallelSum runs body over disjoint ranges of [0, n), each with its own
// zeroed accumulator of len(out), and adds every accumulator into out in
// the order of the ranges, so that the floating-point result does not
// depend on which goroutine finished first.
func parallelSum(n, grain int, out []float32, body func(lo, hi int, acc []float32)) {
	if n <= 0 {
		return
	}
	if n <= grain || runtime.GOMAXPROCS(0) == 1 {
		acc := make([]float32, len(out))
		body(0, n, acc)
		axpy(1, acc, out)
		return
	}
	type part struct {
		lo  int
		acc []float32
	}
	var mu sync.Mutex
	var parts []part
	parallelFor(n, grain, func(lo, hi int) {
		acc := make([]float32, len(out))
		body(lo, hi, acc)
		mu.Lock()
		parts = append(parts, part{lo, acc})
		mu.Unlock()
	})
	slices.SortFunc(parts, func(a, b part) int { return a.lo - b.lo })
	for _, p := range parts {
		axpy(1, p.acc, out)
	}
}
