package report

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"outcore/engine/metrics"
	"outcore/engine/metrics/fields"
	"outcore/experiments/grid"
	"outcore/store"
)

// Source is what the reports read from the experiment store; *store.Store
// implements it.
type Source interface {
	Experiment(ctx context.Context, id int64) (store.Experiment, error)
	Runs(ctx context.Context, f store.RunFilter) ([]store.Run, error)
	Run(ctx context.Context, id int64) (store.Run, error)
	Epochs(ctx context.Context, runID int64) ([]store.Epoch, error)
	ExperimentEpochs(ctx context.Context, experimentID int64) (map[int64][]store.Epoch, error)
	Samples(ctx context.Context, runID int64, fromT, toT float64, limit int) ([]store.Sample, error)
}

// RunDataOf projects a stored run and its epochs (nil: none read) for the
// comparison views.
func RunDataOf(r store.Run, epochs []store.Epoch) RunData {
	d := RunData{ID: r.ID, System: r.System, MemLimit: r.MemLimitBytes, Dim: r.FeatureDim,
		Batch: r.BatchSize, Model: r.Model, Fanout: r.Fanout, Compute: r.Compute, Repeat: r.Repeat, Status: r.Status,
		EpochsDone: r.EpochsDone, BestVal: r.BestValAcc, TestAt: r.TestAcc, Cell: grid.CellWords(r.Cell)}
	if m, ok := MemoryOf(r); ok {
		d.Memory = &m
	}
	d.PrepareS = prepareOf(r.Summary)
	d.Values = fields.ParseRunValues(r.Summary)
	d.TrainMaxNodes = trainMaxNodesOf(r.Config)
	if len(epochs) > 0 {
		recs := make([]metrics.EpochRecord, len(epochs))
		for i, e := range epochs {
			recs[i] = e.EpochRecord
		}
		d.Digest = DigestEpochs(recs)
	}
	return d
}

// trainMaxNodesOf reads the bound on training nodes per epoch from a
// run's stored configuration (0 when it has none or it does not parse).
func trainMaxNodesOf(config json.RawMessage) int {
	var c struct {
		TrainMaxNodes int `json:"train_max_nodes"`
	}
	if len(config) == 0 || json.Unmarshal(config, &c) != nil || c.TrainMaxNodes < 0 {
		return 0
	}
	return c.TrainMaxNodes
}

// MetaOf is the provenance of figures drawn from runs: the experiment (or
// the run, when there is one run and run is set), the outcore version most
// of them ran with and the host they ran on (several hosts are listed).
func MetaOf(experimentID int64, runs []store.Run) FigureMeta {
	m := FigureMeta{Experiment: experimentID}
	versions := map[string]int{}
	var hosts []string
	for _, r := range runs {
		if r.OutcoreVersion != "" {
			versions[r.OutcoreVersion]++
		}
		var h metrics.HostFacts
		if json.Unmarshal(r.Host, &h) == nil && h.Hostname != "" && !contains(hosts, h.Hostname) {
			hosts = append(hosts, h.Hostname)
		}
	}
	best := 0
	for v, n := range versions {
		if n > best || (n == best && v < m.Version) {
			m.Version, best = v, n
		}
	}
	sort.Strings(hosts)
	m.Host = strings.Join(hosts, ", ")
	return m
}

// DigestStore keeps finished runs' digests with the runs (store.Store):
// LoadComparison reads them in one query and stores those it had to make,
// so that a server's first load of an experiment does not read every epoch.
type DigestStore interface {
	RunDigests(ctx context.Context, experimentID int64) (map[int64]store.StoredDigest, error)
	SaveRunDigests(ctx context.Context, digests map[int64]store.StoredDigest) error
}

// StoreRunDigest stores a finished run's digest with the run (the
// runner's Options.Finished): the first view of its experiment then reads
// it instead of the run's epochs. A run without epochs, or not finished,
// has none to store.
func StoreRunDigest(ctx context.Context, st interface {
	Source
	DigestStore
}, runID int64) error {
	r, err := st.Run(ctx, runID)
	if err != nil || !store.Finished(r.Status) || r.EpochsDone == 0 {
		return err
	}
	eps, err := st.Epochs(ctx, runID)
	if err != nil {
		return err
	}
	d := RunDataOf(r, eps).Digest
	if d == nil {
		return nil
	}
	b, err := encodeDigest(d)
	if err != nil {
		return err
	}
	return st.SaveRunDigests(ctx, map[int64]store.StoredDigest{runID: {Epochs: len(eps), Data: b}})
}

// bulkEpochReads is how many runs' epochs LoadComparison reads one query
// each; above it, one query reads the experiment's.
const bulkEpochReads = 4

// LoadComparison reads an experiment's current runs (retried attempts
// replaced by their latest) with their epochs and arranges them for the
// comparison views. A finished run's digest comes from cache once read;
// cache may be nil.
func LoadComparison(ctx context.Context, src Source, cache *DigestCache, experimentID int64) (*Comparison, error) {
	if _, err := src.Experiment(ctx, experimentID); err != nil {
		return nil, err
	}
	runs, err := src.Runs(ctx, store.RunFilter{ExperimentID: experimentID, Current: true, Brief: true})
	if err != nil {
		return nil, err
	}
	rd := make([]RunData, len(runs))
	var missing []int // runs whose epochs must be read
	for i, r := range runs {
		if d, ok := cache.get(r); ok {
			rd[i] = RunDataOf(r, nil)
			rd[i].Digest = d
			continue
		}
		if r.Status != store.StatusQueued && r.EpochsDone > 0 || r.Status == store.StatusRunning {
			missing = append(missing, i)
			continue
		}
		rd[i] = RunDataOf(r, nil)
		cache.put(r, nil) // finished without epochs: nothing to read again
	}
	// Finished runs whose digest a reader stored with the run: one query.
	ds, canStore := src.(DigestStore)
	if canStore && len(missing) > 0 {
		stored, err := ds.RunDigests(ctx, experimentID)
		if err != nil {
			return nil, err
		}
		left := missing[:0]
		for _, i := range missing {
			r := runs[i]
			if sd, ok := stored[r.ID]; ok && store.Finished(r.Status) {
				if d, ok := decodeDigest(sd.Data); ok {
					rd[i] = RunDataOf(r, nil)
					rd[i].Digest = d
					cache.put(r, d)
					continue
				}
			}
			left = append(left, i)
		}
		missing = left
	}
	// Few runs to read (a running one, after the first load): one query
	// each; more: the experiment's epochs in one query.
	var all map[int64][]store.Epoch
	if len(missing) > bulkEpochReads {
		if all, err = src.ExperimentEpochs(ctx, experimentID); err != nil {
			return nil, err
		}
	}
	save := map[int64]store.StoredDigest{}
	for _, i := range missing {
		r := runs[i]
		eps, ok := all[r.ID]
		if all == nil {
			if eps, err = src.Epochs(ctx, r.ID); err != nil {
				return nil, err
			}
		} else if !ok {
			eps = nil
		}
		rd[i] = RunDataOf(r, eps)
		cache.put(r, rd[i].Digest)
		if canStore && store.Finished(r.Status) && rd[i].Digest != nil {
			if b, err := encodeDigest(rd[i].Digest); err == nil {
				save[r.ID] = store.StoredDigest{Epochs: r.EpochsDone, Data: b}
			}
		}
	}
	if len(save) > 0 {
		// Kept for the next reader; a store that refuses (read-only, full
		// disk) only costs the next reader the epochs again.
		_ = ds.SaveRunDigests(ctx, save)
	}
	cmp := NewComparison(rd)
	cmp.meta = MetaOf(experimentID, runs)
	cmp.fingerprint = fingerprint(experimentID, runs)
	return cmp, nil
}

// fingerprint names what a comparison's charts are made of: the runs, how
// they ended and how many epochs each has stored. Equal fingerprints, equal
// charts (digests of finished runs do not change).
func fingerprint(experimentID int64, runs []store.Run) string {
	h := fnv.New64a()
	var b [8]byte
	put := func(v int64) {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	put(experimentID)
	for _, r := range runs {
		put(r.ID)
		put(int64(r.EpochsDone))
		put(int64(r.IOFloorFills)) // floors filled in afterwards change the charts
		h.Write([]byte(r.Status))
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// LoadRunCharts reads a run's epochs and per-second samples and builds the
// run page's charts (RunChartIDs, in that order).
func LoadRunCharts(ctx context.Context, src Source, runID int64) ([]Chart, error) {
	run, err := src.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	epochs, err := src.Epochs(ctx, runID)
	if err != nil {
		return nil, err
	}
	samples, err := src.Samples(ctx, runID, 0, 0, 0)
	if err != nil {
		return nil, err
	}
	return RunCharts(run, epochs, samples), nil
}
