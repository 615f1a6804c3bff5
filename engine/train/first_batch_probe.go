package train

// The first-batch probe: a lower bound of a run's largest mini-batch from
// the dataset itself. A variant's MinMemory (its floor for a memory
// budget) needs the input nodes of a mini-batch, which the dataset's shape
// cannot give (on a power-law graph a batch's sampled neighbourhood is far
// smaller than fanouts and average degree suggest). Every run trains epoch
// 0's first batch, sampled deterministically from the run's seed and
// fanouts, so its input-node count is a true lower bound of M_b; sampling
// it costs one mini-batch of index reads, whose page-cache pages are
// dropped afterwards (a measurement that follows starts cold).

import (
	"fmt"
	"path/filepath"
	"sync"

	"outcore/engine/dataset"
	"outcore/engine/sample"
	"outcore/internal/osutil"
)

// probeKey names one probe: the dataset directory and what decides the
// first batch's sample.
type probeKey struct {
	dir    string
	batch  int
	seed   int64
	fanout string
}

var (
	probeMu    sync.Mutex
	probeCache = map[probeKey]firstBatch{}
)

// firstBatch is what the probe measured of the first mini-batch.
type firstBatch struct {
	inputs, bytes, hopEntries int64
}

// ProbeShape returns the shape of cfg's dataset (meta.json) with
// FirstBatchInputs, FirstBatchBytes and FirstBatchHopEntries filled in by
// sampling epoch 0's first training batch with cfg's fanouts and seed. Results are cached per dataset and sampling
// setting for the life of the process.
func ProbeShape(cfg Config) (DatasetShape, error) {
	dir := filepath.Join(dataset.DatasetsDir(dataset.ResolveDataDir(cfg.DataDir)), cfg.Dataset)
	m, err := dataset.ReadMeta(dir)
	if err != nil {
		return DatasetShape{}, err
	}
	shape := ShapeOf(m)
	key := probeKey{dir: dir, batch: cfg.Batch, seed: cfg.Seed, fanout: fmt.Sprint(cfg.Fanout)}
	probeMu.Lock()
	fb, ok := probeCache[key]
	probeMu.Unlock()
	if !ok {
		if fb, err = probeFirstBatch(dir, cfg); err != nil {
			return shape, fmt.Errorf("probe the first mini-batch of %s: %w", cfg.Dataset, err)
		}
		probeMu.Lock()
		probeCache[key] = fb
		probeMu.Unlock()
	}
	shape.FirstBatchInputs, shape.FirstBatchBytes, shape.FirstBatchHopEntries = fb.inputs, fb.bytes, fb.hopEntries
	return shape, nil
}

// probeFirstBatch samples epoch 0's first batch and returns its input-node
// count, its bytes (ids and blocks, graph.MiniBatch.Bytes) and its largest
// hop's neighbour entries.
func probeFirstBatch(dir string, cfg Config) (firstBatch, error) {
	ds, err := dataset.OpenQuick(dir)
	if err != nil {
		return firstBatch{}, err
	}
	ids, err := ds.TrainIDs()
	if err != nil {
		return firstBatch{}, err
	}
	batches := sample.EpochBatches(ids, cfg.Batch, cfg.Seed, 0)
	if len(batches) == 0 {
		return firstBatch{}, nil
	}
	idx, err := sample.OpenMmapIndices(ds.Path(dataset.IndicesFile), ds.Edges())
	if err != nil {
		return firstBatch{}, err
	}
	defer idx.Close()
	s, err := sample.New(sample.Topology{Indptr: ds.Indptr, Indices: idx}, cfg.Fanout, cfg.Seed)
	if err != nil {
		return firstBatch{}, err
	}
	mb, err := s.Sample(0, 0, batches[0])
	if err != nil {
		return firstBatch{}, err
	}
	if err := idx.DropCache(); err != nil {
		return firstBatch{}, err
	}
	_ = osutil.DropFileCache(ds.Path(dataset.IndptrFile))
	fb := firstBatch{inputs: int64(len(mb.InputNodes)), bytes: mb.Bytes()}
	for _, b := range mb.Blocks {
		fb.hopEntries = max(fb.hopEntries, int64(len(b.Indices)))
	}
	return fb, nil
}
