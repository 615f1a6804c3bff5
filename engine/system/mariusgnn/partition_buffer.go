package mariusgnn

// The partition buffer, MariusGNN's in-memory store of c node partitions
// (GNNDrive §2: "MariusGNN ... transfers subsets of these partitions to host
// memory for training"; §3 D2: it "mainly utilizes data of a buffered
// partition for sampling and extracting"; DiskGNN §1: it "swaps in a few of
// them to CPU memory during each training epoch"), as the artifact's
// PartitionBuffer and its in-memory subgraph do for node classification:
//
//   - c slots of one partition's feature rows each (plus, with prefetching,
//     one spare slot that the next state's admitted partition is read into
//     while the current state trains: the artifact's prefetch option);
//   - the edge buckets (i, j) of every pair of resident partitions, from
//     which the in-memory subgraph of the state is built
//     (in_memory_subgraph.go);
//   - moving to a buffer state evicts the partitions it does not hold and
//     admits (reads) the ones it lacks; resident ones are buffer hits.
//
// Reads are direct I/O through engine/storage (O_DIRECT with io_uring or
// the pread pool): each admitted partition is one request for its whole
// contiguous range of the partitioned features file, all the admitted
// partitions of a state and their buckets submitted together and reaped as
// they finish. Buffer memory comes from anonymous maps outside the Go heap
// (returned to the system at Release), as the artifact's buffer is a
// pre-allocated tensor.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"outcore/engine/storage"
	"outcore/internal/osutil"
)

// BufferStats counts the buffer's work (all fields cumulative).
type BufferStats struct {
	PartitionLoads   int64 // partitions read from disk (admissions)
	PartitionHits    int64 // partitions a state needed that were already resident
	PrefetchedLoads  int64 // admissions read ahead, off the critical path
	FeatureBytesRead int64 // bytes of partitioned features read
	BucketLoads      int64 // edge buckets read
	EdgeBytesRead    int64 // bytes of edge buckets read
}

// PartitionBuffer holds c partitions' features and the edge buckets among
// them. One goroutine drives it (Load, StartPrefetch, Release); the rows,
// subgraph and buckets of the current state may be read concurrently
// between Loads.
type PartitionBuffer struct {
	l        *Layout
	b        Buckets
	rowBytes int64
	c        int
	nslots   int // c, or c+1 with a spare slot for prefetching

	feats, edges *storage.File
	fr, er       storage.Reader // readers of the Load goroutine

	slotMem  [][]byte // feature rows of each slot
	slotPart []int    // partition in each slot, -1 = free
	partSlot []int    // slot of each partition, -1 = not resident
	state    []int
	buckets  map[int][]int32 // resident buckets by Buckets.Index, as (u, v) pairs

	pf *prefetch

	statsMu sync.Mutex
	stats   BufferStats
	memB    atomic.Int64 // bytes of anonymous memory mapped
}

// NewPartitionBuffer sets up a buffer of c partitions (plus a spare slot
// when spare) over the partitioned features file feats (rows of rowBytes)
// and the edge-bucket file edges. Slot memory is mapped now and touched
// only when filled.
func NewPartitionBuffer(l *Layout, b Buckets, feats, edges *storage.File, rowBytes int64, c int, spare bool) (*PartitionBuffer, error) {
	if c < 1 || c > l.P {
		return nil, fmt.Errorf("partition buffer: capacity %d, want 1..%d partitions", c, l.P)
	}
	if feats.Size() < l.Nodes*rowBytes {
		return nil, fmt.Errorf("partition buffer: %s holds %d bytes, want %d", feats.Path(), feats.Size(), l.Nodes*rowBytes)
	}
	if edges.Size() < b.FileOff[len(b.FileOff)-1] {
		return nil, fmt.Errorf("partition buffer: %s holds %d bytes, want %d", edges.Path(), edges.Size(), b.FileOff[len(b.FileOff)-1])
	}
	pb := &PartitionBuffer{l: l, b: b, rowBytes: rowBytes, c: c, nslots: c, feats: feats, edges: edges,
		partSlot: make([]int, l.P), buckets: map[int][]int32{}}
	if spare && c < l.P {
		pb.nslots = c + 1
	}
	for q := range pb.partSlot {
		pb.partSlot[q] = -1
	}
	var err error
	if pb.fr, err = feats.NewReader(); err != nil {
		return nil, err
	}
	if pb.er, err = edges.NewReader(); err != nil {
		pb.fr.Close()
		return nil, err
	}
	for s := 0; s < pb.nslots; s++ {
		m, err := pb.mapBytes(int(l.PartSize * rowBytes))
		if err != nil {
			pb.Close()
			return nil, err
		}
		pb.slotMem = append(pb.slotMem, m)
		pb.slotPart = append(pb.slotPart, -1)
	}
	return pb, nil
}

// Capacity is c, the partitions of one state.
func (pb *PartitionBuffer) Capacity() int { return pb.c }

// Slots is the number of slots (c, plus the spare one).
func (pb *PartitionBuffer) Slots() int { return pb.nslots }

// State is the resident buffer state (do not modify).
func (pb *PartitionBuffer) State() []int { return pb.state }

// Stats returns the counters so far.
func (pb *PartitionBuffer) Stats() BufferStats {
	pb.statsMu.Lock()
	defer pb.statsMu.Unlock()
	return pb.stats
}

func (pb *PartitionBuffer) count(f func(s *BufferStats)) {
	pb.statsMu.Lock()
	f(&pb.stats)
	pb.statsMu.Unlock()
}

// MappedBytes is the anonymous memory the buffer has mapped: every slot and
// the resident buckets (a slot's pages are resident only while it holds a
// partition).
func (pb *PartitionBuffer) MappedBytes() int64 { return pb.memB.Load() }

// Slot returns partition q's slot, or -1.
func (pb *PartitionBuffer) Slot(q int) int { return pb.partSlot[q] }

// SlotPartition returns the partition in slot s, or -1.
func (pb *PartitionBuffer) SlotPartition(s int) int { return pb.slotPart[s] }

// Row returns the feature row of the node with slot-local id local (slot ·
// PartSize + offset in its partition).
func (pb *PartitionBuffer) Row(local int64) []byte {
	s, off := local/pb.l.PartSize, local%pb.l.PartSize
	return pb.slotMem[s][off*pb.rowBytes : (off+1)*pb.rowBytes]
}

// Bucket returns resident bucket (i, j) as (u, v) pairs of partitioned ids.
func (pb *PartitionBuffer) Bucket(i, j int) []int32 { return pb.buckets[pb.b.Index(i, j)] }

// read is one partition or bucket read of a Load or prefetch.
type read struct {
	part   int // partition whose rows are read (-1 for a bucket)
	bucket int // bucket index (-1 for rows)
	dst    []byte
}

// Load makes state the resident buffer state: it waits for a prefetch in
// flight, evicts the resident partitions state does not hold (and every
// bucket touching them), reads the partitions it lacks into free slots and
// the buckets among its partitions that are not resident, all submitted
// together. It returns the swap it performed.
func (pb *PartitionBuffer) Load(ctx context.Context, state []int) (Swap, error) {
	return pb.load(ctx, state, true)
}

// LoadTopology is Load without the feature rows: the state's partitions
// get slots and its buckets are read, so that its subgraph can be built
// and sampled (profiling DENSE batch sizes), but no row is read; Row must
// not be used until a Load.
func (pb *PartitionBuffer) LoadTopology(ctx context.Context, state []int) (Swap, error) {
	return pb.load(ctx, state, false)
}

func (pb *PartitionBuffer) load(ctx context.Context, state []int, rows bool) (Swap, error) {
	if len(state) != pb.c {
		return Swap{}, fmt.Errorf("partition buffer: state of %d partitions, capacity %d", len(state), pb.c)
	}
	for _, q := range state {
		if q < 0 || q >= pb.l.P {
			return Swap{}, fmt.Errorf("partition buffer: partition %d of %d", q, pb.l.P)
		}
	}
	var prefetched map[int]bool
	if pb.pf != nil {
		got, err := pb.finishPrefetch(ctx)
		if err != nil {
			return Swap{}, err
		}
		prefetched = got
	}
	// Partitions made resident by the prefetch count as admissions of this
	// swap (Diff against the state before it).
	sw := Diff(pb.state, state)
	for _, q := range sw.Evict {
		pb.evict(q)
	}
	want := map[int]bool{}
	for _, q := range state {
		want[q] = true
	}
	// Partitions resident but outside the new state (a prefetch for a
	// different state) go too.
	for _, q := range pb.slotPart {
		if q >= 0 && !want[q] {
			pb.evict(q)
		}
	}
	var reads []read
	for _, q := range sw.Admit {
		if pb.partSlot[q] >= 0 {
			continue // read ahead by the prefetch
		}
		s := pb.freeSlot()
		if s < 0 {
			return sw, fmt.Errorf("partition buffer: no free slot for partition %d", q)
		}
		pb.slotPart[s], pb.partSlot[q] = q, s
		if rows {
			lo, hi := pb.l.Range(q)
			reads = append(reads, read{part: q, bucket: -1, dst: pb.slotMem[s][:(hi-lo)*pb.rowBytes]})
		}
	}
	bucketReads, err := pb.missingBuckets(state, pb.buckets)
	if err != nil {
		return sw, err
	}
	reads = append(reads, bucketReads...)
	if err := pb.submit(ctx, pb.fr, pb.er, reads); err != nil {
		return sw, err
	}
	for _, r := range bucketReads {
		pb.buckets[r.bucket] = osutil.View[int32](r.dst)
	}
	pb.state = append(pb.state[:0], state...)
	pb.count(func(st *BufferStats) {
		st.PartitionHits += int64(len(sw.Keep))
		for _, q := range sw.Admit {
			if prefetched[q] {
				st.PrefetchedLoads++
			}
		}
	})
	return sw, nil
}

// missingBuckets plans reads of the buckets among state's partitions that
// have is missing, into newly mapped memory.
func (pb *PartitionBuffer) missingBuckets(state []int, have map[int][]int32) ([]read, error) {
	var reads []read
	for _, i := range state {
		for _, j := range state {
			k := pb.b.Index(i, j)
			if _, ok := have[k]; ok {
				continue
			}
			n := pb.b.Count(i, j)
			m, err := pb.mapBytes(int(n * EdgeBytes))
			if err != nil {
				return nil, err
			}
			reads = append(reads, read{part: -1, bucket: k, dst: m})
		}
	}
	return reads, nil
}

// submit reads every r (rows through fr, buckets through er), all submitted
// before any is reaped.
func (pb *PartitionBuffer) submit(ctx context.Context, fr, er storage.Reader, reads []read) error {
	var freqs, ereqs []storage.Request
	for i, r := range reads {
		if len(r.dst) == 0 {
			continue
		}
		if r.part >= 0 {
			lo, _ := pb.l.Range(r.part)
			freqs = append(freqs, storage.Request{Off: lo * pb.rowBytes, Dst: r.dst, Tag: uint64(i)})
		} else {
			ereqs = append(ereqs, storage.Request{Off: pb.b.FileOff[r.bucket], Dst: r.dst, Tag: uint64(i)})
		}
	}
	if len(freqs) > 0 {
		if err := fr.Submit(freqs); err != nil {
			return fmt.Errorf("partition buffer: read partitions: %w", err)
		}
	}
	if len(ereqs) > 0 {
		if err := er.Submit(ereqs); err != nil {
			_ = reapAll(ctx, fr, len(freqs))
			return fmt.Errorf("partition buffer: read edge buckets: %w", err)
		}
	}
	errF := reapAll(ctx, fr, len(freqs))
	errE := reapAll(ctx, er, len(ereqs))
	if err := errors.Join(errF, errE); err != nil {
		return fmt.Errorf("partition buffer: %w", err)
	}
	var fb, eb int64
	for _, r := range freqs {
		fb += int64(len(r.Dst))
	}
	for _, r := range ereqs {
		eb += int64(len(r.Dst))
	}
	pb.count(func(st *BufferStats) {
		st.PartitionLoads += int64(len(freqs))
		st.FeatureBytesRead += fb
		st.BucketLoads += int64(len(ereqs))
		st.EdgeBytesRead += eb
	})
	return nil
}

// reapAll waits for n completions of r and returns the first failure.
func reapAll(ctx context.Context, r storage.Reader, n int) error {
	var out []storage.Completion
	var first error
	for got := 0; got < n; {
		var err error
		out, err = r.Reap(ctx, out[:0], 1)
		for _, c := range out {
			if c.Err != nil && first == nil {
				first = c.Err
			}
		}
		got += len(out)
		if err != nil {
			if first == nil {
				first = err
			}
			if r.Outstanding() == 0 || ctx.Err() != nil {
				return first
			}
		}
	}
	return first
}

func (pb *PartitionBuffer) freeSlot() int {
	for s, q := range pb.slotPart {
		if q < 0 {
			return s
		}
	}
	return -1
}

// evict drops partition q: its slot's pages go back to the system and
// every resident bucket touching q is unmapped.
func (pb *PartitionBuffer) evict(q int) {
	s := pb.partSlot[q]
	if s < 0 {
		return
	}
	_ = osutil.Release(pb.slotMem[s])
	pb.slotPart[s], pb.partSlot[q] = -1, -1
	for k, m := range pb.buckets {
		i, j := k/pb.l.P, k%pb.l.P
		if i == q || j == q {
			pb.unmap(osutil.Bytes(m))
			delete(pb.buckets, k)
		}
	}
}

// prefetch is a read-ahead of the next state's admitted partitions and
// their buckets, in flight on its own goroutine and readers.
type prefetch struct {
	next    []int
	parts   map[int]int // admitted partition -> slot
	reads   []read
	done    chan error
	buckets map[int][]int32
}

// StartPrefetch starts reading, on another goroutine, the partitions of
// next that are not resident (into the spare slot: at most one) and the
// buckets between them and next's other partitions, while the current state
// keeps training. The next Load(next) waits for it. It does nothing without
// a spare slot or when next admits more than the free slots hold.
func (pb *PartitionBuffer) StartPrefetch(ctx context.Context, next []int) error {
	if pb.pf != nil {
		return errors.New("partition buffer: a prefetch is already in flight")
	}
	sw := Diff(pb.state, next)
	free := 0
	for _, q := range pb.slotPart {
		if q < 0 {
			free++
		}
	}
	if len(sw.Admit) == 0 || len(sw.Admit) > free {
		return nil
	}
	pf := &prefetch{next: next, parts: map[int]int{}, done: make(chan error, 1), buckets: map[int][]int32{}}
	for _, q := range sw.Admit {
		s := pb.freeSlot()
		pb.slotPart[s] = -2 // reserved: not free, not yet resident
		pf.parts[q] = s
		lo, hi := pb.l.Range(q)
		pf.reads = append(pf.reads, read{part: q, bucket: -1, dst: pb.slotMem[s][:(hi-lo)*pb.rowBytes]})
	}
	// Buckets of next that touch an admitted partition (the others are
	// resident, or go with the evicted partitions).
	for _, i := range next {
		for _, j := range next {
			_, ai := pf.parts[i]
			_, aj := pf.parts[j]
			if !ai && !aj {
				continue
			}
			k := pb.b.Index(i, j)
			m, err := pb.mapBytes(int(pb.b.Count(i, j) * EdgeBytes))
			if err != nil {
				return err
			}
			pf.reads = append(pf.reads, read{part: -1, bucket: k, dst: m})
		}
	}
	pb.pf = pf
	go func() {
		fr, err := pb.feats.NewReader()
		if err != nil {
			pf.done <- err
			return
		}
		er, err := pb.edges.NewReader()
		if err != nil {
			fr.Close()
			pf.done <- err
			return
		}
		err = pb.submit(ctx, fr, er, pf.reads)
		err = errors.Join(err, fr.Close(), er.Close())
		pf.done <- err
	}()
	return nil
}

// finishPrefetch waits for the prefetch in flight and makes what it read
// resident; it returns the partitions it admitted.
func (pb *PartitionBuffer) finishPrefetch(ctx context.Context) (map[int]bool, error) {
	pf := pb.pf
	pb.pf = nil
	var err error
	select {
	case err = <-pf.done:
	case <-ctx.Done():
		err = <-pf.done // the reads end with the context
	}
	got := map[int]bool{}
	for q, s := range pf.parts {
		if err != nil {
			pb.slotPart[s] = -1
			continue
		}
		pb.slotPart[s], pb.partSlot[q] = q, s
		got[q] = true
	}
	for _, r := range pf.reads {
		if r.bucket < 0 {
			continue
		}
		if err != nil {
			pb.unmap(r.dst)
			continue
		}
		pb.buckets[r.bucket] = osutil.View[int32](r.dst)
	}
	if err != nil {
		return nil, fmt.Errorf("partition buffer: prefetch: %w", err)
	}
	return got, nil
}

// Release drops every resident partition and bucket (end of an epoch: the
// artifact unloads the buffer), keeping the slots mapped but their pages
// returned.
func (pb *PartitionBuffer) Release(ctx context.Context) error {
	if pb.pf != nil {
		if _, err := pb.finishPrefetch(ctx); err != nil {
			return err
		}
	}
	for q, s := range pb.partSlot {
		if s >= 0 {
			pb.evict(q)
		}
	}
	for k, m := range pb.buckets {
		pb.unmap(osutil.Bytes(m))
		delete(pb.buckets, k)
	}
	pb.state = pb.state[:0]
	return nil
}

// Close releases the readers and all buffer memory.
func (pb *PartitionBuffer) Close() error {
	var errs []error
	if pb.pf != nil {
		errs = append(errs, <-pb.pf.done)
		for _, r := range pb.pf.reads {
			if r.bucket >= 0 {
				pb.unmap(r.dst)
			}
		}
		pb.pf = nil
	}
	if pb.fr != nil {
		errs = append(errs, pb.fr.Close())
	}
	if pb.er != nil {
		errs = append(errs, pb.er.Close())
	}
	for _, m := range pb.buckets {
		pb.unmap(osutil.Bytes(m))
	}
	pb.buckets = nil
	for _, m := range pb.slotMem {
		pb.unmap(m)
	}
	pb.slotMem = nil
	return errors.Join(errs...)
}

// mapBytes maps n bytes of anonymous memory (nil for 0).
func (pb *PartitionBuffer) mapBytes(n int) ([]byte, error) {
	m, err := osutil.AnonMap(n)
	if err != nil {
		return nil, fmt.Errorf("partition buffer: %w", err)
	}
	pb.memB.Add(int64(len(m)))
	return m, nil
}

func (pb *PartitionBuffer) unmap(m []byte) {
	if len(m) == 0 {
		return
	}
	if osutil.Unmap(m) == nil {
		pb.memB.Add(-int64(len(m)))
	}
}
