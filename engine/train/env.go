package train

import (
	"context"
	"fmt"
	"sync"
	"time"

	"outcore/engine/accel"
	"outcore/engine/dataset"
	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/storage"
)

// Env is what a System works with: the opened dataset, its labels and
// splits, the trainer, the memory budget, the record emitter and the storage
// options of the run.
type Env struct {
	// testbed are the deviations of the run's testbed mapping (testbed.go).
	testbed []string

	Config  Config
	Dataset *dataset.Dataset
	Labels  []int32
	Train   []int64
	Val     []int64
	Test    []int64
	Trainer *Trainer
	// MemBudget is the run's memory limit in bytes (0 = unlimited). Variants
	// size their caches and buffers from it.
	MemBudget int64
	// Limit is the memory limit the process runs under, which a variant
	// lifts while profiling and holds at MemBudget plus what it keeps
	// outside the budget (memory_limit.go). Never nil in Run.
	Limit MemoryLimit
	// GPURuntimeBytes is the host memory the GPU runtime took when the
	// trainer moved to the GPU (gpu_runtime.go), held outside the budget
	// with the model step; 0 on the CPU.
	GPURuntimeBytes int64
	Emit            *metrics.Emitter
	// Storage holds the I/O options of the run (backend, queue depth,
	// logger, and Reads as the Account every File opened from them reports
	// its device reads to); OpenFeatures and OpenIndices start from it.
	Storage storage.Options
	// Reads is the run's device-read account by file kind (DESIGN §5):
	// engine/storage Files opened from Storage, memory-mapped indices of
	// Topology("mmap") and what a variant adds for its own memory maps.
	// The run loop puts each epoch's difference into the epoch record.
	Reads *metrics.ReadAccount

	// compute is the run's compute mode and profile its accelerator
	// profile (model mode): TrainStep's consumer (compute.go).
	compute accel.Mode
	profile *accel.Profile
	// device is the measured storage of the data directory (nil: not
	// measured here): each epoch's I/O floor (io_floor.go).
	device *metrics.DeviceProfile

	progress     func(metrics.ProgressRecord)
	lastProgress time.Time
	progMu       sync.Mutex

	prepMu     sync.Mutex
	prepStages map[string]float64
	deviations []string
	memory     *metrics.MemoryAccount // device_mem.go
	disk       *diskHeld              // disk_held.go
}

// Deviate records a departure from the paper decided while the run
// prepares (the summary record lists it with the variant's own) and logs it
// as a warning.
func (e *Env) Deviate(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	e.prepMu.Lock()
	e.deviations = append(e.deviations, msg)
	e.prepMu.Unlock()
	_ = e.Emit.Warnf("%s%s", metrics.DeviationLogPrefix, msg)
}

// Logf emits an info log record.
func (e *Env) Logf(format string, args ...any) { _ = e.Emit.Infof(format, args...) }

// Warnf emits a warn log record.
func (e *Env) Warnf(format string, args ...any) { _ = e.Emit.Warnf(format, args...) }

// OpenFeatures opens features.bin for row reads with the run's storage
// options (RowBytes = feature row size).
func (e *Env) OpenFeatures() (*storage.File, error) {
	o := e.Storage
	o.RowBytes = e.Dataset.RowBytes()
	o.Kind = metrics.FileFeatures
	f, err := storage.OpenFile(e.Dataset.Path(dataset.FeaturesFile), o)
	if err != nil {
		return nil, fmt.Errorf("open features: %w", err)
	}
	return f, nil
}

// OpenIndices opens indices.bin with the run's storage options and 8-byte
// rows (one row per index entry), for sample.StorageIndices.
func (e *Env) OpenIndices() (*storage.File, error) {
	o := e.Storage
	o.RowBytes = 8
	o.Kind = metrics.FileTopology
	f, err := storage.OpenFile(e.Dataset.Path(dataset.IndicesFile), o)
	if err != nil {
		return nil, fmt.Errorf("open indices: %w", err)
	}
	return f, nil
}

// Shape is the dataset's shape (train.DatasetShape) with the training
// split as loaded.
func (e *Env) Shape() DatasetShape {
	s := ShapeOf(e.Dataset.Meta)
	s.Train = int64(len(e.Train))
	return s
}

// NumBatches is the number of training batches per epoch.
func (e *Env) NumBatches() int {
	b := e.Config.Batch
	if b <= 0 || b >= len(e.Train) {
		return min(1, len(e.Train))
	}
	return (len(e.Train) + b - 1) / b
}

// EpochBatches returns the seeds of every training batch of epoch, in the
// standard deterministic order (batch i of the list is MiniBatch.Index i).
func (e *Env) EpochBatches(epoch int) [][]int64 {
	return sample.EpochBatches(e.Train, e.Config.Batch, e.Config.Seed, epoch)
}

// NewSampler builds a training sampler over topo with the run's fanouts
// and seed.
func (e *Env) NewSampler(topo sample.Topology) (*sample.Sampler, error) {
	return sample.New(topo, e.Config.Fanout, e.Config.Seed)
}

// TrainStep trains one ready mini-batch (x = features of mb.InputNodes) and
// records it in ep: train_s (with forward_s and backward_s in Stages), the
// batch's loss and accuracy, the end of the epoch's wall time, and a
// progress record. Call it from one goroutine at a time. In the compute
// modes none and model (Config.Compute) the batch is consumed without
// training (compute.go): the result is zero and the epoch has no loss.
func (e *Env) TrainStep(ep *metrics.EpochStats, mb *graph.MiniBatch, x *nn.Tensor) (StepResult, error) {
	if !e.compute.Trains() {
		return e.consume(ep, mb, x, nil)
	}
	return e.trainStep(ep, mb, func() (StepResult, error) { return e.Trainer.Step(mb, x) })
}

// TrainStepIndexed is TrainStep with the batch input read through an index
// into a table of rows (Trainer.StepIndexed).
func (e *Env) TrainStepIndexed(ep *metrics.EpochStats, mb *graph.MiniBatch, x nn.Indexed) (StepResult, error) {
	if !e.compute.Trains() {
		return e.consume(ep, mb, nil, &x)
	}
	return e.trainStep(ep, mb, func() (StepResult, error) { return e.Trainer.StepIndexed(mb, x) })
}

func (e *Env) trainStep(ep *metrics.EpochStats, mb *graph.MiniBatch, step func() (StepResult, error)) (StepResult, error) {
	t0 := time.Now()
	res, err := step()
	ep.Add(metrics.StageTrain, time.Since(t0))
	if err != nil {
		return res, err
	}
	ep.Add(metrics.StageForward, res.Forward)
	ep.Add(metrics.StageBackward, res.Backward)
	ep.BatchDone(res.Loss, res.Correct, res.N)
	e.Progress(mb.Epoch, ep.Batches(), e.NumBatches(), "train")
	return res, nil
}

// Progress reports progress inside a phase ("prepare", "train", "eval").
// Records are rate-limited to a few per second; the last batch always goes
// out.
func (e *Env) Progress(epoch, batch, batches int, phase string) {
	if e.progress == nil {
		return
	}
	e.progMu.Lock()
	now := time.Now()
	if batch < batches && now.Sub(e.lastProgress) < 250*time.Millisecond {
		e.progMu.Unlock()
		return
	}
	e.lastProgress = now
	e.progMu.Unlock()
	e.progress(metrics.ProgressRecord{Type: metrics.TypeProgress, Epoch: epoch, Batch: batch, Batches: batches, Phase: phase, Elapsed: e.Emit.T()})
}

// PrepareStage records the duration of one named preparation phase
// ("inspect_s", "partition_s", "pack_s", ...); the summary lists them.
func (e *Env) PrepareStage(name string, d time.Duration) {
	e.prepMu.Lock()
	defer e.prepMu.Unlock()
	if e.prepStages == nil {
		e.prepStages = map[string]float64{}
	}
	e.prepStages[name] += d.Seconds()
}

// Topology returns the training graph's topology with indptr in memory and
// indices read as mode says: "memory" (loaded whole), "mmap" (memory-mapped,
// page faults on the sampling goroutine) or "storage" (read through
// engine/storage with the run's backend). The returned close function
// releases what the topology holds.
func (e *Env) Topology(mode string) (sample.Topology, func() error, error) {
	t := sample.Topology{Indptr: e.Dataset.Indptr}
	switch mode {
	case "memory":
		idx, err := e.Dataset.LoadIndices()
		if err != nil {
			return t, nil, fmt.Errorf("load indices: %w", err)
		}
		t.Indices = sample.MemIndices(idx)
		return t, func() error { return nil }, nil
	case "mmap":
		m, err := sample.OpenMmapIndices(e.Dataset.Path(dataset.IndicesFile), e.Dataset.Edges())
		if err != nil {
			return t, nil, err
		}
		m.CountInto(e.Reads, metrics.FileTopology)
		t.Indices = m
		return t, m.Close, nil
	case "storage":
		f, err := e.OpenIndices()
		if err != nil {
			return t, nil, err
		}
		s := sample.NewStorageIndices(f)
		t.Indices = s
		return t, func() error {
			err := s.Close()
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}, nil
	}
	return t, nil, fmt.Errorf("%w: topology mode %q (want memory, mmap or storage)", ErrConfig, mode)
}

// Gather is a convenience for simple pipelines: it reads the rows of
// mb.InputNodes into x through g on the calling goroutine, timing
// extract_s, the gather as one extract worker (busy and wait) and
// accounting every row as looked up on the device (ep.Lookup).
func (e *Env) Gather(ctx context.Context, ep *metrics.EpochStats, g *Gatherer, mb *graph.MiniBatch, x *nn.Tensor) error {
	t0 := time.Now()
	w := ep.StartWorker(metrics.WorkExtract)
	err := g.Gather(ctx, mb.InputNodes, x)
	w.Stop()
	ep.Add(metrics.StageExtract, time.Since(t0))
	if err != nil {
		return err
	}
	ep.Lookup(int64(len(mb.InputNodes)), e.Dataset.RowBytes(), 0)
	return nil
}

// Sample samples mini-batch batch of epoch into mb with s on the calling
// goroutine, timing sample_s and the sampling as one sample worker (busy
// and wait), for simple pipelines.
func (e *Env) Sample(ep *metrics.EpochStats, s *sample.Sampler, mb *graph.MiniBatch, epoch, batch int, seeds []int64) error {
	t0 := time.Now()
	w := ep.StartWorker(metrics.WorkSample)
	err := s.SampleInto(mb, epoch, batch, seeds)
	w.Stop()
	ep.Add(metrics.StageSample, time.Since(t0))
	return err
}
