package gids

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"outcore/engine/storage"
	"outcore/engine/system/systest"
	"outcore/internal/osutil"
)

// featureFile writes nodes rows of dim float32s (row v holds v·dim+i) in
// a directory on disk and opens it for line reads.
func featureFile(t *testing.T, nodes, dim int, line int64, depth int) (*storage.File, func(v int64) []float32) {
	t.Helper()
	dir := systest.DiskDir(t)
	rows := make([]float32, nodes*dim)
	for i := range rows {
		rows[i] = float32(i)
	}
	p := filepath.Join(dir, "features.bin")
	if err := os.WriteFile(p, osutil.Bytes(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := storage.OpenFile(p, storage.Options{RowBytes: int64(dim) * 4, QueueDepth: depth, MaxMergeBytes: line, AllowBuffered: true, Logger: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, func(v int64) []float32 { return rows[int(v)*dim : (int(v)+1)*dim] }
}

// Passes over random skewed batches, with and without the CPU buffer and
// window pinning, several workers sharing a small cache: every row of
// every batch must hold its node's features.
func TestPassesServeTheRightRows(t *testing.T) {
	for _, c := range []struct {
		name          string
		dim           int
		line          int64
		slots, window int
		workers       int
		cpu           bool
	}{
		{"one row per line, window 4", 128, 512, 300, 4, 3, false},
		{"four rows per line, window 8, CPU buffer", 32, 512, 200, 8, 4, true},
		{"rows straddle lines", 100, 512, 150, 3, 2, false},
		{"tiny cache: bypasses", 64, 512, 8, 6, 3, false},
		{"no window", 64, 512, 100, 0, 4, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			const nodes = 3000
			rowBytes := int64(c.dim) * 4
			f, want := featureFile(t, nodes, c.dim, c.line, 8)
			var readers []storage.Reader
			for i := 0; i < c.workers; i++ {
				r, err := f.NewReader()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				readers = append(readers, r)
			}
			lines := (int64(nodes)*rowBytes + c.line - 1) / c.line
			cache, err := NewWindowCache(lines, c.line, make([]byte, int64(c.slots)*c.line), 3)
			if err != nil {
				t.Fatal(err)
			}
			var cpu *cpuBuffer
			if c.cpu {
				cpu = &cpuBuffer{slot: make([]int32, nodes), dim: c.dim}
				for v := range cpu.slot {
					cpu.slot[v] = -1
					if v%7 == 0 {
						cpu.slot[v] = int32(len(cpu.rows) / c.dim)
						cpu.rows = append(cpu.rows, want(int64(v))...)
					}
				}
			}
			a := newAggregator(f, readers, 8, cpu, cache, c.window > 0, rowBytes, c.line)
			r := rand.New(rand.NewPCG(9, uint64(c.dim)))
			var batches [][]int64
			for b := 0; b < 40; b++ {
				seen := map[int64]bool{}
				var in []int64
				for len(in) < 200 {
					u := r.Float64()
					v := int64(u * u * nodes)
					if !seen[v] {
						seen[v] = true
						in = append(in, v)
					}
				}
				batches = append(batches, in)
			}
			entered := 0
			for i := 0; i < len(batches); i += 2 { // passes of two iterations
				end := min(i+2, len(batches))
				if c.window > 0 {
					for ; entered < min(len(batches), end+c.window); entered++ {
						var ls []int64
						for _, v := range batches[entered] {
							if cpu.row(v) != nil {
								continue
							}
							lo, hi := a.linesOf(v)
							for l := lo; l <= hi; l++ {
								ls = append(ls, l)
							}
						}
						cache.Enter(ls)
					}
				}
				var rows []passRow
				xs := make([][]float32, end-i)
				for j := i; j < end; j++ {
					xs[j-i] = make([]float32, len(batches[j])*c.dim)
					for k, v := range batches[j] {
						rows = append(rows, passRow{node: v, dst: xs[j-i][k*c.dim : (k+1)*c.dim], batch: int32(j - i)})
					}
				}
				ps, err := a.run(context.Background(), rows, end-i, nil)
				if err != nil {
					t.Fatal(err)
				}
				if ps.cpuRows+ps.cacheRows+ps.storageRows != int64(len(rows)) {
					t.Fatalf("pass %d: %+v", i, ps)
				}
				for j, b := range ps.batches {
					if b.rows != int64(len(batches[i+j])) || b.cpu+b.cache+b.shared+b.device != b.rows {
						t.Fatalf("pass %d, iteration %d: %+v for %d rows", i, j, b, len(batches[i+j]))
					}
				}
				for j := i; j < end; j++ {
					for k, v := range batches[j] {
						got := xs[j-i][k*c.dim : (k+1)*c.dim]
						w := want(v)
						for d := range got {
							if got[d] != w[d] {
								t.Fatalf("pass %d, batch %d, row %d (node %d): feature %d is %v, want %v", i, j, k, v, d, got[d], w[d])
							}
						}
					}
				}
			}
			if c.window > 0 && cache.pinned != 0 {
				t.Fatalf("%d slots still pinned", cache.pinned)
			}
			st := cache.Stats()
			t.Logf("%+v", st)
		})
	}
}
