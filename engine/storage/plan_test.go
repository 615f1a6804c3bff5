package storage

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPlanSpans checks the device reads planned for small cases.
func TestPlanSpans(t *testing.T) {
	cases := []struct {
		name   string
		bs     int64
		maxSeg int64
		items  []it
		want   []span
	}{
		{"empty", 512, 4096, nil, nil},
		{"zero length", 512, 4096, []it{{100, 0}}, nil},
		{"one aligned block", 512, 4096, []it{{512, 512}}, []span{{512, 1024}}},
		{"unaligned inside one block", 512, 4096, []it{{513, 10}}, []span{{512, 1024}}},
		{"straddles two blocks", 512, 4096, []it{{500, 100}}, []span{{0, 1024}}},
		{"straddles, no merging", 512, 512, []it{{500, 100}}, []span{{0, 512}, {512, 1024}}},
		{"shared block read once", 512, 512, []it{{0, 4}, {4, 4}, {500, 4}, {0, 4}}, []span{{0, 512}}},
		{"adjacent merged", 512, 4096, []it{{0, 512}, {512, 512}, {1024, 512}}, []span{{0, 1536}}},
		{"adjacent unmerged", 512, 512, []it{{0, 512}, {512, 512}}, []span{{0, 512}, {512, 1024}}},
		{"gap not merged", 512, 4096, []it{{0, 512}, {1024, 512}}, []span{{0, 512}, {1024, 1536}}},
		{"unsorted input", 512, 4096, []it{{2048, 10}, {0, 10}}, []span{{0, 512}, {2048, 2560}}},
		{"adjacent over cap starts new", 512, 1024, []it{{0, 1024}, {1024, 1024}}, []span{{0, 1024}, {1024, 2048}}},
		{"big range split at cap", 512, 1024, []it{{100, 2500}}, []span{{0, 1024}, {1024, 2048}, {2048, 3072}}},
		{"shared chain split at cap", 512, 1024, []it{{0, 600}, {600, 600}, {1200, 600}}, []span{{0, 1024}, {1024, 2048}}},
		{"4 KiB blocks", 4096, 65536, []it{{4095, 2}}, []span{{0, 8192}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := planner{bs: c.bs, maxSeg: c.maxSeg}
			planItems(t, &p, c.items, c.want)
		})
	}
}

// TestPlanSeparate: with separate reads every item gets its own covering
// blocks, shared with no other item and merged with none, in file order
// (Ginex's artifact: a 4 KiB pread per row, 8 KiB when the row straddles).
func TestPlanSeparate(t *testing.T) {
	cases := []struct {
		name   string
		bs     int64
		maxSeg int64
		items  []it
		want   []span
	}{
		{"shared block read twice", 4096, 65536, []it{{0, 512}, {512, 512}}, []span{{0, 4096}, {0, 4096}}},
		{"adjacent not merged", 512, 65536, []it{{0, 512}, {512, 512}}, []span{{0, 512}, {512, 1024}}},
		{"straddling row reads two blocks", 4096, 65536, []it{{4000, 512}}, []span{{0, 8192}}},
		{"long range split at cap", 512, 1024, []it{{100, 2500}}, []span{{0, 1024}, {1024, 2048}, {2048, 3072}}},
		{"sorted by offset", 4096, 65536, []it{{9000, 8}, {10, 8}}, []span{{0, 4096}, {8192, 12288}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := planner{bs: c.bs, maxSeg: c.maxSeg, separate: true}
			for i, x := range c.items {
				p.items = append(p.items, item{off: x.off, dst: make([]byte, x.n), req: int32(i)})
			}
			p.plan()
			if !slices.Equal(p.spans, c.want) {
				t.Fatalf("spans %v, want %v", p.spans, c.want)
			}
			covered := map[int32]int{}
			for _, pc := range p.pieces {
				s := p.spans[pc.seg]
				if pc.at < 0 || int64(pc.at+len(pc.dst)) > s.end-s.off {
					t.Fatalf("piece %+v lies outside span %v", pc, s)
				}
				covered[pc.req] += len(pc.dst)
			}
			for _, x := range p.items {
				if covered[x.req] != len(x.dst) {
					t.Fatalf("item %d covered by %d of %d bytes", x.req, covered[x.req], len(x.dst))
				}
			}
		})
	}
}

// TestPlanNoMerge: with noMerge a block that rows share is still read once
// (a row starting in the previous row's last block extends its request),
// but a row starting on a fresh block opens its own request however close
// (GNNDrive's merge=false: one request per row at the sector size).
func TestPlanNoMerge(t *testing.T) {
	cases := []struct {
		name  string
		items []it
		want  []span
	}{
		{"adjacent rows not merged", []it{{0, 512}, {512, 512}, {1024, 512}}, []span{{0, 512}, {512, 1024}, {1024, 1536}}},
		{"shared block read once", []it{{0, 128}, {128, 128}, {256, 128}}, []span{{0, 512}}},
		{"row straddling from a shared block extends its request", []it{{0, 400}, {400, 400}}, []span{{0, 1024}}},
		{"a long row stays one request", []it{{0, 2048}, {2048, 2048}}, []span{{0, 2048}, {2048, 4096}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := planner{bs: 512, maxSeg: 65536, noMerge: true}
			planItems(t, &p, c.items, c.want)
		})
	}
}

// checkPlan verifies invariants of a plan: spans aligned, sorted, disjoint
// and within the cap; pieces lie inside their span and tile each item
// exactly once.
// it is a request of a plan test: n bytes from off.
type it struct{ off, n int64 }

// planItems plans the requests items (request i reads item i) with p and
// checks its spans against want and checkPlan's invariants.
func planItems(t *testing.T, p *planner, items []it, want []span) {
	t.Helper()
	for i, x := range items {
		p.items = append(p.items, item{off: x.off, dst: make([]byte, x.n), req: int32(i)})
	}
	p.plan()
	if !slices.Equal(p.spans, want) {
		t.Fatalf("spans %v, want %v", p.spans, want)
	}
	checkPlan(t, p)
}

func checkPlan(t *testing.T, p *planner) {
	t.Helper()
	for i, s := range p.spans {
		if s.off%p.bs != 0 || s.end%p.bs != 0 || s.end <= s.off || s.end-s.off > p.maxSeg {
			t.Fatalf("span %d %v: misaligned, empty or over the cap %d", i, s, p.maxSeg)
		}
		if i > 0 && s.off < p.spans[i-1].end {
			t.Fatalf("span %d %v overlaps span %d %v", i, s, i-1, p.spans[i-1])
		}
	}
	covered := map[int32]int{}
	for _, pc := range p.pieces {
		s := p.spans[pc.seg]
		if pc.at < 0 || int64(pc.at+len(pc.dst)) > s.end-s.off {
			t.Fatalf("piece %+v lies outside span %v", pc, s)
		}
		covered[pc.req] += len(pc.dst)
	}
	for _, it := range p.items {
		if covered[it.req] != len(it.dst) {
			t.Fatalf("item of request %d (%d bytes) covered by %d bytes of pieces", it.req, len(it.dst), covered[it.req])
		}
	}
}

// TestPlanRandom plans random item sets and replays the plan against a
// fake file: every item must receive exactly its bytes.
func TestPlanRandom(t *testing.T) {
	const size = 1 << 16
	file := make([]byte, size)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range file {
		file[i] = byte(rng.Uint32())
	}
	for round := range 300 {
		bs := int64(1) << (9 + rng.IntN(4))
		p := planner{bs: bs, maxSeg: bs * int64(1+rng.IntN(16))}
		n := rng.IntN(200) // past 64 items planning radix-sorts
		for i := range n {
			l := int64(rng.IntN(3000))
			off := rng.Int64N(size - l + 1)
			if i > 0 && rng.IntN(5) == 0 {
				off, l = p.items[0].off, int64(len(p.items[0].dst)) // duplicate
			}
			p.items = append(p.items, item{off: off, dst: make([]byte, l), req: int32(i)})
		}
		p.plan()
		checkPlan(t, &p)
		for _, pc := range p.pieces {
			s := p.spans[pc.seg]
			copy(pc.dst, file[s.off+int64(pc.at):])
		}
		for _, it := range p.items {
			if !bytes.Equal(it.dst, file[it.off:it.off+int64(len(it.dst))]) {
				t.Fatalf("round %d: item at %d (%d bytes) got the wrong bytes", round, it.off, len(it.dst))
			}
		}
	}
}

// TestPlanNoAllocs checks that planning reuses its scratch space.
func TestPlanNoAllocs(t *testing.T) {
	p := planner{bs: 512, maxSeg: 65536}
	dst := make([]byte, 128*512)
	ids := rand.Perm(1 << 20)[:128]
	fill := func() {
		p.items = p.items[:0]
		for i, id := range ids {
			p.items = append(p.items, item{off: int64(id) * 512, dst: dst[i*512 : (i+1)*512]})
		}
	}
	fill()
	p.plan()
	if a := testing.AllocsPerRun(50, func() { fill(); p.plan() }); a != 0 {
		t.Fatalf("plan allocates %.1f times per call", a)
	}
}

// TestSortItems checks the radix sort against a comparison sort on large,
// unaligned and aligned offsets.
func TestSortItems(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 50 {
		var p planner
		n := 65 + rng.IntN(3000)
		align := int64(1) << rng.IntN(13)
		for i := range n {
			p.items = append(p.items, item{off: rng.Int64N(1<<(10+rng.IntN(40))) / align * align, req: int32(i)})
		}
		want := slices.Clone(p.items)
		slices.SortFunc(want, func(a, b item) int { return cmp.Compare(a.off, b.off) })
		p.sortItems()
		for i := range want {
			if p.items[i].off != want[i].off {
				t.Fatalf("round %d: position %d has offset %d, want %d", round, i, p.items[i].off, want[i].off)
			}
		}
		seen := map[int32]bool{}
		for _, it := range p.items {
			seen[it.req] = true
		}
		if len(seen) != n {
			t.Fatalf("round %d: sort lost items (%d distinct of %d)", round, len(seen), n)
		}
	}
}
