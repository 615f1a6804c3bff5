package alipg

import (
	"slices"
	"testing"

	"outcore/engine/system/systest"
)

// TestCachesServeAndTrainTheSameModel: under a budget that leaves memory
// to split, the neighbour cache serves lists at 100:0, the feature cache
// rows at 0:100, and every split trains the reference's model (the caches
// change where rows and lists come from, never what they are).
func TestCachesServeAndTrainTheSameModel(t *testing.T) {
	ref := systest.Reference(t).Losses()
	for _, c := range []struct {
		share       string
		lists, rows bool // expect neighbour-cache / feature-cache hits
	}{
		{"0", false, true},
		{"50", true, true},
		{"100", true, false},
	} {
		cfg := systest.Config(t, Name, map[string]string{"nc_share": c.share})
		cfg.MemLimitBytes = 2 << 30 // room to split: the test graph fits both caches
		r := systest.Run(t, cfg)
		if got := r.Losses(); !slices.Equal(got, ref) {
			t.Errorf("nc_share=%s: losses %v, the reference's %v", c.share, got, ref)
		}
		for i, e := range r.Epochs {
			lists, fc := e.Counters["neighbor_cache_hits"], e.Counters["feature_cache_hits"]
			if (lists > 0) != c.lists || (fc > 0) != c.rows {
				t.Errorf("nc_share=%s epoch %d: %d neighbour-cache hits of %d lists, %d feature-cache hits: want lists %v, rows %v", c.share, i, lists, e.Counters["neighbor_lists"], fc, c.lists, c.rows)
			}
		}
		if !systest.HasDeviation(r.Start.Deviations, "nc_share="+c.share+":") {
			t.Errorf("nc_share=%s: deviations %q do not name the split", c.share, r.Start.Deviations)
		}
	}
}

// TestSampleOnly: with stages=sample an epoch samples every batch and
// trains none, and says so (systest.CheckSampleOnly).
func TestSampleOnly(t *testing.T) { systest.CheckSampleOnly(t, Name) }
