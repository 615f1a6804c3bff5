package diskgnn

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"outcore/engine/system/systest"
	"outcore/internal/osutil"
)

// testFeatures writes a feature table of nodes rows of dim float32s whose
// values identify (node, column), and returns its path.
func testFeatures(t *testing.T, nodes, dim int) (string, []float32) {
	t.Helper()
	f := make([]float32, nodes*dim)
	for v := 0; v < nodes; v++ {
		for c := 0; c < dim; c++ {
			f[v*dim+c] = float32(v) + float32(c)/float32(dim)
		}
	}
	return systest.TableFile(t, "features.bin", f), f
}

// skewedSamples draws n samples of distinct inputs, popular nodes more
// often, consecutive samples sharing a community.
func skewedSamples(r *rand.Rand, n, nodes int) [][]int64 {
	out := make([][]int64, n)
	for i := range out {
		seen := map[int64]bool{}
		comm := int64(i / 5 * 37 % nodes)
		for j := 0; j < 30+r.IntN(60); j++ {
			var v int64
			switch r.IntN(3) {
			case 0:
				u := r.Float64()
				v = int64(u * u * u * float64(nodes))
			case 1:
				v = (comm + int64(r.IntN(40))) % int64(nodes)
			default:
				v = int64(r.IntN(nodes))
			}
			if !seen[v] {
				seen[v] = true
				out[i] = append(out[i], v)
			}
		}
	}
	return out
}

type layoutFixture struct {
	nodes, dim int
	rowBytes   int64
	feats      []float32
	featFile   *os.File
	samples    [][]int64
	counts     []int32
	headers    *os.File
}

func newLayoutFixture(t *testing.T, seed uint64) *layoutFixture {
	r := rand.New(rand.NewPCG(seed, 17))
	fx := &layoutFixture{nodes: 300 + r.IntN(500), dim: 4 << r.IntN(3)}
	fx.rowBytes = int64(fx.dim) * 4
	var path string
	path, fx.feats = testFeatures(t, fx.nodes, fx.dim)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fx.featFile = f
	fx.samples = skewedSamples(r, 10+r.IntN(50), fx.nodes)
	fx.counts = make([]int32, fx.nodes)
	for _, s := range fx.samples {
		for _, v := range s {
			fx.counts[v]++
		}
	}
	return fx
}

func (fx *layoutFixture) build(t *testing.T, plan *tierPlan, sp segmentPlan, quota int64, store *store) (*layout, *os.File, *os.File) {
	dir := t.TempDir()
	var files []*os.File
	for _, name := range []string{"packed.bin", "disk_cache.bin", "disk_cache.stage", "addresses.bin"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	t.Cleanup(func() {
		for _, f := range files {
			f.Close()
		}
	})
	packed, disk := files[0], files[1]
	rb := fx.rowBytes
	lio := layoutIO{
		Inputs: func(_ context.Context, g int, buf []int64) ([]int64, error) {
			return append(buf[:0], fx.samples[g]...), nil
		},
		ReadRange: func(_ context.Context, off int64, dst []byte) error {
			_, err := fx.featFile.ReadAt(dst, off)
			return err
		},
		Packed: packed, DiskCache: disk, Stage: files[2], Headers: files[3],
		Sync: func() error {
			for _, f := range files {
				if err := f.Sync(); err != nil {
					return err
				}
			}
			return nil
		},
		OnPartition: func(lo int64, rows []byte) error {
			for k := int64(0); k < int64(len(rows))/rb; k++ {
				if s := plan.Slot[lo+k]; s >= 0 {
					store.Fill(s, osutil.View[float32](rows[k*rb:(k+1)*rb]))
				}
			}
			return nil
		},
	}
	cfg := layoutConfig{Nodes: int64(fx.nodes), RowBytes: rb, Samples: len(fx.samples), Plan: plan, Segment: sp,
		Hashes: 2, Seed: 1, PartRows: 16 + int64(len(fx.samples)), IDQuota: quota, SyncEvery: 4096}
	l, err := buildLayout(context.Background(), cfg, lio)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	fx.headers = files[3]
	return l, packed, disk
}

// TestLayoutAssemblesEveryInput builds the whole store (tiers, segment
// search under a disk budget, segmented disk caches, chunks, batched
// packing) over real files and assembles every sample's input from it:
// each row must be the feature table's row of that input, whichever tier
// served it.
func TestLayoutAssemblesEveryInput(t *testing.T) {
	var diskRows int64
	var multiSegment int
	defer func() {
		if !t.Failed() && (diskRows == 0 || multiSegment == 0) {
			t.Errorf("no trial used the disk caches (%d rows) or several segments (%d trials)", diskRows, multiSegment)
		}
	}()
	for trial := uint64(0); trial < 12; trial++ {
		fx := newLayoutFixture(t, trial)
		r := rand.New(rand.NewPCG(trial, 99))
		gpu, cpu := int64(r.IntN(fx.nodes/8)), int64(r.IntN(fx.nodes/8))
		plan, err := planTiers(fx.counts, gpu, cpu)
		if err != nil {
			t.Fatal(err)
		}
		budget := int64(math.MaxInt64)
		if trial%3 != 0 {
			budget = int64(fx.nodes) * int64(1+r.IntN(3)) / 2
		}
		sp, err := searchSegmentSize(len(fx.samples), fx.nodes, budget, func(i int) ([]int32, error) {
			return coldInputs(fx.samples[i], plan.Slot, nil), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		store, err := newStore(&plan, fx.dim, make([]float32, len(plan.GPU)*fx.dim), make([]float32, len(plan.CPU)*fx.dim))
		if err != nil {
			t.Fatal(err)
		}
		quota := int64(0)
		if trial%2 == 1 {
			quota = 200 // several packing sweeps
		}
		l, packed, disk := fx.build(t, &plan, sp, quota, store)
		diskRows += l.Stats.DiskCacheRows
		if l.Stats.Segments > 1 && l.Stats.DiskCacheRows > 0 {
			multiSegment++
		}
		if quota > 0 && l.Stats.PackedRows > 100 && l.Stats.Sweeps < 2 {
			t.Fatalf("trial %d: %d sweeps for %d packed rows under a quota", trial, l.Stats.Sweeps, l.Stats.PackedRows)
		}
		var h chunkHeader
		var seen []bool
		var hits tierHits
		for g, in := range fx.samples {
			c := l.Chunks[g]
			head := make([]byte, c.HeaderRegion)
			if _, err := fx.headers.ReadAt(head, c.HeaderOff); err != nil {
				t.Fatal(err)
			}
			region := make([]byte, c.RowsRegion)
			if _, err := packed.ReadAt(region, c.RowsOff); err != nil {
				t.Fatal(err)
			}
			seg := l.Segments[c.Segment]
			if seen, err = decodeChunkHeader(head[:c.HeaderLen], int32(plan.Cached()), seg.Rows, &h, seen); err != nil {
				t.Fatalf("trial %d sample %d: %v", trial, g, err)
			}
			rows := l.DiskRowsOf(g, h.DiskLoc, fx.rowBytes, nil)
			diskRows := make([]byte, int64(len(rows))*fx.rowBytes)
			for k, row := range rows {
				if _, err := disk.ReadAt(diskRows[int64(k)*fx.rowBytes:int64(k+1)*fx.rowBytes], row*fx.rowBytes); err != nil {
					t.Fatal(err)
				}
			}
			x := make([]float32, len(in)*fx.dim)
			th, err := store.Assemble(&h, osutil.View[float32](region[:int64(c.Packed)*fx.rowBytes]), osutil.View[float32](diskRows), x)
			if err != nil {
				t.Fatal(err)
			}
			for p, v := range in {
				if !slices.Equal(x[p*fx.dim:(p+1)*fx.dim], fx.feats[int(v)*fx.dim:(int(v)+1)*fx.dim]) {
					t.Fatalf("trial %d sample %d input %d (node %d): wrong row", trial, g, p, v)
				}
			}
			hits.GPU += th.GPU
			hits.CPU += th.CPU
			hits.Disk += th.Disk
			hits.Packed += th.Packed
		}
		if hits.Packed != l.Stats.PackedRows || hits.Disk != l.Stats.DiskAccesses || hits.GPU+hits.CPU != l.Stats.CachedAccesses {
			t.Fatalf("trial %d: assembled %+v, layout stats %+v", trial, hits, l.Stats)
		}
		// Without a budget every cold input is packed (pure packing); with
		// one the disk caches hold at most m rows per segment.
		if budget == math.MaxInt64 && l.Stats.DiskCacheRows != 0 {
			t.Fatalf("trial %d: unlimited disk budget but %d disk-cache rows", trial, l.Stats.DiskCacheRows)
		}
		for _, s := range l.Segments {
			if int64(s.Rows) > sp.DiskEntries {
				t.Fatalf("trial %d: segment with %d disk-cache rows, m = %d", trial, s.Rows, sp.DiskEntries)
			}
		}
	}
}

// TestRankProfileBoundsCold: the profile's bound is never below the true
// largest number of cold inputs, for any cache size.
func TestRankProfileBoundsCold(t *testing.T) {
	fx := newLayoutFixture(t, 42)
	order := popularityOrder(fx.counts)
	p := newRankProfile(order, int64(fx.nodes), len(fx.samples), 16)
	for g, s := range fx.samples {
		p.Add(g, s)
	}
	for _, cached := range []int64{0, 1, 7, 50, int64(len(order)) / 2, int64(len(order))} {
		plan, _ := planTiers(fx.counts, 0, cached)
		var most int64
		for _, s := range fx.samples {
			most = max(most, int64(len(coldInputs(s, plan.Slot, nil))))
		}
		if got := p.MaxCold(cached); got < most {
			t.Fatalf("cached %d: bound %d below the true %d", cached, got, most)
		}
	}
	longest := slices.MaxFunc(fx.samples, func(a, b []int64) int { return len(a) - len(b) })
	if got := p.MaxCold(0); got != int64(len(longest)) {
		t.Fatalf("nothing cached: bound %d, longest sample %d", got, len(longest))
	}
}

func TestChunkHeaderRejectsCorruption(t *testing.T) {
	h := chunkHeader{Batch: 3, Segment: 1, Inputs: 5, CacheSlot: []int32{2}, CachePos: []int32{4},
		DiskLoc: []int32{1, 6}, DiskPos: []int32{0, 2}, PackedPos: []int32{1, 3}}
	b := h.Encode(nil)
	var out chunkHeader
	if _, err := decodeChunkHeader(b, 3, 7, &out, nil); err != nil {
		t.Fatal(err)
	}
	if out.Batch != 3 || !slices.Equal(out.DiskLoc, h.DiskLoc) || !slices.Equal(out.PackedPos, h.PackedPos) {
		t.Fatalf("round trip %+v", out)
	}
	corrupt := func(word int, v uint32) []byte {
		c := slices.Clone(b)
		osutil.View[uint32](c)[word] = v
		return c
	}
	for name, c := range map[string][]byte{
		"truncated":         b[:len(b)-4],
		"bad magic":         corrupt(0, 1),
		"counts":            corrupt(4, 6),
		"slot out of range": corrupt(8, 3),
		"repeated position": corrupt(13, 4), // packedPos[0] = 4, also a cache position
		"disk out of order": corrupt(10, 7),
	} {
		if _, err := decodeChunkHeader(c, 3, 7, &out, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzDecodeChunkHeader(f *testing.F) {
	h := chunkHeader{Batch: 1, Inputs: 3, CacheSlot: []int32{0}, CachePos: []int32{2}, DiskLoc: []int32{0}, DiskPos: []int32{1}, PackedPos: []int32{0}}
	f.Add(h.Encode(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var out chunkHeader
		if _, err := decodeChunkHeader(b, 4, 4, &out, nil); err != nil {
			return
		}
		if int(out.Inputs) != len(out.CachePos)+len(out.DiskPos)+len(out.PackedPos) {
			t.Fatal("decoded header does not cover its inputs")
		}
	})
}
