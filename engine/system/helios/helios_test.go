package helios

import (
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/system/systest"
	"outcore/engine/train"
)

// storageReadsAreDeviceRows: one read completed for every row the device
// tier served.
func storageReadsAreDeviceRows(t *testing.T, e metrics.EpochRecord) {
	dev := e.Tiers[metrics.TierDevice]
	if e.Counters["storage_reads"] != dev.Hits {
		t.Fatalf("%d reads completed for %d rows from storage", e.Counters["storage_reads"], dev.Hits)
	}
}

// config is systest's run of Helios with a device budget of one and a half times
// the feature table: the test graph is tiny (its batch buffers alone are
// larger than its features), so the default 10 % would go to the batch
// buffers and leave the GPU tier empty.
func config(t testing.TB, opts map[string]string) train.Config {
	c := systest.Config(t, Name, opts)
	c.DeviceMem = "150%"
	return c
}

// Every configuration trains the reference's batches in order with the
// same rows: their losses equal the default's exactly.
func TestConfigurationsTrainTheSameModel(t *testing.T) {
	// every input row comes from exactly one of GPU tier, CPU tier, storage
	tiers := []string{metrics.TierGPU, metrics.TierCPU, metrics.TierDevice}
	systest.SameModel(t, config, tiers, storageReadsAreDeviceRows, func(t *testing.T, e metrics.EpochRecord) {
		if e.Counters["pipeline_early_hops"] == 0 || e.Tiers[metrics.TierGPU].Hits == 0 || e.Tiers[metrics.TierCPU].Hits == 0 {
			t.Fatalf("counters %v tiers %v", e.Counters, e.Tiers)
		}
	}, []systest.Configuration{
		{Name: "Helios-NoPipe", Opts: map[string]string{"pipeline": "false"}, Check: func(t *testing.T, e metrics.EpochRecord) {
			if e.Counters["pipeline_early_hops"] != 0 || e.Counters["pipeline_hops"] != int64(e.Batches) || e.Counters["io_submits_overlapped"] != 0 {
				t.Fatalf("counters %v", e.Counters)
			}
		}},
		{Name: "Helios-NoCache", Opts: map[string]string{"gpu_cache": "0", "cpu_cache": "0"}, Check: func(t *testing.T, e metrics.EpochRecord) {
			if e.Tiers[metrics.TierGPU].Hits != 0 || e.Tiers[metrics.TierCPU].Hits != 0 {
				t.Fatalf("tiers %v", e.Tiers)
			}
		}},
		{Name: "one preparer, deep queue, one ring", Opts: map[string]string{"preparers": "1", "depth": "6", "rings": "1"}, Check: func(t *testing.T, e metrics.EpochRecord) {
			if e.Counters["pipeline_ahead_max"] < 1 {
				t.Fatalf("counters %v", e.Counters)
			}
		}},
		{Name: "batch buffers too small: batches spill, some twice", Opts: map[string]string{"batch_margin": "0.3", "gpu_cache": "0", "cpu_cache": "0"}, Check: func(t *testing.T, e metrics.EpochRecord) {
			if e.Counters["x_overflow"] == 0 {
				t.Fatalf("no batch spilled: %v", e.Counters)
			}
		}},
	})
}

// The static cache ranks by pre-sampled hotness: a GPU tier of 5% of the
// rows serves a larger share of the accesses.
func TestHotRowsServeMoreThanTheirShare(t *testing.T) {
	cfg := config(t, map[string]string{"gpu_cache": "5%", "cpu_cache": "0"})
	cfg.Epochs = 1
	e := systest.Run(t, cfg).Epochs[0]
	g := e.Tiers[metrics.TierGPU]
	if share := float64(g.Hits) / float64(g.Lookups); share < 0.10 {
		t.Fatalf("5%% of the rows served %.1f%% of the accesses", 100*share)
	}
}

func TestBadOptions(t *testing.T) {
	for _, opts := range []map[string]string{
		{"preparers": "0"}, {"depth": "0"}, {"rings": "-1"}, {"gpu_cache": "lots"}, {"pipeline": "maybe"},
	} {
		cfg := config(t, opts)
		if err := cfg.Validate(); err == nil {
			if _, err := newHelios(cfg); err == nil {
				t.Errorf("options %v accepted", opts)
			}
		}
	}
}
