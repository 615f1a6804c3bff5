package diskgnn

// DiskGNN §5.2 "Batched Feature Packing" (Fig. 6b): instead of gathering
// each mini-batch's features with small random reads (individual packing,
// which reads shared features many times and suffers read amplification),
// DiskGNN "split[s] the node features of the entire graph into a few
// logical partitions so that each of which fit into the CPU memory. At each
// iteration, we load a partition of consecutive node features from disk,
// perform feature packing for all graph samples within this partition in
// memory, and write back the partial output to disk." Every feature is read
// once, sequentially; each sample's chunk grows by one sequential append
// per partition. The artifact (batched_packing.py) also fills the memory
// caches from the same partitions; onPartition is that hook.
//
// Here a sample's packed node ids are ascending, so the rows of one
// partition are the next run of its chunk: the write offset is known and
// the appends of a chunk are sequential.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"
)

// packTarget is one output to fill: its node ids (ascending) and the
// offset of its first row in Out (nil: packIO.Out).
type packTarget struct {
	IDs     []int32
	RowsOff int64
	Out     io.WriterAt
}

// packStats are what packing measured.
type packStats struct {
	Partitions   int
	BytesRead    int64
	BytesWritten int64
	Rows         int64 // packed rows written
	Writes       int64 // write calls
	ReadTime     time.Duration
	DispatchTime time.Duration // gathering rows per target (and onPartition)
	WriteTime    time.Duration
}

// packIO is what batchedPack reads and writes through.
type packIO struct {
	// ReadRange fills dst with the feature table's bytes from off.
	ReadRange func(ctx context.Context, off int64, dst []byte) error
	// Out receives the rows of targets without an Out of their own.
	Out io.WriterAt
	// Sync, when set, is called after every SyncEvery bytes written, to
	// every output (dirty page cache in a memory-limited group must reach
	// the disk before it can be reclaimed).
	Sync      func() error
	SyncEvery int64
	// OnPartition, when set, sees every partition (first node, rows) before
	// the targets are served.
	OnPartition func(lo int64, rows []byte) error
}

// batchedPack packs the rows of nodes nodes (rowBytes each) for all
// targets, reading the table in partitions of partRows rows into buf
// (partRows × rowBytes bytes, reused).
func batchedPack(ctx context.Context, nodes, rowBytes, partRows int64, buf []byte, targets []packTarget, pio packIO) (packStats, error) {
	var st packStats
	if partRows < 1 || int64(len(buf)) < partRows*rowBytes {
		return st, fmt.Errorf("diskgnn: packing partition of %d rows in a %d-byte buffer", partRows, len(buf))
	}
	for t := range targets {
		ids := targets[t].IDs
		if !slices.IsSorted(ids) || (len(ids) > 0 && (ids[0] < 0 || int64(ids[len(ids)-1]) >= nodes)) {
			return st, fmt.Errorf("diskgnn: packing target %d: ids not ascending within [0,%d)", t, nodes)
		}
	}
	cur := make([]int, len(targets)) // next id index per target
	var stage []byte
	var sinceSync int64
	for lo := int64(0); lo < nodes; lo += partRows {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		hi := min(lo+partRows, nodes)
		part := buf[:(hi-lo)*rowBytes]
		t0 := time.Now()
		if err := pio.ReadRange(ctx, lo*rowBytes, part); err != nil {
			return st, fmt.Errorf("diskgnn: packing: read rows [%d,%d): %w", lo, hi, err)
		}
		st.ReadTime += time.Since(t0)
		st.BytesRead += int64(len(part))
		st.Partitions++
		t1 := time.Now()
		if pio.OnPartition != nil {
			if err := pio.OnPartition(lo, part); err != nil {
				return st, err
			}
		}
		st.DispatchTime += time.Since(t1)
		for t := range targets {
			ids := targets[t].IDs
			a := cur[t]
			b := a + sort.Search(len(ids)-a, func(i int) bool { return int64(ids[a+i]) >= hi })
			if b == a {
				continue
			}
			t2 := time.Now()
			stage = growSlice(stage, (b-a)*int(rowBytes))
			for k, v := range ids[a:b] {
				src := (int64(v) - lo) * rowBytes
				copy(stage[int64(k)*rowBytes:], part[src:src+rowBytes])
			}
			st.DispatchTime += time.Since(t2)
			if err := pio.writeRows(targets[t], t, a, b, rowBytes, stage, &st, &sinceSync); err != nil {
				return st, err
			}
			cur[t] = b
		}
	}
	err := pio.finish(&st)
	return st, err
}

// writeRows writes stage, rows [a,b) of target t, to its place in the
// target's output (its Out, else p.Out), counts the write in st, and syncs
// when SyncEvery bytes were written since the last sync (sinceSync, carried
// between calls); the write and the sync are timed as WriteTime.
func (p packIO) writeRows(tg packTarget, t, a, b int, rowBytes int64, stage []byte, st *packStats, sinceSync *int64) error {
	t0 := time.Now()
	out := tg.Out
	if out == nil {
		out = p.Out
	}
	if _, err := out.WriteAt(stage, tg.RowsOff+int64(a)*rowBytes); err != nil {
		return fmt.Errorf("diskgnn: packing: write chunk %d: %w", t, err)
	}
	st.Writes++
	st.BytesWritten += int64(len(stage))
	st.Rows += int64(b - a)
	*sinceSync += int64(len(stage))
	if p.Sync != nil && p.SyncEvery > 0 && *sinceSync >= p.SyncEvery {
		if err := p.Sync(); err != nil {
			return fmt.Errorf("diskgnn: packing: sync: %w", err)
		}
		*sinceSync = 0
	}
	st.WriteTime += time.Since(t0)
	return nil
}

// finish is packing's last sync (when Sync is set), timed as WriteTime.
func (p packIO) finish(st *packStats) error {
	if p.Sync == nil {
		return nil
	}
	t0 := time.Now()
	if err := p.Sync(); err != nil {
		return fmt.Errorf("diskgnn: packing: sync: %w", err)
	}
	st.WriteTime += time.Since(t0)
	return nil
}
