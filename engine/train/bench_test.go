package train

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/graph"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/storage"
)

// BenchmarkSAGEStep times one reference-pipeline step of 3-layer GraphSAGE
// (batch 1000, fanouts 10,10,10, 256 hidden) on a generated graph with
// 128-dim features, split into sample / gather / forward / backward, and
// reports the median of each over the iterations (ms).
//
// The dataset is $OUTCORE_BENCH_DATASET in $OUTCORE_BENCH_DATA when both are
// set (e.g. `outcore data gen --preset small --dim 128 --name small128`);
// otherwise the `small` preset with 128 dims (400k nodes, 205 MB of
// features) is generated into a temporary directory first.
func BenchmarkSAGEStep(b *testing.B) {
	dataDir, name := os.Getenv("OUTCORE_BENCH_DATA"), os.Getenv("OUTCORE_BENCH_DATASET")
	if dataDir == "" || name == "" {
		dataDir, name = testDataDir, "small128"
		genDataset(b, name, func(c *dataset.GenConfig) {
			p, _ := dataset.Preset("small")
			*c = p
			c.FeatureDim = 128
		})
	}
	ds, err := dataset.OpenByName(dataDir, name)
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Dataset, cfg.Hidden, cfg.Fanout, cfg.Batch, cfg.LR = name, 256, []int{10, 10, 10}, 1000, 0.003
	cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	labels, _ := ds.Labels()
	trainIDs, _ := ds.TrainIDs()
	tr, err := NewTrainer(cfg, ds.Meta.FeatureDim, ds.Meta.Classes, labels)
	if err != nil {
		b.Fatal(err)
	}
	idx, err := ds.LoadIndices()
	if err != nil {
		b.Fatal(err)
	}
	s, err := sample.New(sample.Topology{Indptr: ds.Indptr, Indices: sample.MemIndices(idx)}, cfg.Fanout, 1)
	if err != nil {
		b.Fatal(err)
	}
	f, err := storage.OpenFile(ds.Path(dataset.FeaturesFile), storage.Options{RowBytes: ds.RowBytes(), Logger: func(l string) { b.Log(l) }})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	g, err := NewGatherer(f, ds.Meta.FeatureDim)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	batches := sample.EpochBatches(trainIDs, cfg.Batch, 1, 0)
	var mb graph.MiniBatch
	var x nn.Tensor
	var smp, gat, fwd, bwd, all []float64
	var inputs []float64
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	step := func(i int) {
		t0 := time.Now()
		if err := s.SampleInto(&mb, 0, i, batches[i%len(batches)]); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := g.Gather(context.Background(), mb.InputNodes, &x); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		res, err := tr.Step(&mb, &x)
		if err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		smp, gat = append(smp, ms(t1.Sub(t0))), append(gat, ms(t2.Sub(t1)))
		fwd, bwd = append(fwd, ms(res.Forward)), append(bwd, ms(res.Backward))
		all, inputs = append(all, ms(t3.Sub(t0))), append(inputs, float64(len(mb.InputNodes)))
	}
	step(0) // warm the arenas and the GEMM library
	smp, gat, fwd, bwd, all, inputs = nil, nil, nil, nil, nil, nil
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step(i + 1)
	}
	b.StopTimer()
	b.ReportMetric(median(smp), "sample-ms")
	b.ReportMetric(median(gat), "gather-ms")
	b.ReportMetric(median(fwd), "forward-ms")
	b.ReportMetric(median(bwd), "backward-ms")
	b.ReportMetric(median(all), "step-ms")
	b.ReportMetric(median(inputs), "input-nodes")
	b.Logf("gemm=%s, storage=%s", nn.GemmBackend(), f.Stats())
}

// median of v (0 when empty).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
