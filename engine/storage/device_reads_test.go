package storage

import (
	"context"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"outcore/engine/metrics"
)

// evictCold drops path from the page cache (after making it durable), so the
// next reads go to the device.
func evictCold(t testing.TB, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}

// TestDeviceReadsByKind reads rows of a cold file through every backend and
// checks the per-file device counters and the run account they feed: direct
// I/O counts every aligned byte read and every row; mmap counts the pages
// its copies faulted in (measured on the thread) and only the rows that
// faulted — none on a second, resident pass.
func TestDeviceReadsByKind(t *testing.T) {
	dir := directDir(t)
	const rb = 512
	path, data := writeRandomFile(t, dir, "features.bin", 1<<20, 7)
	ps := int64(os.Getpagesize())
	// Rows 0 and 1 share a block; 100 and 1000 are alone in theirs.
	ids := []int64{0, 1, 100, 1000}
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			evictCold(t, path)
			acct := metrics.NewReadAccount(nil)
			f := open(t, path, b, Options{RowBytes: rb, Account: acct})
			if f.Kind() != metrics.FileFeatures {
				t.Fatalf("kind %q, want features (by name)", f.Kind())
			}
			r := reader(t, f)
			dst := make([]byte, len(ids)*rb)
			if err := r.ReadRows(context.Background(), ids, dst); err != nil {
				t.Fatal(err)
			}
			checkRows(t, data, rb, ids, dst)
			st := f.Stats()
			tot := acct.Totals()
			if tot.FeatureBytes != st.DeviceBytes || tot.FeatureRows != st.DeviceRows || tot.TopologyBytes != 0 || tot.OtherBytes != 0 {
				t.Fatalf("account %+v, file stats device %d bytes %d rows", tot, st.DeviceBytes, st.DeviceRows)
			}
			bs := f.BlockSize()
			switch b {
			case BackendMmap:
				// Three distinct pages fault; all four rows came from the
				// device (rows 0 and 1 share a page: the first copy faults
				// it, the second finds it resident).
				if st.DeviceBytes < 3*ps {
					t.Fatalf("mmap device bytes %d, want >= 3 pages", st.DeviceBytes)
				}
				if st.DeviceRows != 3 {
					t.Fatalf("mmap device rows %d, want 3 (row 1 shares row 0's page)", st.DeviceRows)
				}
				// The account has the page faults that read those bytes.
				if tot.Faults.Bytes != st.DeviceBytes || tot.Faults.Faults < 1 || tot.Faults.Faults > 3 {
					t.Fatalf("mmap faults %+v for 3 cold pages (%d device bytes)", tot.Faults, st.DeviceBytes)
				}
			default:
				want := 3 * bs // block of rows 0-1, of 100, of 1000
				if bs < rb {
					want = 4 * rb
				}
				if st.DeviceBytes != st.BytesRead || st.DeviceBytes < want {
					t.Fatalf("direct device bytes %d (bytes read %d), want %d", st.DeviceBytes, st.BytesRead, want)
				}
				if st.DeviceRows != int64(len(ids)) {
					t.Fatalf("direct device rows %d, want %d", st.DeviceRows, len(ids))
				}
				if tot.Faults != (metrics.MappedReads{}) {
					t.Fatalf("direct reads counted as page faults: %+v", tot.Faults)
				}
			}
			// Second pass: direct I/O reads again, mmap finds the pages
			// resident.
			before := f.Stats()
			if err := r.ReadRows(context.Background(), ids, dst); err != nil {
				t.Fatal(err)
			}
			after := f.Stats()
			dBytes, dRows := after.DeviceBytes-before.DeviceBytes, after.DeviceRows-before.DeviceRows
			if b == BackendMmap {
				if dBytes != 0 || dRows != 0 {
					t.Fatalf("resident mmap pass read %d bytes, %d rows", dBytes, dRows)
				}
			} else if dBytes != before.DeviceBytes || dRows != int64(len(ids)) {
				t.Fatalf("second direct pass %d bytes %d rows, want %d %d", dBytes, dRows, before.DeviceBytes, len(ids))
			}
		})
	}
}

// TestRowRequestsCountRows checks that asynchronous row requests count as
// rows (GNNDrive's extractors read rows through Submit) and that an
// explicit Kind overrides the name.
func TestRowRequestsCountRows(t *testing.T) {
	dir := directDir(t)
	const rb = 256
	path, data := writeRandomFile(t, dir, "chunk.bin", 64<<10, 3)
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			evictCold(t, path)
			acct := metrics.NewReadAccount(nil)
			f := open(t, path, b, Options{RowBytes: rb, Account: acct, Kind: metrics.FileFeatures})
			r := reader(t, f)
			ids := []int64{3, 40, 200}
			dst := make([]byte, len(ids)*rb)
			var reqs []Request
			for i, id := range ids {
				reqs = append(reqs, f.RowRequest(id, dst[i*rb:], uint64(i)))
			}
			// A range request is not a row.
			rng := make([]byte, 100)
			reqs = append(reqs, Request{Off: 5000, Dst: rng, Tag: 99})
			if err := r.Submit(reqs); err != nil {
				t.Fatal(err)
			}
			var comps []Completion
			for len(comps) < len(reqs) {
				var err error
				if comps, err = r.Reap(context.Background(), comps, len(reqs)-len(comps)); err != nil {
					t.Fatal(err)
				}
			}
			checkRows(t, data, rb, ids, dst)
			st := f.Stats()
			if st.Rows != 3 || st.DeviceRows != 3 {
				t.Fatalf("rows %d, device rows %d, want 3 and 3", st.Rows, st.DeviceRows)
			}
			if tot := acct.Totals(); tot.FeatureRows != 3 || tot.FeatureBytes != st.DeviceBytes || st.DeviceBytes <= 0 {
				t.Fatalf("account %+v, device bytes %d", tot, st.DeviceBytes)
			}
		})
	}
}

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
