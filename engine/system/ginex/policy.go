package ginex

// Ginex §5.4 (Fig. 15): the feature cache's policy. The paper compares its
// provably optimal cache (Belady's algorithm over the superbatch's accesses,
// §3.3–3.4) with PaGraph's static cache, which holds the nodes of highest
// out-degree and never changes. Option policy selects one:
//
//   - belady (default): the changesets of the three-pass precomputation.
//   - static: the feature cache holds the fcEntries nodes of highest
//     out-degree (ties to the lower id), chosen once offline from the same
//     out-degree pass the neighbour cache uses; no changeset is computed,
//     misses are read and never inserted. As Ginex's own cache, it lives in
//     the main loop only (the neighbour cache takes its memory during the
//     sample stage), so it is filled again at each superbatch's switch — a
//     recorded deviation (PaGraph loads it once).

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"outcore/engine/cache"
)

const (
	policyBelady = "belady"
	policyStatic = "static"
)

// topOutDegree is the PaGraph static cache: the n nodes of highest
// out-degree (the lists they appear in), ties to the lower id, in id order.
func topOutDegree(outDeg []int64, n int) []int64 {
	top := cache.TopByScore(outDeg, n)
	slices.Sort(top)
	return top
}

// precomputeStatic writes a superbatch's runtime files for the static
// policy: the static set as its init file and an empty changeset per
// iteration (the cache never changes).
func (g *ginex) precomputeStatic(p *superbatchPlan) error {
	if err := copyFile(g.staticPath, p.dir.init()); err != nil {
		return fmt.Errorf("ginex: static cache: %w", err)
	}
	for i := 0; i < p.iters; i++ {
		if _, err := writeUpdate(p.dir, cache.Changeset{Iteration: i}); err != nil {
			return err
		}
	}
	return nil
}

// writeStatic chooses the static set from the out-degrees and writes it as
// an init file under the run's scratch directory (g.staticPath).
func (g *ginex) writeStatic(outDeg []int64) error {
	dir := filepath.Join(g.scratch, "static")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("ginex: static cache: %w", err)
	}
	top := topOutDegree(outDeg, g.plan.fcEntries)
	if err := writeInit(superbatchDir(dir), top); err != nil {
		return fmt.Errorf("ginex: static cache: %w", err)
	}
	g.staticPath = superbatchDir(dir).init()
	g.staticRows = len(top)
	return nil
}

// copyFile streams src into a new file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
