package gnndrive

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"outcore/engine/cache"
	"outcore/engine/dataset"
	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/storage"
	"outcore/engine/system/systest"
	"outcore/internal/osutil"
)

// TestStagingBufferExtraction: an extractor of the device layout reads
// every load into its staging rows and copies it to the buffer slot; with
// far fewer staging rows than loads (7 for 300) the rows are reused as
// loads complete, and every slot ends up with its node's features.
func TestStagingBufferExtraction(t *testing.T) {
	dir, err := systest.DataDir()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dataset.DatasetsDir(dir), systest.Dataset(t), dataset.FeaturesFile)
	const dim, nodes = 32, 4000
	f, err := storage.OpenFile(path, storage.Options{RowBytes: dim * 4, AllowBuffered: true, Logger: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := f.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf, err := cache.NewFeatureBuffer(cache.FeatureBufferConfig{Nodes: nodes, Dim: dim, Slots: 600, Extractors: 1, MaxBatch: 300})
	if err != nil {
		t.Fatal(err)
	}
	stage := newStagingArea(make([]float32, 7*dim), dim)
	e := &extractor{r: r, feats: f, buf: buf, stage: stage}
	rng := rand.New(rand.NewPCG(3, 4))
	ids := make([]int64, 0, 300)
	for _, v := range rng.Perm(nodes)[:300] {
		ids = append(ids, int64(v))
	}
	x := &cache.Extraction{}
	if err := e.extract(context.Background(), &graph.MiniBatch{InputNodes: ids}, x, metrics.NewEpochStats()); err != nil {
		t.Fatal(err)
	}
	if len(x.Loads) != 300 || stage.free() != 7 {
		t.Fatalf("%d loads, %d staging rows free after the batch (want 300, 7)", len(x.Loads), stage.free())
	}
	want := make([]float32, len(ids)*dim)
	if err := r.ReadRows(context.Background(), ids, osutil.Bytes(want)); err != nil {
		t.Fatal(err)
	}
	for i, s := range x.Aliases {
		if !slices.Equal(buf.Row(s), want[i*dim:(i+1)*dim]) {
			t.Fatalf("node %d: buffer slot %d does not hold its features", ids[i], s)
		}
	}
}
