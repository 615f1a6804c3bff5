package mariusgnn

// "mariusgnn": Prepare partitions the graph (the artifact's preprocessing,
// partitions.go), sizes the partition buffer from the budget (sizing.go)
// and opens it; the epoch is epoch.go's (doc.go has the whole variant).

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/engine/vocab"
)

// DefaultPartitions is p when option partitions is not given.
const DefaultPartitions = 64

// ioQueueDepth and ioMergeBytes shape the buffer's reads: each partition is
// one large contiguous range, read in requests of up to ioMergeBytes with
// ioQueueDepth in flight per reader.
const (
	ioQueueDepth = 16
	ioMergeBytes = 256 << 10
)

type system struct {
	kit.Base
	opt options

	mem          *kit.Budget
	scratch      string
	l            *Layout
	b            Buckets
	feats, edges *storage.File
	pb           *PartitionBuffer
	sg           Subgraph
	ds           *DenseSampler
	c            int
	dim          int
	rowBytes     int64
	trainNew     []int64 // training nodes, partitioned ids
	x            nn.Tensor
	xMem         kit.OffHeap
}

func (s *system) Prepare(ctx context.Context, env *train.Env) error {
	s.mem = kit.NewBudget(env)
	ds := env.Dataset
	s.dim, s.rowBytes = ds.Meta.FeatureDim, ds.RowBytes()
	if int64(s.opt.partitions) > ds.Nodes() {
		return fmt.Errorf("%w: mariusgnn: %d partitions for %d nodes", train.ErrConfig, s.opt.partitions, ds.Nodes())
	}
	var err error
	if s.scratch, err = env.ScratchDir(); err != nil {
		return err
	}

	featPath, edgePath, err := s.partition(ctx, env)
	if err != nil {
		return err
	}

	// Short profiling: base memory, batch sizes and the model step (held
	// outside the budget by default, kit's Budget).
	t0 := time.Now()
	topo, closeTopo, err := env.Topology("storage")
	if err != nil {
		return err
	}
	ws, err := s.mem.Profile(ctx, topo, s.opt.profile)
	if cerr := closeTopo(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	env.PrepareStage("profile_s", time.Since(t0))

	o, err := s.openPartitioned(env, featPath, edgePath)
	if err != nil {
		return err
	}

	// Buffer capacity from the budget (sizing.go).
	in := kit.Sizing[options, profile]{Budget: env.MemBudget, WS: ws, Shape: train.ShapeOf(ds.Meta), Cfg: env.Config, Opt: s.opt, Prof: profile{
		run:         true,
		p:           s.l.P,
		partSize:    s.l.PartSize,
		trainParts:  s.l.TrainParts,
		buckets:     bucketSizes(s.b),
		readerQueue: o.QueueDepth,
	}}
	pl, least, in, err := s.sizeBuffer(ctx, env, in)
	if err != nil {
		return err
	}
	if pl.overReserve {
		env.Warnf("mariusgnn: a buffer of %d partitions needs about %d MiB with the reserve, over the %d MiB budget: expect an OOM kill", pl.c, pl.need>>20, env.MemBudget>>20)
	}
	if _, err := s.mem.Apply(s.memory(env, in, pl, least)); err != nil {
		return err
	}
	s.c = pl.c
	if pl.spare && s.c < s.l.P {
		env.Logf("mariusgnn: one spare slot for prefetching the next state's partition (the artifact's prefetching)")
	}
	if s.pb, err = NewPartitionBuffer(s.l, s.b, s.feats, s.edges, s.rowBytes, s.c, pl.spare); err != nil {
		return fmt.Errorf("mariusgnn: %w", err)
	}
	if err := s.newSampler(env); err != nil {
		return err
	}
	// The batch input: at most the resident nodes or the fanouts' bound;
	// pages are touched only as far as a batch needs.
	xRows := min(int64(s.pb.Slots())*s.l.PartSize, vocab.MaxInputBound(in.Shape, env.Config))
	if xd, err := s.xMem.Float32s(int(xRows) * s.dim); err == nil {
		s.x.Data = xd[:0]
	}
	s.mem.Enter(pl.goHeap(ws, s.opt.samplers, s.opt.ahead(), s.pb.Slots(), s.l.PartSize))
	env.Logf("mariusgnn: %s ordering, %d partitions of %d nodes (%d MiB of features each), %d edges in %d buckets; training nodes in %d partitions",
		s.opt.ordering, s.l.P, s.l.PartSize, (s.l.PartSize*s.rowBytes)>>20, s.b.Edges(), s.l.P*s.l.P, s.l.TrainParts)
	env.Logf("mariusgnn: buffer of %d partitions (%d slots, %.1f%% of the features), about %d MiB needed of a %d MiB budget (base %d MiB, %d MiB per mini-batch); %d samplers; reads via %s (direct=%v)",
		s.c, s.pb.Slots(), 100*float64(s.c)/float64(s.l.P), pl.need>>20, env.MemBudget>>20, ws.BaseBytes>>20, pl.perBatch>>20, s.opt.samplers, s.feats.Backend(), s.feats.Direct())
	return nil
}

// newSampler builds the DENSE sampler, the full degree of a resident node
// read from the original indptr.
func (s *system) newSampler(env *train.Env) error {
	var err error
	if s.ds, err = NewDenseSampler(env.Config.Fanout, env.Config.Seed); err != nil {
		return err
	}
	indptr := env.Dataset.Indptr
	s.ds.FullDegree = func(local int64) int64 {
		v := s.l.Old(s.sg.Partitioned(local))
		return indptr[v+1] - indptr[v]
	}
	return nil
}

// partition lays the nodes out in partitions and writes the partitioned
// features and the edge buckets (the artifact's preprocessing) under the
// scratch directory, on the prepare clock.
func (s *system) partition(ctx context.Context, env *train.Env) (featPath, edgePath string, err error) {
	// Partitioning (the artifact's preprocessing), on the prepare clock.
	t0 := time.Now()
	if s.l, err = NewLayout(env.Dataset.Nodes(), env.Train, s.opt.partitions, s.opt.ordering == OrderingSequential, uint64(env.Config.Seed)); err != nil {
		return "", "", fmt.Errorf("mariusgnn: %w", err)
	}
	if s.l.P != s.opt.partitions {
		env.Logf("mariusgnn: %d partitions of %d nodes cover the %d nodes (%d requested)", s.l.P, s.l.PartSize, env.Dataset.Nodes(), s.opt.partitions)
	}
	s.trainNew = make([]int64, len(env.Train))
	for i, v := range env.Train {
		s.trainNew[i] = s.l.New(v)
	}
	env.PrepareStage("partition_s", time.Since(t0))
	writeBuf := int64(64 << 20)
	if env.MemBudget > 0 {
		writeBuf = min(writeBuf, max(env.MemBudget/8, 4<<20))
	}
	t0 = time.Now()
	featPath = filepath.Join(s.scratch, "features.partitioned")
	if err := WritePartitionedFeatures(ctx, s.l, env.FeaturesPath(), featPath, s.rowBytes, writeBuf); err != nil {
		return "", "", fmt.Errorf("mariusgnn: %w", err)
	}
	env.PrepareStage("partition_features_s", time.Since(t0))
	t0 = time.Now()
	edgePath = filepath.Join(s.scratch, "edge_buckets")
	if s.b, err = WriteEdgeBuckets(ctx, s.l, env.Dataset.Indptr, env.IndicesPath(), edgePath, writeBuf); err != nil {
		return "", "", fmt.Errorf("mariusgnn: %w", err)
	}
	env.PrepareStage("edge_buckets_s", time.Since(t0))

	return featPath, edgePath, nil
}

// openPartitioned opens the partitioned features and the edge buckets
// through engine/storage, their reads features and topology; it returns
// the options they were opened with.
func (s *system) openPartitioned(env *train.Env, featPath, edgePath string) (o storage.Options, err error) {
	o = env.Storage
	if o.QueueDepth == 0 {
		o.QueueDepth = ioQueueDepth
	}
	o.MaxMergeBytes = ioMergeBytes
	o.RowBytes = s.rowBytes
	o.Kind = metrics.FileFeatures // a copy of features.bin: its reads are feature reads
	if s.feats, err = storage.OpenFile(featPath, o); err != nil {
		return o, fmt.Errorf("mariusgnn: open partitioned features: %w", err)
	}
	o.RowBytes = EdgeBytes
	o.Kind = metrics.FileTopology // the graph's edges
	if s.edges, err = storage.OpenFile(edgePath, o); err != nil {
		return o, fmt.Errorf("mariusgnn: open edge buckets: %w", err)
	}

	return o, nil
}

// sizeBuffer sizes the buffer from the budget (sizing.go), the DENSE
// batches measured first on the largest buffer the budget could hold when
// the capacity is not given. It returns the plan, its least budget
// (kit.Size) and the sizing it was made of.
func (s *system) sizeBuffer(ctx context.Context, env *train.Env, in kit.Sizing[options, profile]) (plan, int64, kit.Sizing[options, profile], error) {
	if env.MemBudget > 0 && s.opt.bufferCapacity == 0 {
		// Measure DENSE batches on the largest buffer the budget could
		// hold with no batch at all (their inputs only shrink with the
		// buffer), then size with that measure.
		t0 := time.Now()
		hi := in
		hi.Prof.dense = batchMeasure{maxInputs: 1}
		if hp := size(hi); hp.feasible {
			m, err := s.profileDense(ctx, env, hp.c)
			if err != nil {
				return plan{}, 0, in, err
			}
			in.Prof.dense = m
			env.Logf("mariusgnn: DENSE batches on a buffer of %d partitions: at most %d input nodes, %d KiB per mini-batch", hp.c, m.maxInputs, m.bytes>>10)
		}
		env.PrepareStage("profile_dense_s", time.Since(t0))
	}
	pl, least := kit.Size(size, in)
	return pl, least, in, nil
}

// memory is the plan as the shared preparation applies it (kit.Plan): a
// plan that does not fit, or a capacity below what the ordering keeps
// resident, refused; the capacity derived from the budget in words.
func (s *system) memory(env *train.Env, in kit.Sizing[options, profile], pl plan, least int64) kit.Plan {
	m := kit.Plan{Fits: pl.feasible && pl.c >= pl.minC}
	if !pl.feasible {
		m.LeastBudget = least
	}
	switch {
	case !pl.feasible:
		m.Refusal = fmt.Errorf("mariusgnn: %w", pl.infeasible(env.MemBudget, in))
	case pl.c < pl.minC:
		m.Refusal = fmt.Errorf("%w: mariusgnn: buffer_capacity %d below the %d training partitions the sequential ordering keeps resident", train.ErrConfig, pl.c, pl.minC)
	}
	if env.MemBudget > 0 && s.opt.bufferCapacity == 0 {
		m.Cuts = append(m.Cuts, fmt.Sprintf("buffer capacity %d of %d partitions derived from the %d MiB memory budget (the artifact takes buffer_capacity from its configuration)", pl.c, in.Prof.p, env.MemBudget>>20))
	}
	return m
}

func bucketSizes(b Buckets) []int64 {
	out := make([]int64, len(b.Off)-1)
	for k := range out {
		out[k] = b.Off[k+1] - b.Off[k]
	}
	return out
}

func (s *system) Close() error {
	var c kit.Closer
	c.Close(s.pb)
	c.Add(s.sg.Free())
	s.x.Data = nil
	c.Add(s.xMem.Free())
	c.Close(s.feats, s.edges)
	c.Remove(s.scratch, s.opt.keepFiles)
	return c.Err(Name)
}
