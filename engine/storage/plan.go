package storage

import (
	"cmp"
	"math/bits"
	"slices"
)

// This file plans device reads for a set of wanted byte spans (GNNDrive
// §4.4 "Access Granularity"): each span is widened to the aligned blocks
// that cover it, blocks shared by several spans are read once, and runs of
// adjacent blocks are merged into one request of at most maxSeg bytes.
// With separate set (Options.SeparateReads), every span is read on its
// own instead: its covering blocks, shared with no other span and merged
// with none (Ginex's artifact issues one pread per row). With noMerge set
// (Options.NoMerge), blocks shared by spans are still read once but
// adjacent spans are not merged (GNNDrive's merge=false).

// item is one span a caller wants: len(dst) bytes from file offset off,
// copied into dst, on behalf of request req.
type item struct {
	off int64
	dst []byte
	req int32
}

// span is one aligned device read of [off, end).
type span struct {
	off, end int64
}

// planPiece copies bytes [at, at+len(dst)) of span seg into dst.
type planPiece struct {
	seg int32
	at  int
	dst []byte
	req int32
}

// planner holds reusable scratch space so planning does not allocate in
// steady state.
type planner struct {
	bs     int64 // block size, a power of two
	maxSeg int64 // largest span, a multiple of bs
	// separate: one read (or more when longer than maxSeg) per item, no
	// block shared or merged with another item
	separate bool
	// noMerge: blocks shared by items are read once, but an item starting
	// on a fresh block opens its own request (Options.NoMerge)
	noMerge bool
	items   []item
	tmp     []item // radix-sort scratch
	spans   []span
	pieces  []planPiece
}

// plan sorts p.items by offset and fills p.spans and p.pieces. Items of
// length 0 produce nothing.
func (p *planner) plan() {
	p.spans = p.spans[:0]
	p.pieces = p.pieces[:0]
	p.sortItems()
	if p.separate {
		p.planSeparate()
		return
	}
	mask := p.bs - 1
	cur := -1
	for i := range p.items {
		it := &p.items[i]
		if len(it.dst) == 0 {
			continue
		}
		a := it.off &^ mask
		b := (it.off + int64(len(it.dst)) + mask) &^ mask
		switch {
		case cur >= 0 && a < p.spans[cur].end:
			// Shares a block with the current span: never read it twice.
		case cur >= 0 && !p.noMerge && a == p.spans[cur].end && b-p.spans[cur].off <= p.maxSeg:
			// Adjacent and fits: merge into one request.
		default:
			p.spans = append(p.spans, span{a, a})
			cur++
		}
		for b > p.spans[cur].end {
			room := p.spans[cur].off + p.maxSeg
			if b <= room {
				p.spans[cur].end = b
				break
			}
			p.spans[cur].end = room
			p.spans = append(p.spans, span{room, room})
			cur++
		}
	}
	j := 0
	for i := range p.items {
		it := &p.items[i]
		lo, hi := it.off, it.off+int64(len(it.dst))
		if lo == hi {
			continue
		}
		for p.spans[j].end <= lo {
			j++
		}
		for k := j; k < len(p.spans) && p.spans[k].off < hi; k++ {
			s, e := max(lo, p.spans[k].off), min(hi, p.spans[k].end)
			p.pieces = append(p.pieces, planPiece{
				seg: int32(k),
				at:  int(s - p.spans[k].off),
				dst: it.dst[s-lo : e-lo],
				req: it.req,
			})
		}
	}
}

// planSeparate plans each item on its own: its covering blocks, in
// requests of at most maxSeg bytes.
func (p *planner) planSeparate() {
	mask := p.bs - 1
	for i := range p.items {
		it := &p.items[i]
		lo, hi := it.off, it.off+int64(len(it.dst))
		if lo == hi {
			continue
		}
		a, b := lo&^mask, (hi+mask)&^mask
		for off := a; off < b; off += p.maxSeg {
			end := min(off+p.maxSeg, b)
			p.spans = append(p.spans, span{off, end})
			s, e := max(lo, off), min(hi, end)
			p.pieces = append(p.pieces, planPiece{
				seg: int32(len(p.spans) - 1),
				at:  int(s - off),
				dst: it.dst[s-lo : e-lo],
				req: it.req,
			})
		}
	}
}

// radixBits is the digit width of sortItems' radix sort.
const radixBits = 11

// sortItems orders p.items by offset (offsets are non-negative). Short or
// already sorted lists are left to a comparison sort; longer ones get an
// LSD radix sort over only the offset bits that differ, which is several
// times faster than a comparison sort on a mini-batch's thousands of rows.
func (p *planner) sortItems() {
	byOff := func(a, b item) int { return cmp.Compare(a.off, b.off) }
	n := len(p.items)
	if slices.IsSortedFunc(p.items, byOff) {
		return
	}
	if n <= 64 {
		slices.SortFunc(p.items, byOff)
		return
	}
	var or, hi uint64
	for i := range p.items {
		o := uint64(p.items[i].off)
		or |= o
		hi = max(hi, o)
	}
	lo := bits.TrailingZeros64(or) // bits every offset has as zero
	top := bits.Len64(hi)
	if cap(p.tmp) < n {
		p.tmp = make([]item, n)
	}
	src, dst := p.items, p.tmp[:n]
	var count [1 << radixBits]int
	for shift := lo; shift < top; shift += radixBits {
		clear(count[:])
		for i := range src {
			count[(uint64(src[i].off)>>shift)&(1<<radixBits-1)]++
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for i := range src {
			d := (uint64(src[i].off) >> shift) & (1<<radixBits - 1)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &p.items[0] {
		copy(p.items, src)
	}
	clear(p.tmp[:n]) // drop references to caller memory
}
