package diskgnn

// DiskGNN §4 "Packed feature chunk" and §6 "Feature assembling": each
// mini-batch has a chunk on disk with the features packed for it, and the
// address lookups that assemble its input ("we prepare the interpreted
// address locations during pre-processing and directly load them from disk
// during online training"). As in the artifact (train-aux-{bid}.bin and
// train-aux-meta-{bid}.pt), the two are apart: the packed rows are one
// region of the packed file (ascending node id, nothing else, so its reads
// are feature reads), the addresses one region of the address file, both
// 4 KiB-aligned so each is one sequential O_DIRECT read. The address
// header:
//
//	magic u32, version u32, batch i32, segment i32, inputs i32,
//	cached i32, disk i32, packed i32, then int32 arrays:
//	cacheSlot[cached] cachePos[cached]  (GPU and CPU caches, Fig. 3 G#/C#)
//	diskLoc[disk]     diskPos[disk]     (the segment's disk cache, D#)
//	packedPos[packed]                   (the packed rows, P#)
//
// *Pos are positions in the batch's input (x); diskLoc are rows of the
// segment's disk cache, ascending, so requests to one page merge. The
// header is decoded with every field checked: a chunk that does not
// describe each input position exactly once is an error.

import (
	"encoding/binary"
	"errors"
	"fmt"

	"outcore/internal/osutil"
)

// errBadChunk marks a chunk header that does not parse.
var errBadChunk = errors.New("diskgnn: malformed chunk header")

const (
	chunkMagic      = 0x4b4e4843 // "CHNK"
	chunkVersion    = 1
	chunkHeaderSize = 32
)

// chunkHeader is the address table of one batch's chunk.
type chunkHeader struct {
	Batch   int32 // global sample index
	Segment int32
	Inputs  int32
	// CacheSlot[k] is the memory-tier slot (tierPlan.Slot) of input
	// CachePos[k].
	CacheSlot, CachePos []int32
	// DiskLoc[k] (ascending) is the row of the segment's disk cache holding
	// input DiskPos[k].
	DiskLoc, DiskPos []int32
	// PackedPos[k] is the input position of the chunk's k-th packed row.
	PackedPos []int32
}

// Len is the encoded header's byte length (before padding).
func (h *chunkHeader) Len() int64 {
	return chunkHeaderSize + 4*int64(2*len(h.CachePos)+2*len(h.DiskPos)+len(h.PackedPos))
}

// HeaderRegion is the header's region length in the address file.
func (h *chunkHeader) HeaderRegion() int64 { return alignUp(h.Len(), regionAlign) }

// RowsRegion is the packed rows' region length in the packed file.
func (h *chunkHeader) RowsRegion(rowBytes int64) int64 {
	return alignUp(int64(len(h.PackedPos))*rowBytes, regionAlign)
}

// Encode appends the header to dst.
func (h *chunkHeader) Encode(dst []byte) []byte {
	u32 := func(v uint32) { dst = binary.LittleEndian.AppendUint32(dst, v) }
	u32(chunkMagic)
	u32(chunkVersion)
	for _, v := range []int32{h.Batch, h.Segment, h.Inputs, int32(len(h.CachePos)), int32(len(h.DiskPos)), int32(len(h.PackedPos))} {
		u32(uint32(v))
	}
	for _, a := range [][]int32{h.CacheSlot, h.CachePos, h.DiskLoc, h.DiskPos, h.PackedPos} {
		dst = append(dst, osutil.Bytes(a)...)
	}
	return dst
}

// decodeChunkHeader parses b (at least the header's length) into h,
// reusing its slices, and checks it: counts add up to the inputs, every
// position appears exactly once (seen is scratch, grown to Inputs),
// cache slots are below slots, disk locations ascend and are below
// diskRows.
func decodeChunkHeader(b []byte, slots, diskRows int32, h *chunkHeader, seen []bool) ([]bool, error) {
	if len(b) < chunkHeaderSize {
		return seen, fmt.Errorf("%w: %d bytes", errBadChunk, len(b))
	}
	u := func(i int) uint32 { return binary.LittleEndian.Uint32(b[4*i:]) }
	if u(0) != chunkMagic || u(1) != chunkVersion {
		return seen, fmt.Errorf("%w: magic %#x version %d", errBadChunk, u(0), u(1))
	}
	h.Batch, h.Segment, h.Inputs = int32(u(2)), int32(u(3)), int32(u(4))
	nc, nd, np := int64(int32(u(5))), int64(int32(u(6))), int64(int32(u(7)))
	if h.Batch < 0 || h.Segment < 0 || h.Inputs < 0 || nc < 0 || nd < 0 || np < 0 || nc+nd+np != int64(h.Inputs) {
		return seen, fmt.Errorf("%w: %d inputs as %d cached + %d disk + %d packed", errBadChunk, h.Inputs, nc, nd, np)
	}
	if int64(len(b)) < chunkHeaderSize+4*(2*nc+2*nd+np) {
		return seen, fmt.Errorf("%w: arrays truncated (%d bytes)", errBadChunk, len(b))
	}
	rest := b[chunkHeaderSize:]
	take := func(dst []int32, n int64) []int32 {
		dst = growSlice(dst, int(n))
		copy(osutil.Bytes(dst), rest[:4*n])
		rest = rest[4*n:]
		return dst
	}
	h.CacheSlot = take(h.CacheSlot, nc)
	h.CachePos = take(h.CachePos, nc)
	h.DiskLoc = take(h.DiskLoc, nd)
	h.DiskPos = take(h.DiskPos, nd)
	h.PackedPos = take(h.PackedPos, np)
	seen = growSlice(seen, int(h.Inputs))
	clear(seen)
	mark := func(pos []int32) error {
		for _, p := range pos {
			if p < 0 || p >= h.Inputs || seen[p] {
				return fmt.Errorf("%w: input position %d invalid or repeated", errBadChunk, p)
			}
			seen[p] = true
		}
		return nil
	}
	for _, pos := range [][]int32{h.CachePos, h.DiskPos, h.PackedPos} {
		if err := mark(pos); err != nil {
			return seen, err
		}
	}
	for _, s := range h.CacheSlot {
		if s < 0 || s >= slots {
			return seen, fmt.Errorf("%w: cache slot %d of %d", errBadChunk, s, slots)
		}
	}
	for k, l := range h.DiskLoc {
		if l < 0 || l >= diskRows || (k > 0 && l <= h.DiskLoc[k-1]) {
			return seen, fmt.Errorf("%w: disk-cache row %d (of %d) out of range or order", errBadChunk, l, diskRows)
		}
	}
	return seen, nil
}
