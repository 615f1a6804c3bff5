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
	const size = 256 << 20
	p := sparseFile(t, "idx.bin", size)
	for _, be := range []Backend{BackendPread, BackendUring} {
		t.Run(string(be), func(t *testing.T) {
			const rows = 1 << 14
			rng := rand.New(rand.NewPCG(1, 2))
			ids := make([]int64, rows)
			dst := make([]byte, rows*8)
			held := readerHeld(t, p, Options{Backend: be, RowBytes: 8, BlockSize: 4096}, func(r Reader) {
				for round := 0; round < 3; round++ {
					for i := range ids {
						ids[i] = rng.Int64N(size / 8)
					}
					if err := r.ReadRows(context.Background(), ids, dst); err != nil {
						t.Fatal(err)
					}
				}
			})
			t.Logf("%s: %d rows: reader holds %d B of heap, %.0f B per row", be, rows, held, float64(held)/rows)
			if held > PlanBytesPerRow*rows {
				t.Errorf("%s: a Reader holds %d B after ReadRows of %d rows: %.0f B per row, PlanBytesPerRow is %d", be, held, rows, float64(held)/rows, PlanBytesPerRow)
			}
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
	const size = 256 << 20
	const rb = 512
	p := sparseFile(t, "rows.bin", size)
	for _, be := range []Backend{BackendPread, BackendUring} {
		t.Run(string(be), func(t *testing.T) {
			const most = 4096 // rows of the largest call
			rng := rand.New(rand.NewPCG(3, 4))
			dst := make([]byte, most*rb)
			ids := make([]int64, 0, most)
			largest := 0
			o := Options{Backend: be, RowBytes: rb, BlockSize: 4096, QueueDepth: 64, MaxMergeBytes: 64 << 10}
			held := readerHeld(t, p, o, func(r Reader) {
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
			})
			t.Logf("%s: largest call %d rows: reader holds %d B of heap, %.0f B per row", be, largest, held, float64(held)/float64(largest))
			if held > PlanBytesPerRow*int64(largest) {
				t.Errorf("%s: a Reader holds %d B after 300 calls of at most %d merged rows: %.0f B per row, PlanBytesPerRow is %d", be, held, largest, float64(held)/float64(largest), PlanBytesPerRow)
			}
		})
	}
}

// sparseFile is a file of size bytes, all holes (read as zeros), in a
// directory that supports O_DIRECT: the bookkeeping tests measure a
// Reader's heap, not the bytes, and spare writing them.
func sparseFile(t *testing.T, name string, size int64) string {
	t.Helper()
	p := filepath.Join(directDir(t), name)
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	return p
}

// readerHeld opens p with o (skipping where the backend is unavailable)
// and returns the Go heap a Reader of it still holds after calls, the
// Reader kept alive.
func readerHeld(t *testing.T, p string, o Options, calls func(r Reader)) int64 {
	t.Helper()
	f, err := OpenFile(p, o)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	r, err := f.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	calls(r)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(r)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}
