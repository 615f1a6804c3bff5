package storage

import (
	"context"
	"testing"

	"outcore/engine/metrics"
)

// Every device request of the direct-I/O backends reaches the run's
// account in its size class (metrics.RequestClass, the I/O floor of
// DESIGN §11): lone rows as block-sized requests, adjacent blocks merged
// into one larger request; memory maps count no requests.
func TestRequestClassesReachTheAccount(t *testing.T) {
	dir := directDir(t)
	const rb = 512
	path, data := writeRandomFile(t, dir, "features.bin", 1<<20, 11)
	// Rows 0..63 are 32 KiB of adjacent blocks (one merged request); 1000
	// and 1500 are alone.
	var ids []int64
	for i := int64(0); i < 64; i++ {
		ids = append(ids, i)
	}
	ids = append(ids, 1000, 1500)
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			acct := metrics.NewReadAccount(nil)
			f := open(t, path, b, Options{RowBytes: rb, Account: acct})
			r := reader(t, f)
			dst := make([]byte, len(ids)*rb)
			if err := r.ReadRows(context.Background(), ids, dst); err != nil {
				t.Fatal(err)
			}
			checkRows(t, data, rb, ids, dst)
			tot := acct.Totals()
			var n int64
			for _, c := range tot.Requests {
				n += c
			}
			st := f.Stats()
			if b == BackendMmap {
				if n != 0 {
					t.Fatalf("mmap counted %d device requests: %v", n, tot.Requests)
				}
				return
			}
			if n != st.Requests {
				t.Fatalf("account has %d requests %v, the file issued %d", n, tot.Requests, st.Requests)
			}
			lone := metrics.RequestClass(max(f.BlockSize(), rb))
			merged := metrics.RequestClass(64 * rb)
			if tot.Requests[lone] < 2 || tot.Requests[merged] < 1 {
				t.Fatalf("requests by class %v: want 2 lone block reads (class %d) and the merged 32 KiB (class %d)", tot.Requests, lone, merged)
			}
		})
	}
}
