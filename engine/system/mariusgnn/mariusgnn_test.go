package mariusgnn

import (
	"bytes"
	"context"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/engine/system/systest"
	"outcore/engine/train"
)

// TestMariusGNNRuns: every ordering trains every training node once per
// epoch, learns, and reports its mechanisms; a buffer smaller than the
// graph hides edges (the bias), a buffer of every partition hides none.
func TestMariusGNNRuns(t *testing.T) {
	ref := systest.Reference(t)
	nTrain := int64(0)
	{
		ds, err := dataset.OpenByName(mustDataDir(t), systest.Dataset(t))
		if err != nil {
			t.Fatal(err)
		}
		nTrain = ds.Meta.Train
	}
	cases := []struct {
		name     string
		opts     map[string]string
		states   int64
		dropping bool
	}{
		{"all-resident", map[string]string{"partitions": "8"}, 1, false},
		{"sequential", map[string]string{"partitions": "16", "buffer_capacity": "8"}, 1, true},
		{"dispersed", map[string]string{"partitions": "12", "buffer_capacity": "5", "ordering": "dispersed"}, 8, true},
		{"dispersed-no-prefetch", map[string]string{"partitions": "12", "buffer_capacity": "5", "ordering": "dispersed", "prefetch": "false"}, 8, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := systest.Run(t, systest.Config(t, Name, c.opts))
			if r.Summary.BestValAcc < 0.5 { // 4 classes
				t.Fatalf("best validation accuracy %.3f (reference %.3f)", r.Summary.BestValAcc, ref.Summary.BestValAcc)
			}
			for _, s := range []string{"partition_s", "partition_features_s", "edge_buckets_s", "profile_s"} {
				if _, ok := r.Summary.PrepareStages[s]; !ok {
					t.Fatalf("prepare stage %s missing: %v", s, r.Summary.PrepareStages)
				}
			}
			for i, e := range r.Epochs {
				if _, ok := e.Stages["prep_s"]; !ok {
					t.Fatalf("epoch %d: no prep_s stage: %v", i, e.Stages)
				}
				cnt := e.Counters
				if cnt["buffer_states"] != c.states {
					t.Fatalf("epoch %d: %d buffer states, want %d", i, cnt["buffer_states"], c.states)
				}
				if cnt["partition_loads"] == 0 || cnt["partition_bytes_read"] == 0 || cnt["bucket_loads"] == 0 {
					t.Fatalf("epoch %d: no loads counted: %v", i, cnt)
				}
				if cnt["partition_misses"] != cnt["partition_loads"] {
					t.Fatalf("epoch %d: misses %d, loads %d", i, cnt["partition_misses"], cnt["partition_loads"])
				}
				if c.states > 1 {
					p := cnt["partition_loads"]
					if p != 12 {
						t.Fatalf("epoch %d: dispersed loaded %d partitions, want each of 12 once", i, p)
					}
					if cnt["partition_hits"] != 7*4 {
						t.Fatalf("epoch %d: %d buffer hits, want 4 kept partitions × 7 swaps", i, cnt["partition_hits"])
					}
					wantPre := int64(7)
					if c.opts["prefetch"] == "false" {
						wantPre = 0
					}
					if cnt["prefetched_loads"] != wantPre {
						t.Fatalf("epoch %d: %d prefetched loads, want %d", i, cnt["prefetched_loads"], wantPre)
					}
				}
				if dropped := cnt["edges_dropped"]; (dropped > 0) != c.dropping {
					t.Fatalf("epoch %d: %d edges dropped by the in-buffer restriction (dropping expected: %v)", i, dropped, c.dropping)
				}
				if cnt["buffer_edges"] > cnt["graph_edges"]*c.states || cnt["sampled_nodes"] == 0 {
					t.Fatalf("epoch %d: counters %v", i, cnt)
				}
				// Every row comes from a partition read in this epoch: the
				// disk-resident partition tier, no memory hits (DESIGN §5).
				pt := e.Tiers[metrics.TierPartition]
				if pt.Lookups == 0 || pt.Hits != pt.Lookups || e.BytesNeeded != pt.Lookups*systest.RowBytes || e.Tiers[metrics.TierCPU].Hits != 0 {
					t.Fatalf("epoch %d: tiers %+v, bytes needed %d", i, e.Tiers, e.BytesNeeded)
				}
				if h, ok := e.HitRatio(); !ok || h != 0 {
					t.Fatalf("epoch %d: hit ratio %v (%v), want 0: every row was read from disk in the epoch", i, h, ok)
				}
				// Every training node is trained once: batches of at most
				// 100 seeds, at least the reference's count.
				if e.Batches < ref.Epochs[i].Batches || int64(e.Batches) > nTrain/100+c.states {
					t.Fatalf("epoch %d: %d batches (reference %d, %d training nodes)", i, e.Batches, ref.Epochs[i].Batches, nTrain)
				}
			}
			if got := r.Losses(); slices.Equal(got, ref.Losses()) {
				t.Fatalf("losses %v equal the reference's", got)
			}
			systest.NoScratchLeft(t, Name)
		})
	}
}

// TestMariusGNNBiasCostsAccuracy: on a graph whose labels follow its edges,
// seeing fewer edges (a buffer of 2 of 16 partitions) gives a sample with
// far fewer neighbours; the records show the hidden edges growing as the
// buffer shrinks.
func TestMariusGNNBiasGrowsAsTheBufferShrinks(t *testing.T) {
	var last int64 = -1
	for _, c := range []string{"16", "8", "2"} {
		cfg := systest.Config(t, Name, map[string]string{"partitions": "16", "buffer_capacity": c, "ordering": "dispersed"})
		cfg.Epochs = 1
		r := systest.Run(t, cfg)
		d := r.Epochs[0].Counters["edges_dropped"]
		if d <= last {
			t.Fatalf("buffer of %s partitions: %d edges dropped, not more than with a larger buffer (%d)", c, d, last)
		}
		last = d
	}
}

// TestMariusGNNRefusesATooSmallBudget: a budget below the variant's
// MinMemory is refused before the run starts, naming the need, and one 8
// MiB above it runs here (in this process no limit is enforced: the plan
// decides). Prepare's own refusal of a budget the profiled plan cannot fit
// is TestSizeFloors'.
func TestMariusGNNRefusesATooSmallBudget(t *testing.T) {
	t.Cleanup(func() {
		debug.SetMemoryLimit(math.MaxInt64)
		debug.SetGCPercent(100)
	})
	cfg := systest.Config(t, Name, map[string]string{"partitions": "16"})
	ds, err := dataset.OpenByName(mustDataDir(t), cfg.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	floor := minMemory(train.ShapeOf(ds.Meta), cfg)
	for _, c := range []struct {
		limit int64
		says  string
	}{
		{floor - 1, "that mariusgnn needs to start"},
	} {
		cfg.MemLimit = strconv.FormatInt(c.limit, 10)
		var out bytes.Buffer
		sum, err := train.Run(context.Background(), cfg, &out, nil)
		if err == nil || sum.Outcome != metrics.OutcomeFailed || sum.Epochs != 0 {
			t.Fatalf("a budget of %d bytes (floor %d): outcome %s after %d epochs", c.limit, floor, sum.Outcome, sum.Epochs)
		}
		if !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "MiB") {
			t.Fatalf("budget %d: error %q does not say %q", c.limit, err, c.says)
		}
	}
	if raceEnabled {
		t.Log("the run just above the floor is skipped under the race detector (its shadow memory is measured as the run's base)")
		return
	}
	cfg.MemLimit = strconv.FormatInt(floor+8<<20, 10)
	cfg.Epochs = 1
	systest.Run(t, cfg)
}

func mustDataDir(t *testing.T) string {
	d, err := systest.DataDir()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
