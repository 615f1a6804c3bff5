package ginex

import (
	"path/filepath"
	"slices"
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/system/systest"
	"outcore/engine/train"
)

func TestMain(m *testing.M) { systest.Main(m) }

// TestGinexMatchesReference: Ginex feeds the trainer the reference's
// batches in order, so its losses equal the reference's under any cache
// sizes: several superbatches per epoch, a feature cache of ~15% of the
// rows and a neighbour cache of part of the lists (changesets with
// evictions, disk reads for misses, the superbatch pipeline), and one
// batch input (gather and training alternate, as under tight budgets), and
// no neighbour cache at all (a budget below its address table), which asks
// for the same neighbour lists.
func TestGinexMatchesReference(t *testing.T) {
	ref := systest.Run(t, systest.Config(t, train.ReferenceName, nil))
	lists := map[string]int64{}
	for _, c := range []struct {
		name string
		opts map[string]string
	}{
		{"small-caches", map[string]string{"superbatch": "3", "feature_cache": "40KiB", "neighbor_cache": "48KiB"}},
		{"one-buffer", map[string]string{"superbatch": "3", "feature_cache": "40KiB", "x_buffers": "1"}},
		{"no-neighbour-cache", map[string]string{"superbatch": "3", "feature_cache": "40KiB", "neighbor_cache": "0"}},
	} {
		name, opts := c.name, c.opts
		t.Run(name, func(t *testing.T) {
			r := systest.Run(t, systest.Config(t, Name, opts))
			var hits int64
			for _, e := range r.Epochs {
				lists[name] += e.Counters["neighbor_lists"]
				hits += e.Counters["neighbor_cache_hits"]
			}
			if name == "no-neighbour-cache" && (hits != 0 || lists[name] != lists["small-caches"]) {
				t.Fatalf("without a neighbour cache: %d lists asked for (%d with one), %d cache hits", lists[name], lists["small-caches"], hits)
			}
			if name == "small-caches" && (hits == 0 || lists[name] == 0) {
				t.Fatalf("with a neighbour cache: %d lists, %d hits", lists[name], hits)
			}
			if got := r.Losses(); !slices.Equal(got, ref.Losses()) {
				t.Fatalf("train losses %v, reference %v", got, ref.Losses())
			}
			for i, e := range r.Epochs {
				if e.BytesNeeded != ref.Epochs[i].BytesNeeded || e.Tiers[metrics.TierDevice].Lookups == 0 {
					t.Fatalf("epoch %d: bytes needed %d (reference %d), tiers %+v", i, e.BytesNeeded, ref.Epochs[i].BytesNeeded, e.Tiers)
				}
			}
		})
	}
}

// TestGinexStages checks Ginex's per-epoch report and that its runtime files
// are removed.
func TestGinexStages(t *testing.T) {
	cfg := systest.Config(t, Name, map[string]string{"superbatch": "4", "feature_cache": "64KiB"})
	cfg.Epochs = 1
	r := systest.Run(t, cfg)
	e := r.Epochs[0]
	for _, s := range []string{"inspect_s", "switch_s", "cache_update_s", "changeset_s"} {
		if _, ok := e.Stages[s]; !ok {
			t.Errorf("stage %s missing: %v", s, e.Stages)
		}
	}
	cpu, dev := e.Tiers[metrics.TierCPU], e.Tiers[metrics.TierDevice]
	if cpu.Hits == 0 || dev.Lookups == 0 || cpu.Lookups != cpu.Hits+dev.Lookups {
		t.Fatalf("tiers %+v", e.Tiers)
	}
	if e.Counters["changeset_misses"] != dev.Lookups {
		t.Fatalf("main loop read %d rows, the changeset simulation predicted %d misses", dev.Lookups, e.Counters["changeset_misses"])
	}
	left, _ := filepath.Glob(filepath.Join(cfg.DataDir, "ginex-run-*"))
	if len(left) > 0 {
		t.Fatalf("runtime files left behind: %v", left)
	}
}
