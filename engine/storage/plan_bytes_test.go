package storage

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestReadPlanBytesPerRow checks PlanBytesPerRow, the bookkeeping a Reader
// keeps per row of its largest ReadRows call (items, pieces, segments,
// their sort copies; the pools keep it for later calls), which memory
// plans count for callers that bound their calls (sample.StorageIndices).
// Rows of 8 bytes at random places in a file of 4 KiB blocks are the worst
// case: one segment per row.
func TestReadPlanBytesPerRow(t *testing.T) {
	dir := directDir(t)
	const size = 256 << 20
	// Only the Reader's bookkeeping is measured, not the bytes: a sparse
	// file (holes read as zeros) spares writing 256 MiB.
	p := filepath.Join(dir, "idx.bin")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	for _, be := range []Backend{BackendPread, BackendUring} {
		t.Run(string(be), func(t *testing.T) {
			f, err := OpenFile(p, Options{Backend: be, RowBytes: 8, BlockSize: 4096})
			if err != nil {
				t.Skip(err)
			}
			defer f.Close()
			r, err := f.NewReader()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			const rows = 1 << 14
			rng := rand.New(rand.NewPCG(1, 2))
			ids := make([]int64, rows)
			dst := make([]byte, rows*8)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for round := 0; round < 3; round++ {
				for i := range ids {
					ids[i] = rng.Int64N(size / 8)
				}
				if err := r.ReadRows(context.Background(), ids, dst); err != nil {
					t.Fatal(err)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			t.Logf("%s: %d rows: reader holds %d B of heap, %.0f B per row", be, rows, held, float64(held)/rows)
			if held > PlanBytesPerRow*rows {
				t.Errorf("%s: a Reader holds %d B after ReadRows of %d rows: %.0f B per row, PlanBytesPerRow is %d", be, held, rows, float64(held)/rows, PlanBytesPerRow)
			}
			runtime.KeepAlive(r)
		})
	}
}

// TestReadPlanBytesPerRowMerged checks the same bound where rows merge:
// 512-byte rows in 4 KiB blocks, merged into requests of up to 64 KiB,
// read in ascending shares whose density changes from call to call (a
// DiskGNN disk-cache reader's pattern: dense shares put many pieces in a
// segment, sparse ones many segments in a call). The pool keeps segments
// between calls; what they keep must stay within PlanBytesPerRow per row
// of the largest call.
func TestReadPlanBytesPerRowMerged(t *testing.T) {
	dir := directDir(t)
	const size = 256 << 20
	const rb = 512
	p := filepath.Join(dir, "rows.bin")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	for _, be := range []Backend{BackendPread, BackendUring} {
		t.Run(string(be), func(t *testing.T) {
			f, err := OpenFile(p, Options{Backend: be, RowBytes: rb, BlockSize: 4096, QueueDepth: 64, MaxMergeBytes: 64 << 10})
			if err != nil {
				t.Skip(err)
			}
			defer f.Close()
			r, err := f.NewReader()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			const most = 4096 // rows of the largest call
			rng := rand.New(rand.NewPCG(3, 4))
			dst := make([]byte, most*rb)
			ids := make([]int64, 0, most)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			largest := 0
			for round := 0; round < 300; round++ {
				n := most/4 + rng.IntN(most-most/4+1)
				stride := int64(1) << rng.IntN(7) // 1 (every row) to 64 rows apart
				at := rng.Int64N(size/rb - int64(n)*stride)
				ids = ids[:0]
				for i := 0; i < n; i++ {
					ids = append(ids, at+int64(i)*stride+rng.Int64N(stride))
				}
				if err := r.ReadRows(context.Background(), ids, dst[:n*rb]); err != nil {
					t.Fatal(err)
				}
				largest = max(largest, n)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			t.Logf("%s: largest call %d rows: reader holds %d B of heap, %.0f B per row", be, largest, held, float64(held)/float64(largest))
			if held > PlanBytesPerRow*int64(largest) {
				t.Errorf("%s: a Reader holds %d B after 300 calls of at most %d merged rows: %.0f B per row, PlanBytesPerRow is %d", be, held, largest, float64(held)/float64(largest), PlanBytesPerRow)
			}
			runtime.KeepAlive(r)
		})
	}
}
