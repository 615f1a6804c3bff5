package gids

import (
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/system/systest"
	"outcore/engine/train"
)

// checkBufferAndDeviceRows: the CPU buffer's hits are its tier's, and the
// rows read from the device cover the device tier with none unaccounted.
func checkBufferAndDeviceRows(t *testing.T, e metrics.EpochRecord) {
	cpu, dev := e.Tiers[metrics.TierCPU], e.Tiers[metrics.TierDevice]
	if e.Counters["cpu_buffer_hits"] != cpu.Hits {
		t.Fatalf("cpu_buffer_hits %d, tier %d", e.Counters["cpu_buffer_hits"], cpu.Hits)
	}
	if e.RowsFromDevice < dev.Hits || e.Counters["rows_unaccounted"] != 0 {
		t.Fatalf("rows from device %d for %d device-tier rows; counters %v", e.RowsFromDevice, dev.Hits, e.Counters)
	}
}

// Every configuration trains the same batches with the same rows: the
// losses of all of them equal the default's exactly, whatever the cache
// evicts, bypasses or shares, and however many iterations a pass merges.
func TestConfigurationsTrainTheSameModel(t *testing.T) {
	config := func(t testing.TB, opts map[string]string) train.Config { return systest.Config(t, Name, opts) }
	// every input row is served by exactly one of the CPU buffer, else the
	// cache, else storage
	tiers := []string{metrics.TierCPU, metrics.TierGPU, metrics.TierDevice}
	systest.SameModel(t, config, tiers, checkBufferAndDeviceRows, func(t *testing.T, e metrics.EpochRecord) {
		if e.Counters["accumulator_iterations"] != int64(e.Batches) || e.Counters["storage_reads"] == 0 {
			t.Fatalf("counters %v", e.Counters)
		}
	}, []systest.Configuration{
		{Name: "no cache, no buffer, no accumulator", Opts: map[string]string{"gpu_cache": "0", "cpu_buffer": "0", "accumulator": "false"}, Check: func(t *testing.T, e metrics.EpochRecord) {
			if e.Counters["uncached_reads"] == 0 || e.Counters["accumulator_depth_max"] != 1 || e.Tiers[metrics.TierCPU].Hits != 0 {
				t.Fatalf("counters %v tiers %v", e.Counters, e.Tiers)
			}
		}},
		{Name: "tiny cache, deep window: evictions and bypasses", Opts: map[string]string{"gpu_cache": "8KiB", "window": "8"}, Check: func(t *testing.T, e metrics.EpochRecord) {
			if e.Counters["gpu_cache_evictions"] == 0 || e.Counters["gpu_cache_bypass"] == 0 || e.Counters["window_pinned_max"] == 0 {
				t.Fatalf("counters %v", e.Counters)
			}
		}},
		{Name: "4 KiB lines, rows straddle nothing, lines shared", Opts: map[string]string{"line": "4096", "gpu_cache": "64KiB", "window": "0"}, Check: func(t *testing.T, e metrics.EpochRecord) {
			if e.Counters["gpu_cache_shared"]+e.Counters["gpu_cache_hits"] == 0 || e.Counters["window_pinned_max"] != 0 {
				t.Fatalf("counters %v", e.Counters)
			}
		}},
		{Name: "accumulator merging up to 4 iterations, small batch buffers", Opts: map[string]string{"iops": "1e9", "latency_us": "100", "max_merge": "4", "rings": "2", "batch_margin": "0.3"}, Check: func(t *testing.T, e metrics.EpochRecord) {
			// N_access = 0.95·1e9·100 µs/0.05 ≈ 1.9M accesses: always capped
			if e.Counters["accumulator_depth_max"] != 4 || e.Counters["accumulator_passes"] >= int64(e.Batches) || e.Counters["accumulator_capped"] == 0 || e.Counters["x_overflow"] == 0 {
				t.Fatalf("counters %v", e.Counters)
			}
		}},
		{Name: "CPU buffer of the first ids", Opts: map[string]string{"cpu_buffer": "50%", "cpu_buffer_select": "first", "gpu_cache": "0"}, Check: func(t *testing.T, e metrics.EpochRecord) {
			if h := e.Tiers[metrics.TierCPU].Hits; h == 0 || h == e.Tiers[metrics.TierCPU].Lookups {
				t.Fatalf("tiers %v", e.Tiers)
			}
		}},
	})
}

// Rows are counted once per device read whatever the line size (DESIGN
// §5): without a cache every row looked up on the device is one line read
// of 512 bytes holding four 128-byte rows; the line delivers its four rows
// (one to the lookup, three unused: rows_filled), a line two lookups of one
// submission need is read and counted once, so the rows from the device
// are what the storage layer delivered, at most four per looked-up row,
// and a line's bytes are its rows' (read amplification about 1; it was
// above 1 only by the file's short last line).
func TestLineReadsCountEachRowOnce(t *testing.T) {
	cfg := systest.Config(t, Name, map[string]string{"gpu_cache": "0", "cpu_buffer": "0", "line": "512"})
	cfg.Epochs = 1
	systest.Evict(t)
	e := systest.Run(t, cfg).Epochs[0]
	dev := e.Tiers[metrics.TierDevice]
	if dev.Hits == 0 || e.Counters["uncached_reads"] != dev.Hits || e.Counters["storage_reads"] != dev.Hits {
		t.Fatalf("device-tier rows %d, counters %v", dev.Hits, e.Counters)
	}
	if e.RowsFromDevice != e.Counters[metrics.CounterRowsDelivered] || e.RowsFromDevice > 4*dev.Hits || e.RowsFromDevice < 3*dev.Hits {
		t.Fatalf("rows from device %d, delivered %d, for %d line reads of 4 rows", e.RowsFromDevice, e.Counters[metrics.CounterRowsDelivered], dev.Hits)
	}
	if filled := e.Counters[metrics.CounterRowsFilled]; filled != e.RowsFromDevice-dev.Hits {
		t.Fatalf("rows_filled %d, want rows from device %d less the %d looked up", filled, e.RowsFromDevice, dev.Hits)
	}
	if e.FeatureBytesRead > 512*dev.Hits || e.ReadAmplification < 1 || e.ReadAmplification > 1.05 {
		t.Fatalf("feature bytes %d for %d line reads, read amplification %v, want about 1", e.FeatureBytesRead, dev.Hits, e.ReadAmplification)
	}
}

// A deep window on a tiny cache pins every slot: the accesses that go
// around the cache are counted and their share reported.
func TestBypassReported(t *testing.T) {
	cfg := systest.Config(t, Name, map[string]string{"gpu_cache": "8KiB", "window": "8", "cpu_buffer": "0"})
	cfg.Epochs = 1
	e := systest.Run(t, cfg).Epochs[0]
	c := e.Counters
	acc := c["gpu_cache_hits"] + c["gpu_cache_shared"] + c["gpu_cache_misses"] + c["gpu_cache_bypass"]
	if c["gpu_cache_bypass"] == 0 || acc == 0 || c["gpu_cache_bypass_permille"] != c["gpu_cache_bypass"]*1000/acc {
		t.Fatalf("counters %v", c)
	}
}

// The reverse PageRank buffer serves more rows than the same buffer of
// the first node ids (Fig. 10's "with reverse page rank").
func TestPageRankBufferBeatsUnranked(t *testing.T) {
	hits := func(sel string) int64 {
		cfg := systest.Config(t, Name, map[string]string{"cpu_buffer": "10%", "cpu_buffer_select": sel, "gpu_cache": "0"})
		cfg.Epochs = 1
		return systest.Run(t, cfg).Epochs[0].Tiers[metrics.TierCPU].Hits
	}
	pr, first := hits("pagerank"), hits("first")
	if pr <= first {
		t.Fatalf("reverse PageRank buffer served %d rows, first ids %d", pr, first)
	}
}

func TestBadOptions(t *testing.T) {
	for _, opts := range []map[string]string{
		{"window": "-1"}, {"peak_percent": "1"}, {"rings": "0"}, {"line": "1000"},
		{"cpu_buffer_select": "random"}, {"iops": "-5"}, {"cpu_buffer": "lots"},
	} {
		cfg := systest.Config(t, Name, opts)
		if err := cfg.Validate(); err == nil {
			if _, err := newGIDS(cfg); err == nil {
				t.Errorf("options %v accepted", opts)
			}
		}
	}
}
