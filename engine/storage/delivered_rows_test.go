package storage

import (
	"context"
	"testing"

	"outcore/engine/metrics"
)

// TestDeliveredRows checks the storage layer's own count of the rows it
// delivered (Stats.DeliveredRows, DESIGN §5) on the direct-I/O backends:
// each row of a ReadRows call once (a repeated id is read and counted
// once), the whole rows a range read holds, a span asked twice in one
// Submit once, nothing for a read that failed, and the account's
// FeatureRowsDelivered the same.
func TestDeliveredRows(t *testing.T) {
	dir := directDir(t)
	const rb = 128
	path, _ := writeRandomFile(t, dir, "features.bin", 1<<20, 11)
	ctx := context.Background()
	for _, b := range []Backend{BackendUring, BackendPread} {
		t.Run(string(b), func(t *testing.T) {
			acct := metrics.NewReadAccount(nil)
			f := open(t, path, b, Options{RowBytes: rb, Account: acct})
			r := reader(t, f)
			want := int64(0)
			step := func(what string, n int64) {
				t.Helper()
				want += n
				if got := f.Stats().DeliveredRows; got != want {
					t.Fatalf("after %s: %d rows delivered, want %d", what, got, want)
				}
			}
			ids := []int64{5, 9, 5, 700, 9, 3}
			if err := r.ReadRows(ctx, ids, make([]byte, len(ids)*rb)); err != nil {
				t.Fatal(err)
			}
			step("ReadRows with two repeated ids", 4)
			if err := r.ReadRange(ctx, 10*rb, make([]byte, 3*rb+rb/2)); err != nil {
				t.Fatal(err)
			}
			step("ReadRange of 3.5 rows", 3)
			line := make([]byte, 512)
			reqs := []Request{
				{Off: 4096, Dst: line, Tag: 1},
				{Off: 4096, Dst: make([]byte, 512), Tag: 2},
				f.RowRequest(40, make([]byte, rb), 3),
				{Off: 8192, Dst: make([]byte, 2*rb), Tag: 4},
			}
			if err := r.Submit(reqs); err != nil {
				t.Fatal(err)
			}
			comps, err := r.Reap(ctx, nil, len(reqs))
			if err != nil || len(comps) != len(reqs) {
				t.Fatalf("reaped %d of %d: %v", len(comps), len(reqs), err)
			}
			step("Submit of one line twice, a row and a 2-row range", 4+1+2)
			if err := r.ReadRows(ctx, []int64{1 << 40}, make([]byte, rb)); err == nil {
				t.Fatal("a row outside the file was read")
			}
			step("a failed read", 0)
			if got := acct.Totals().FeatureRowsDelivered; got != want {
				t.Fatalf("account: %d rows delivered, file %d", got, want)
			}
		})
	}
}

// TestDeliveredRowsMmap: through a memory map a row is delivered from the
// device when its copy read (the one measure there is), so a cold pass
// delivers the rows that faulted and a resident pass none.
func TestDeliveredRowsMmap(t *testing.T) {
	dir := directDir(t)
	const rb = 512
	path, _ := writeRandomFile(t, dir, "features.bin", 1<<20, 13)
	evictCold(t, path)
	f := open(t, path, BackendMmap, Options{RowBytes: rb})
	r := reader(t, f)
	ids := []int64{3, 200, 1500}
	for pass := 0; pass < 2; pass++ {
		if err := r.ReadRows(context.Background(), ids, make([]byte, len(ids)*rb)); err != nil {
			t.Fatal(err)
		}
		st := f.Stats()
		if st.DeliveredRows != st.DeviceRows || (pass == 0 && st.DeliveredRows == 0) || st.DeliveredRows > int64(len(ids)) {
			t.Fatalf("pass %d: %d rows delivered, %d device rows (of %d)", pass, st.DeliveredRows, st.DeviceRows, len(ids))
		}
	}
}
