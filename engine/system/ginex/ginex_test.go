package ginex

import (
	"slices"
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/system/systest"
	"outcore/engine/train"
)

// TestGinexMatchesReference: Ginex feeds the trainer the reference's
// batches in order, so its losses equal the reference's under any cache
// sizes: several superbatches per epoch, a feature cache of ~15% of the
// rows and a neighbour cache of part of the lists (changesets with
// evictions, disk reads for misses, the superbatch pipeline), and one
// batch input (gather and training alternate, as under tight budgets), and
// no neighbour cache at all (a budget below its address table), which asks
// for the same neighbour lists.
func TestGinexMatchesReference(t *testing.T) {
	ref := systest.Reference(t)
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
	// the device tier: the misses the changeset simulation predicted, and
	// the first use of each row the switch read (DESIGN §5)
	if c := e.Counters; c["changeset_misses"]+c["switch_rows"]-c["switch_rows_unused"] != dev.Lookups || c["switch_rows"] == 0 {
		t.Fatalf("device tier %d rows; the changeset simulation predicted %d misses, the switch read %d rows (%d unused)", dev.Lookups, c["changeset_misses"], c["switch_rows"], c["switch_rows_unused"])
	}
	systest.NoScratchLeft(t, Name)
}

// The cache policy switch (Fig. 15): PaGraph's static cache of the highest
// out-degree nodes trains the reference's batches to the same losses, and
// Belady's cache serves at least as many lookups from memory at the same
// capacity. In both, the switch's rows are device reads: each is counted
// once as the device tier at its first use, so device-tier rows plus cache
// hits are the lookups and the rows from the device cover the device tier.
func TestCachePolicies(t *testing.T) {
	ref := systest.Reference(t)
	hits := map[string]int64{}
	for _, policy := range []string{policyBelady, policyStatic} {
		t.Run(policy, func(t *testing.T) {
			r := systest.Run(t, systest.Config(t, Name, map[string]string{"superbatch": "3", "feature_cache": "40KiB", "policy": policy}))
			if got := r.Losses(); !slices.Equal(got, ref.Losses()) {
				t.Fatalf("losses %v, reference %v", got, ref.Losses())
			}
			for i, e := range r.Epochs {
				cpu, dev := e.Tiers[metrics.TierCPU], e.Tiers[metrics.TierDevice]
				hits[policy] += cpu.Hits
				if cpu.Hits == 0 || cpu.Hits+dev.Hits != e.BytesNeeded/systest.RowBytes || e.RowsFromDevice < dev.Hits {
					t.Fatalf("epoch %d: tiers %+v, %d rows from the device, %d bytes needed", i, e.Tiers, e.RowsFromDevice, e.BytesNeeded)
				}
				// every row the switch read is used at most once as a device read
				if sw := e.Counters["switch_rows"]; sw == 0 || e.RowsFromDevice != sw+(dev.Hits-(sw-e.Counters["switch_rows_unused"])) {
					t.Fatalf("epoch %d: %d rows from the device, switch %d (unused %d), device tier %d", i, e.RowsFromDevice, sw, e.Counters["switch_rows_unused"], dev.Hits)
				}
				if policy == policyBelady && e.Counters["switch_rows_unused"] != 0 {
					t.Fatalf("epoch %d: %d rows of Belady's initial cache never used", i, e.Counters["switch_rows_unused"])
				}
			}
			if systest.HasDeviation(r.Summary.Deviations, "policy=static") != (policy == policyStatic) {
				t.Fatalf("deviations %q", r.Summary.Deviations)
			}
		})
	}
	// the static set is chosen from the out-degrees even when the budget
	// leaves no neighbour cache (the pass that counts them is shared)
	r := systest.Run(t, systest.Config(t, Name, map[string]string{"superbatch": "3", "feature_cache": "40KiB", "neighbor_cache": "0", "policy": policyStatic}))
	if !slices.Equal(r.Losses(), ref.Losses()) || r.Epochs[0].Counters["neighbor_cache_hits"] != 0 {
		t.Fatalf("static without a neighbour cache: losses %v, counters %v", r.Losses(), r.Epochs[0].Counters)
	}
	if hits[policyBelady] < hits[policyStatic] {
		t.Fatalf("Belady served %d lookups from memory, static %d", hits[policyBelady], hits[policyStatic])
	}
	t.Logf("memory hits: belady %d, static %d", hits[policyBelady], hits[policyStatic])
}

func TestTopOutDegree(t *testing.T) {
	deg := []int64{3, 9, 1, 9, 0, 5}
	for _, c := range []struct {
		n    int
		want []int64
	}{{0, []int64{}}, {1, []int64{1}}, {2, []int64{1, 3}}, {3, []int64{1, 3, 5}}, {9, []int64{0, 1, 2, 3, 4, 5}}} {
		if got := topOutDegree(deg, c.n); !slices.Equal(got, c.want) {
			t.Errorf("top %d: %v, want %v", c.n, got, c.want)
		}
	}
	if _, err := parseOptions(train.Config{Options: map[string]string{"policy": "lru"}}); err == nil {
		t.Error("policy lru accepted")
	}
}

// TestIODepthEmulation: option io_depth=N (a paper host's thread count,
// DESIGN §13) reads the features through one io_uring reader opened with
// a queue of depth N, and changes nothing the run delivers: the same rows
// reach the same batches (equal losses) from the same device blocks.
func TestIODepthEmulation(t *testing.T) {
	opts := map[string]string{"superbatch": "4", "feature_cache": "64KiB"}
	base := systest.Run(t, systest.Config(t, Name, opts))
	deep := map[string]string{"io_depth": "3"}
	for k, v := range opts {
		deep[k] = v
	}
	r := systest.Run(t, systest.Config(t, Name, deep))
	if got, want := r.Losses(), base.Losses(); !slices.Equal(got, want) {
		t.Fatalf("losses %v with io_depth=3, %v without", got, want)
	}
	if !slices.Contains(r.Logs, "ginex: io_depth: feature gathers through one uring reader, at most 3 reads in flight") {
		t.Errorf("no log line of the uring reader at depth 3: %q", r.Logs)
	}
	if !systest.HasDeviation(r.Start.Deviations, "io_depth=3: ") || systest.HasDeviation(base.Start.Deviations, "io_depth=") {
		t.Errorf("deviations: %q (io_depth=3), %q (default)", r.Start.Deviations, base.Start.Deviations)
	}
	for i := range r.Epochs {
		if r.Epochs[i].RowsFromDevice != base.Epochs[i].RowsFromDevice || r.Epochs[i].FeatureBytesRead != base.Epochs[i].FeatureBytesRead {
			t.Errorf("epoch %d: %d rows, %d feature bytes from the device with io_depth=3; %d, %d without", i,
				r.Epochs[i].RowsFromDevice, r.Epochs[i].FeatureBytesRead, base.Epochs[i].RowsFromDevice, base.Epochs[i].FeatureBytesRead)
		}
	}
}
