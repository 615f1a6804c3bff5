package diskgnn

// DiskGNN §4 (Fig. 2, "Reorganized Data layout") and §6 "Easy-to-use API":
// after the memory tiers are placed and the segment size is searched,
// pre-processing writes the disk levels of the feature store:
//
//   - per segment (§5.1, segmented_disk_cache.go): its disk cache, the
//     shared cold features in MinHash order, one region of the disk-cache
//     file;
//   - per sample: its chunk, one region of the packed file holding the
//     interpreted addresses (chunk_format.go) and its packed features;
//   - the packed features and the memory caches come from batched
//     sequential packing sweeps over the feature table (§5.2, packing.go).
//
// The disk caches come from the same sweeps. A disk cache's rows are in
// MinHash order, not node order, so the sweep cannot append them in place:
// each segment's disk cache is cut into windows of a partition's size; the
// sweep appends a window's rows, in node order, to the window's region of
// a staging file, and after the sweep each window is read back, put in
// MinHash order in memory and written out — every access sequential, as
// §5.2 asks of pre-processing. (The artifact gathers its disk caches with
// random O_DIRECT row reads, _CAPI_GatherPReadDirect; the paper does not
// say how they are filled.)

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// chunkRef locates a sample's chunk: its address header in the address
// file and its packed rows in the packed file.
type chunkRef struct {
	HeaderOff, HeaderRegion int64
	HeaderLen               int32
	RowsOff, RowsRegion     int64
	Packed                  int32
	Disk                    int32
	Segment                 int32
}

// segmentRef locates a segment's disk cache in the disk-cache file.
type segmentRef struct {
	Off        int64 // byte offset (a whole number of rows)
	Rows       int32
	First, End int // samples [First, End)
}

// layoutIO is what buildLayout reads and writes through.
type layoutIO struct {
	// Inputs returns sample g's input nodes (buf reused).
	Inputs func(ctx context.Context, g int, buf []int64) ([]int64, error)
	// ReadRange reads the feature table sequentially (packing sweeps).
	ReadRange func(ctx context.Context, off int64, dst []byte) error
	// Packed, Headers and DiskCache receive the packed rows, the address
	// headers and the disk caches; Stage is the disk caches' staging file
	// (written, then read back, by each sweep).
	Packed, Headers, DiskCache io.WriterAt
	Stage                      interface {
		io.WriterAt
		io.ReaderAt
	}
	// Sync flushes the files (see packIO.Sync).
	Sync func() error
	// OnPartition fills the memory tiers from the first sweep.
	OnPartition func(lo int64, rows []byte) error
	// ReadRows, when set, packs each sample individually with random row
	// reads (packing=individual, Fig. 14's baseline) instead of batched
	// sweeps; the memory tiers are then filled by a sweep of their own.
	ReadRows func(ctx context.Context, ids []int64, dst []byte) error
}

// layoutConfig are the layout's parameters.
type layoutConfig struct {
	Nodes    int64
	RowBytes int64
	Samples  int
	Plan     *tierPlan
	Segment  segmentPlan
	Hashes   int
	Seed     uint64
	// PartRows is the packing partition (rows per sequential read), also
	// the disk caches' staging window.
	PartRows int64
	// IDQuota bounds the bytes of packed node ids held between sweeps:
	// when the samples classified so far need more, their chunks are
	// packed by one sweep before classifying goes on.
	IDQuota int64
	// SyncEvery is the write volume between flushes.
	SyncEvery int64
	// Progress, when set, is told the samples classified so far.
	Progress func(done, total int)
}

// layoutStats are what building the layout measured.
type layoutStats struct {
	Segments       int
	DiskCacheRows  int64
	PackedRows     int64
	CachedAccesses int64
	DiskAccesses   int64
	DiskCacheBytes int64
	PackedBytes    int64 // packed file size (rows and padding)
	HeaderBytes    int64 // address file size
	Sweeps         int
	SegmentTime    time.Duration // counting, choosing and MinHash reordering
	ClassifyTime   time.Duration // interpreted addresses
	DiskCacheTime  time.Duration // reordering the staged disk-cache windows and writing them
	// FillTime is individual packing's sweep that fills the memory tiers
	// (batched packing fills them from its own partitions).
	FillTime time.Duration
	Pack     packStats
}

// layout is the on-disk feature store.
type layout struct {
	Chunks    []chunkRef
	Segments  []segmentRef
	MaxRegion int64 // largest header region + rows region
	MaxDisk   int32 // most disk-cache rows of one sample
	MaxInputs int32
	Stats     layoutStats
}

// SegmentOf returns the segment of sample g.
func (l *layout) SegmentOf(g int) int { return int(l.Chunks[g].Segment) }

// buildLayout writes the disk levels of the store for cfg.Samples samples.
func buildLayout(ctx context.Context, cfg layoutConfig, lio layoutIO) (*layout, error) {
	n := cfg.Samples
	s := cfg.Segment.Size
	if n < 1 || s < 1 || cfg.RowBytes <= 0 || cfg.PartRows < 1 {
		return nil, fmt.Errorf("diskgnn: layout of %d samples, segment size %d, %d-byte rows, partition %d", n, s, cfg.RowBytes, cfg.PartRows)
	}
	l := &layout{Chunks: make([]chunkRef, n)}
	b := newSegmentBuilder(cfg.Plan, cfg.Segment.DiskEntries, cfg.Hashes, cfg.Seed)
	var (
		inputs    []int64
		header    chunkHeader
		enc       []byte
		packedEnd int64
		headerEnd int64
		diskEnd   int64
		stageEnd  int64
		targets   []packTarget
		windows   []stagedWindow
		idBytes   int64
		partBuf   = make([]byte, cfg.PartRows*cfg.RowBytes)
		winBuf    []byte
		filled    bool
	)
	sweep := func() error {
		pio := packIO{ReadRange: lio.ReadRange, Out: lio.Packed, Sync: lio.Sync, SyncEvery: cfg.SyncEvery}
		if !filled {
			pio.OnPartition = lio.OnPartition
		}
		var st packStats
		var err error
		if lio.ReadRows != nil {
			// Fig. 14's baseline: the tiers' fill sweep (no targets), then
			// every chunk gathered by random row reads
			if !filled && pio.OnPartition != nil {
				var fill packStats
				fill, err = batchedPack(ctx, cfg.Nodes, cfg.RowBytes, cfg.PartRows, partBuf, nil, pio)
				l.Stats.FillTime += fill.ReadTime + fill.DispatchTime
			}
			if err == nil {
				st, err = individualPack(ctx, cfg.Nodes, cfg.RowBytes, partBuf, targets, pio, lio.ReadRows)
			}
		} else {
			st, err = batchedPack(ctx, cfg.Nodes, cfg.RowBytes, cfg.PartRows, partBuf, targets, pio)
		}
		l.Stats.Pack.Partitions += st.Partitions
		l.Stats.Pack.BytesRead += st.BytesRead
		l.Stats.Pack.BytesWritten += st.BytesWritten
		l.Stats.Pack.Rows += st.Rows
		l.Stats.Pack.Writes += st.Writes
		l.Stats.Pack.ReadTime += st.ReadTime
		l.Stats.Pack.DispatchTime += st.DispatchTime
		l.Stats.Pack.WriteTime += st.WriteTime
		l.Stats.Sweeps++
		filled = true
		targets, idBytes = targets[:0], 0
		if err != nil {
			return err
		}
		// The staged disk-cache windows, into MinHash order.
		t0 := time.Now()
		for _, w := range windows {
			n := int64(len(w.perm)) * cfg.RowBytes
			staged := partBuf[:n]
			if _, err := lio.Stage.ReadAt(staged, w.stageOff); err != nil {
				return fmt.Errorf("diskgnn: read staged disk-cache window: %w", err)
			}
			winBuf = growSlice(winBuf, int(n))
			for k, p := range w.perm {
				copy(winBuf[int64(p)*cfg.RowBytes:int64(p+1)*cfg.RowBytes], staged[int64(k)*cfg.RowBytes:])
			}
			if _, err := lio.DiskCache.WriteAt(winBuf[:n], w.fileOff); err != nil {
				return fmt.Errorf("diskgnn: write disk cache: %w", err)
			}
		}
		if len(windows) > 0 && lio.Sync != nil {
			if err := lio.Sync(); err != nil {
				return fmt.Errorf("diskgnn: sync: %w", err)
			}
		}
		windows, stageEnd = windows[:0], 0
		l.Stats.DiskCacheTime += time.Since(t0)
		return nil
	}
	read := func(g int) error {
		var err error
		inputs, err = lio.Inputs(ctx, g, inputs)
		if err == nil {
			for _, v := range inputs {
				if v < 0 || v >= cfg.Nodes {
					return fmt.Errorf("diskgnn: sample %d input %d outside [0,%d)", g, v, cfg.Nodes)
				}
			}
		}
		return err
	}
	for first := 0; first < n; first += s {
		end := min(first+s, n)
		seg := len(l.Segments)
		t0 := time.Now()
		for g := first; g < end; g++ {
			if err := read(g); err != nil {
				return nil, err
			}
			b.Count(inputs)
		}
		if err := b.Choose(end-first, seg); err != nil {
			return nil, err
		}
		for g := first; g < end && b.Reorders(); g++ {
			if err := read(g); err != nil {
				return nil, err
			}
			if err := b.Hash(g-first, inputs); err != nil {
				return nil, err
			}
		}
		entries := b.Reorder()
		l.Stats.SegmentTime += time.Since(t0)

		// The segment's disk cache, in MinHash order: staged by window,
		// filled by the next sweep.
		ref := segmentRef{Off: diskEnd, Rows: int32(len(entries)), First: first, End: end}
		for lo := 0; lo < len(entries); lo += int(cfg.PartRows) {
			win := entries[lo:min(lo+int(cfg.PartRows), len(entries))]
			pairs := make([]posPair, len(win))
			for p, v := range win {
				pairs[p] = posPair{key: v, pos: int32(p)}
			}
			slices.SortFunc(pairs, func(x, y posPair) int { return int(x.key - y.key) })
			ids, perm := make([]int32, len(win)), make([]int32, len(win))
			for k, pr := range pairs {
				ids[k], perm[k] = pr.key, pr.pos
			}
			windows = append(windows, stagedWindow{fileOff: diskEnd + int64(lo)*cfg.RowBytes, stageOff: stageEnd, perm: perm})
			targets = append(targets, packTarget{IDs: ids, RowsOff: stageEnd, Out: lio.Stage})
			stageEnd += int64(len(win)) * cfg.RowBytes
			idBytes += 8 * int64(len(win))
		}
		diskEnd += int64(len(entries)) * cfg.RowBytes // segments are row-aligned: file row = base row + location
		l.Segments = append(l.Segments, ref)
		l.Stats.DiskCacheRows += int64(len(entries))

		// Interpreted addresses of each sample; chunk headers written now,
		// packed rows by the next sweep.
		for g := first; g < end; g++ {
			if err := read(g); err != nil {
				return nil, err
			}
			t2 := time.Now()
			var packed []int32
			var err error
			packed, err = b.Classify(inputs, &header, packed)
			if err != nil {
				return nil, err
			}
			header.Batch, header.Segment = int32(g), int32(seg)
			enc = header.Encode(enc[:0])
			c := chunkRef{HeaderOff: headerEnd, HeaderRegion: header.HeaderRegion(), HeaderLen: int32(header.Len()),
				RowsOff: packedEnd, RowsRegion: header.RowsRegion(cfg.RowBytes),
				Packed: int32(len(packed)), Disk: int32(len(header.DiskPos)), Segment: int32(seg)}
			// Each region's last byte first, so the files cover whole
			// regions (their padding) before the rows come from a sweep.
			enc = append(enc, make([]byte, c.HeaderRegion-int64(len(enc)))...)
			if _, err := lio.Headers.WriteAt(enc, c.HeaderOff); err != nil {
				return nil, fmt.Errorf("diskgnn: write chunk %d header: %w", g, err)
			}
			if c.RowsRegion > 0 {
				if _, err := lio.Packed.WriteAt([]byte{0}, c.RowsOff+c.RowsRegion-1); err != nil {
					return nil, fmt.Errorf("diskgnn: write chunk %d: %w", g, err)
				}
			}
			l.Chunks[g] = c
			if len(packed) > 0 {
				targets = append(targets, packTarget{IDs: packed, RowsOff: c.RowsOff})
				idBytes += 4 * int64(len(packed))
			}
			packedEnd += c.RowsRegion
			headerEnd += c.HeaderRegion
			l.MaxRegion = max(l.MaxRegion, c.HeaderRegion+c.RowsRegion)
			l.MaxDisk = max(l.MaxDisk, c.Disk)
			l.MaxInputs = max(l.MaxInputs, header.Inputs)
			l.Stats.PackedRows += int64(len(packed))
			l.Stats.CachedAccesses += int64(len(header.CachePos))
			l.Stats.DiskAccesses += int64(len(header.DiskPos))
			l.Stats.ClassifyTime += time.Since(t2)
			if cfg.Progress != nil {
				cfg.Progress(g+1, n)
			}
			if cfg.IDQuota > 0 && idBytes >= cfg.IDQuota {
				if err := sweep(); err != nil {
					return nil, err
				}
			}
		}
		b.Done()
	}
	if len(targets) > 0 || len(windows) > 0 || !filled {
		if err := sweep(); err != nil {
			return nil, err
		}
	}
	l.Stats.Segments = len(l.Segments)
	l.Stats.DiskCacheBytes = diskEnd
	l.Stats.PackedBytes = packedEnd
	l.Stats.HeaderBytes = headerEnd
	return l, nil
}

// stagedWindow is a disk-cache window whose rows a sweep stages in node
// order: perm[k] is the window position of the k-th staged row.
type stagedWindow struct {
	fileOff, stageOff int64
	perm              []int32
}

// DiskRowsOf returns the disk-cache file rows of sample g's chunk header
// locations: segment base row + location.
func (l *layout) DiskRowsOf(g int, locs []int32, rowBytes int64, dst []int64) []int64 {
	base := l.Segments[l.Chunks[g].Segment].Off / rowBytes
	dst = dst[:0]
	for _, v := range locs {
		dst = append(dst, base+int64(v))
	}
	return dst
}

// Check verifies the layout's shape: chunks in order and disjoint, every
// sample in the segment that covers it.
func (l *layout) Check() error {
	var rowsEnd, headerEnd int64
	for g, c := range l.Chunks {
		if c.RowsOff < rowsEnd || c.HeaderOff < headerEnd || c.RowsOff%regionAlign != 0 || c.HeaderOff%regionAlign != 0 {
			return fmt.Errorf("diskgnn: chunk %d overlaps or is unaligned", g)
		}
		rowsEnd, headerEnd = c.RowsOff+c.RowsRegion, c.HeaderOff+c.HeaderRegion
		s := l.Segments[c.Segment]
		if g < s.First || g >= s.End {
			return fmt.Errorf("diskgnn: chunk %d in segment %d [%d,%d)", g, c.Segment, s.First, s.End)
		}
	}
	if !slices.IsSortedFunc(l.Segments, func(a, b segmentRef) int { return a.First - b.First }) {
		return fmt.Errorf("diskgnn: segments out of order")
	}
	return nil
}
