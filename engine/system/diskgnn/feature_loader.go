package diskgnn

// DiskGNN §5.3 stage ① and §6 "I/O operations": the feature loader fetches
// a batch's on-disk features into consecutive host memory, the partial
// input. "DiskGNN uses pread for sequential disk access to fetch packed
// feature chunks, which can fully saturate the SSD bandwidth with a single
// thread. For random disk accesses to fetch features in disk cache,
// DiskGNN leverages io_uring and uses 4 threads with each thread holding a
// ring ... For all I/O operations, we use ... O_Direct." Requests to the
// same disk page are merged (§4, Fig. 3 "Merge IO Requests"): the batch's
// disk-cache rows are ascending, each thread reads a contiguous share of
// them, and engine/storage reads every covering block once and merges
// adjacent blocks into one request (docs/ARCHITECTURE.md "Storage").
//
// The chunk is one region of the packed file: its header (the interpreted
// addresses) and its packed rows come with the same sequential read.

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"outcore/engine/metrics"
	"outcore/engine/storage"
	"outcore/internal/osutil"
)

// partial is one batch's partial input: the chunk's address header, its
// packed rows and the disk-cache rows, in one off-heap buffer.
type partial struct {
	buf    []byte
	h      chunkHeader
	seen   []bool
	packed []float32
	disk   []float32
	rows   []int64
}

type featureLoader struct {
	layout   *layout
	headers  storage.Reader   // sequential address-header reads (pread + O_DIRECT)
	packed   storage.Reader   // sequential chunk reads (pread + O_DIRECT)
	disk     []storage.Reader // one per io_uring thread
	rowBytes int64
	slots    int32
	ep       *metrics.EpochStats

	diskRows, packedRows, segmentsRead atomic.Int64
}

// partialBytes is what sample c's partial input takes.
func partialBytes(c chunkRef, rowBytes int64) int64 {
	return c.HeaderRegion + c.RowsRegion + int64(c.Disk)*rowBytes
}

// load reads sample g's chunk and disk-cache rows into p.
func (fl *featureLoader) load(ctx context.Context, g int, p *partial) error {
	c := fl.layout.Chunks[g]
	rb := fl.rowBytes
	if need := partialBytes(c, rb); need > int64(len(p.buf)) {
		return fmt.Errorf("diskgnn: chunk %d needs %d bytes, partial buffer has %d", g, need, len(p.buf))
	}
	t0 := time.Now()
	head := p.buf[:c.HeaderRegion]
	if err := fl.headers.ReadRange(ctx, c.HeaderOff, head); err != nil {
		return fmt.Errorf("diskgnn: read chunk %d addresses: %w", g, err)
	}
	rows := p.buf[c.HeaderRegion : c.HeaderRegion+c.RowsRegion]
	if c.Packed > 0 {
		// the packed rows, not the region's padding: the storage layer
		// delivers (and counts) exactly these rows (DESIGN §5)
		if err := fl.packed.ReadRange(ctx, c.RowsOff, rows[:int64(c.Packed)*rb]); err != nil {
			return fmt.Errorf("diskgnn: read chunk %d: %w", g, err)
		}
	}
	fl.ep.Add("packed_read_s", time.Since(t0))
	seg := fl.layout.Segments[c.Segment]
	var err error
	if p.seen, err = decodeChunkHeader(head[:c.HeaderLen], fl.slots, seg.Rows, &p.h, p.seen); err != nil {
		return fmt.Errorf("diskgnn: chunk %d: %w", g, err)
	}
	if int(p.h.Batch) != g || p.h.Segment != c.Segment || int32(len(p.h.PackedPos)) != c.Packed || int32(len(p.h.DiskPos)) != c.Disk {
		return fmt.Errorf("diskgnn: chunk %d holds the header of sample %d", g, p.h.Batch)
	}
	p.packed = osutil.View[float32](rows[:int64(c.Packed)*rb])
	end := c.HeaderRegion + c.RowsRegion
	diskBytes := p.buf[end : end+int64(c.Disk)*rb]
	p.disk = osutil.View[float32](diskBytes)
	fl.packedRows.Add(int64(c.Packed))
	if c.Disk == 0 {
		return nil
	}
	if len(fl.disk) == 0 {
		return fmt.Errorf("diskgnn: chunk %d reads %d disk-cache rows but there is no disk cache", g, c.Disk)
	}
	t1 := time.Now()
	p.rows = fl.layout.DiskRowsOf(g, p.h.DiskLoc, rb, p.rows)
	err = fl.readDiskRows(ctx, t1, p.rows, diskBytes)
	fl.ep.Add("disk_cache_read_s", time.Since(t1))
	if err != nil {
		return fmt.Errorf("diskgnn: chunk %d disk-cache rows: %w", g, err)
	}
	fl.diskRows.Add(int64(c.Disk))
	fl.segmentsRead.Add(1)
	return nil
}
