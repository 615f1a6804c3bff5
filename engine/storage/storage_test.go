package storage

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadRowsMatchesFile reads random id sets (duplicates, unaligned rows,
// rows straddling blocks, the last row) with every backend, row size and
// merge cap and compares them with the file's bytes.
func TestReadRowsMatchesFile(t *testing.T) {
	dir := directDir(t)
	const size = 1<<20 + 333 // not a multiple of the block size
	path, data := writeRandomFile(t, dir, "rows.bin", size, 1)
	for _, b := range backends {
		for _, rb := range []int64{4, 100, 512, 4096 + 13} {
			for _, merge := range []int64{512, 4096, 0} {
				if b == BackendMmap && merge != 0 {
					continue
				}
				t.Run(fmt.Sprintf("%s/row=%d/merge=%d", b, rb, merge), func(t *testing.T) {
					f := open(t, path, b, Options{RowBytes: rb, MaxMergeBytes: merge, QueueDepth: 16, Workers: 4})
					r := reader(t, f)
					rows := f.Rows()
					rng := rand.New(rand.NewPCG(uint64(rb), uint64(merge)))
					sets := map[string][]int64{
						"random":     randomIDs(rng, 300, rows),
						"contiguous": {10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23},
						"reversed":   {23, 22, 21, 20, 3, 2, 1, 0},
						"duplicates": {5, 5, 5, 7, 5, 7},
						"last":       {rows - 1, 0, rows - 1},
						"empty":      {},
					}
					for name, ids := range sets {
						dst := make([]byte, int64(len(ids))*rb)
						if err := r.ReadRows(context.Background(), ids, dst); err != nil {
							t.Fatalf("%s: ReadRows: %v", name, err)
						}
						checkRows(t, data, rb, ids, dst)
					}
				})
			}
		}
	}
}

// TestReadRange reads ranges of many sizes and alignments, up to EOF.
func TestReadRange(t *testing.T) {
	dir := directDir(t)
	const size = 1<<20 + 777
	path, data := writeRandomFile(t, dir, "range.bin", size, 2)
	type rng struct{ off, n int64 }
	cases := []rng{
		{0, 0}, {0, 1}, {1, 1}, {511, 2}, {512, 512}, {100, 5000},
		{4095, 300 << 10}, // larger than the merge cap: split into requests
		{size - 10, 10},   // ends at EOF, unaligned
		{size - 5000, 5000},
		{size, 0},
		{0, size}, // the whole file
	}
	configs := map[string]Options{
		"uring":                 {Backend: BackendUring},
		"uring-fixed-file-bufs": {Backend: BackendUring, FixedFile: true, FixedBuffers: true},
		"pread":                 {Backend: BackendPread, Workers: 3},
		"mmap":                  {Backend: BackendMmap},
	}
	for name, o := range configs {
		t.Run(name, func(t *testing.T) {
			o.QueueDepth, o.MaxMergeBytes = 8, 64<<10
			f := open(t, path, o.Backend, o)
			r := reader(t, f)
			for _, c := range cases {
				dst := make([]byte, c.n)
				if err := r.ReadRange(context.Background(), c.off, dst); err != nil {
					t.Fatalf("ReadRange(%d, %d): %v", c.off, c.n, err)
				}
				if !bytes.Equal(dst, data[c.off:c.off+c.n]) {
					t.Fatalf("ReadRange(%d, %d): bytes differ from the file", c.off, c.n)
				}
			}
		})
	}
}

// TestBadInput checks the errors for ids and ranges beyond the file and
// malformed calls, and that a Reader still works after them.
func TestBadInput(t *testing.T) {
	dir := directDir(t)
	path, data := writeRandomFile(t, dir, "bad.bin", 10_000, 3)
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			f := open(t, path, b, Options{RowBytes: 100})
			r := reader(t, f)
			ctx := context.Background()
			dst := make([]byte, 300)
			isErr(t, r.ReadRows(ctx, []int64{0, 100, 1}, dst), ErrOutOfRange, "row 100 of 100")
			err := r.ReadRows(ctx, []int64{-1}, dst)
			isErr(t, err, ErrOutOfRange, "row -1")
			if !strings.Contains(err.Error(), "ids[0] = -1") {
				t.Errorf("error %q does not name the bad id", err)
			}
			isErr(t, r.ReadRows(ctx, []int64{1 << 60}, dst), ErrOutOfRange, "huge id")
			isErr(t, r.ReadRows(ctx, []int64{0, 1, 2, 3}, dst), ErrInvalid, "short dst")
			isErr(t, r.ReadRange(ctx, 9_999, make([]byte, 2)), ErrOutOfRange, "range across EOF")
			isErr(t, r.ReadRange(ctx, -1, make([]byte, 1)), ErrOutOfRange, "negative offset")
			isErr(t, r.ReadRange(ctx, 10_001, nil), ErrOutOfRange, "offset past EOF")
			isErr(t, r.Submit([]Request{{Off: 0, Dst: dst}, {Off: 9_950, Dst: dst, Tag: 7}}), ErrOutOfRange, "submit across EOF")
			isErr(t, r.Submit([]Request{f.RowRequest(1<<62, dst, 1)}), ErrOutOfRange, "row request with an overflowing id")
			isErr(t, r.Submit([]Request{f.RowRequest(-3, dst, 1)}), ErrOutOfRange, "row request with a negative id")
			if n := r.Outstanding(); n != 0 {
				t.Fatalf("a rejected Submit left %d requests outstanding", n)
			}
			if err := r.ReadRows(ctx, []int64{99, 0, 3}, dst); err != nil {
				t.Fatalf("ReadRows after errors: %v", err)
			}
			checkRows(t, data, 100, []int64{99, 0, 3}, dst)
			f2 := open(t, path, b, Options{})
			r2 := reader(t, f2)
			isErr(t, r2.ReadRows(ctx, []int64{0}, dst), ErrInvalid, "ReadRows without RowBytes")
		})
	}
	if _, err := OpenFile(dir+"/missing", Options{Logger: func(string) {}}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("opening a missing file: %v", err)
	}
	if _, err := OpenFile(path, Options{QueueDepth: -1, Logger: func(string) {}}); err == nil {
		t.Error("negative queue depth accepted")
	}
	if _, err := ParseBackend("spdk"); err == nil {
		t.Error("unknown backend accepted")
	}
}

// TestCoalescingStats checks that rows sharing a block are read once and
// that adjacent blocks merge up to MaxMergeBytes, as the counters show.
func TestCoalescingStats(t *testing.T) {
	dir := directDir(t)
	path, data := writeRandomFile(t, dir, "coalesce.bin", 1<<20, 4)
	cases := []struct {
		name                   string
		rb, merge              int64
		ids                    []int64
		wantRequests, wantRead int64
	}{
		// 128 rows of 4 B all lie in block 0: one 512 B read.
		{"shared block", 4, 512, seq(0, 128), 1, 512},
		// rows 0..4 of 100 B span [0, 500): one block.
		{"small rows", 100, 512, []int64{4, 0, 2, 1, 3, 2}, 1, 512},
		// row 5 of 100 B spans [500, 600): blocks 0 and 1, one request
		// when merging is allowed...
		{"straddle merged", 100, 1024, []int64{5}, 1, 1024},
		// ...and two without.
		{"straddle unmerged", 100, 512, []int64{5}, 2, 1024},
		// 16 adjacent 512 B rows: 16 requests unmerged, 1 merged, 2 with
		// a 4 KiB cap.
		{"adjacent unmerged", 512, 512, seq(0, 16), 16, 8192},
		{"adjacent merged", 512, 64 << 10, seq(0, 16), 1, 8192},
		{"adjacent capped", 512, 4096, seq(0, 16), 2, 8192},
		// far apart rows never merge.
		{"sparse", 512, 64 << 10, []int64{0, 10, 20}, 3, 1536},
	}
	for _, b := range []Backend{BackendUring, BackendPread} {
		for _, c := range cases {
			t.Run(string(b)+"/"+c.name, func(t *testing.T) {
				f := open(t, path, b, Options{RowBytes: c.rb, MaxMergeBytes: c.merge, BlockSize: 512})
				r := reader(t, f)
				dst := make([]byte, int64(len(c.ids))*c.rb)
				if err := r.ReadRows(context.Background(), c.ids, dst); err != nil {
					t.Fatal(err)
				}
				checkRows(t, data, c.rb, c.ids, dst)
				s := f.Stats()
				if s.Requests != c.wantRequests || s.BytesRead != c.wantRead {
					t.Errorf("requests=%d bytes_read=%d, want %d and %d", s.Requests, s.BytesRead, c.wantRequests, c.wantRead)
				}
				if want := int64(len(c.ids)) * c.rb; s.BytesNeeded != want || s.Rows != int64(len(c.ids)) {
					t.Errorf("bytes_needed=%d rows=%d, want %d and %d", s.BytesNeeded, s.Rows, want, len(c.ids))
				}
				if s.Latency.Count() != s.Requests {
					t.Errorf("latency histogram has %d entries for %d requests", s.Latency.Count(), s.Requests)
				}
			})
		}
	}
}

// seq returns [lo, hi).
func seq(lo, hi int64) []int64 {
	s := make([]int64, 0, hi-lo)
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

// TestAsync submits more requests than the queue depth in several batches,
// reaps them by tag and checks every destination.
func TestAsync(t *testing.T) {
	dir := directDir(t)
	path, data := writeRandomFile(t, dir, "async.bin", 1<<20+99, 5)
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			const rb = 700
			f := open(t, path, b, Options{RowBytes: rb, QueueDepth: 8, Workers: 4})
			r := reader(t, f)
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(5, 5))
			ids := randomIDs(rng, 200, f.Rows())
			bufs := make([][]byte, len(ids))
			var reqs []Request
			for i, id := range ids {
				bufs[i] = make([]byte, rb)
				reqs = append(reqs, f.RowRequest(id, bufs[i], uint64(i)))
			}
			reqs = append(reqs, Request{Off: 5, Dst: nil, Tag: 1000}) // empty
			seen := map[uint64]bool{}
			var done []Completion
			for lo := 0; lo < len(reqs); lo += 50 {
				if err := r.Submit(reqs[lo:min(lo+50, len(reqs))]); err != nil {
					t.Fatal(err)
				}
				if lo == 0 {
					dst := make([]byte, rb)
					isErr(t, r.ReadRows(ctx, []int64{0}, dst), ErrBusy, "ReadRows with requests outstanding")
				}
				var err error
				out := r.Outstanding()
				if done, err = r.Reap(ctx, done[:0], 10); err != nil {
					t.Fatal(err)
				}
				if len(done) < min(10, out) {
					t.Fatalf("Reap(min 10) returned %d with %d outstanding", len(done), out)
				}
				for _, c := range done {
					record(t, seen, c)
				}
			}
			for r.Outstanding() > 0 {
				var err error
				if done, err = r.Reap(ctx, done[:0], 1<<30); err != nil {
					t.Fatal(err)
				}
				for _, c := range done {
					record(t, seen, c)
				}
			}
			if len(seen) != len(reqs) {
				t.Fatalf("reaped %d distinct tags, submitted %d", len(seen), len(reqs))
			}
			for i, id := range ids {
				if !bytes.Equal(bufs[i], data[id*rb:(id+1)*rb]) {
					t.Fatalf("request %d (row %d): bytes differ from the file", i, id)
				}
			}
			if done, err := r.Reap(ctx, nil, 5); err != nil || len(done) != 0 {
				t.Fatalf("Reap with nothing outstanding: %v, %v", done, err)
			}
		})
	}
}

// record notes one completion, failing on errors and repeats.
func record(t *testing.T, seen map[uint64]bool, c Completion) {
	t.Helper()
	if c.Err != nil {
		t.Fatalf("tag %d: %v", c.Tag, c.Err)
	}
	if seen[c.Tag] {
		t.Fatalf("tag %d reaped twice", c.Tag)
	}
	seen[c.Tag] = true
}

// TestSubmitReapGoroutines runs Submit and Reap on two goroutines (the
// Helios split) and checks every row; run it with -race.
func TestSubmitReapGoroutines(t *testing.T) {
	dir := directDir(t)
	path, data := writeRandomFile(t, dir, "split.bin", 1<<20, 6)
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			const rb, n = 512, 2000
			f := open(t, path, b, Options{RowBytes: rb, QueueDepth: 32, Workers: 8})
			r := reader(t, f)
			rng := rand.New(rand.NewPCG(6, 6))
			ids := randomIDs(rng, n, f.Rows())
			dst := make([]byte, n*rb)
			submitted := make(chan int, n)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for lo := 0; lo < n; lo += 25 {
					var reqs []Request
					for i := lo; i < lo+25; i++ {
						reqs = append(reqs, f.RowRequest(ids[i], dst[i*rb:], uint64(i)))
					}
					if err := r.Submit(reqs); err != nil {
						t.Error(err)
						close(submitted)
						return
					}
					submitted <- len(reqs)
				}
				close(submitted)
			}()
			got, want := 0, 0
			var done []Completion
			for k := range submitted {
				want += k
				for got < want {
					var err error
					done, err = r.Reap(context.Background(), done[:0], 1)
					if err != nil {
						t.Fatal(err)
					}
					for _, c := range done {
						if c.Err != nil {
							t.Fatal(c.Err)
						}
					}
					got += len(done)
				}
			}
			wg.Wait()
			if got != n {
				t.Fatalf("reaped %d of %d", got, n)
			}
			checkRows(t, data, rb, ids, dst)
		})
	}
}

// TestConcurrentReaders reads from one File through several Readers at once
// and checks the bytes and the aggregated counters; run it with -race.
func TestConcurrentReaders(t *testing.T) {
	dir := directDir(t)
	path, data := writeRandomFile(t, dir, "concurrent.bin", 2<<20, 7)
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			const rb, readers, rounds, batch = 300, 4, 20, 64
			f := open(t, path, b, Options{RowBytes: rb, QueueDepth: 16, Workers: 8})
			var wg sync.WaitGroup
			for g := range readers {
				r := reader(t, f)
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 7))
					dst := make([]byte, batch*rb)
					for range rounds {
						ids := randomIDs(rng, batch, f.Rows())
						if err := r.ReadRows(context.Background(), ids, dst); err != nil {
							t.Error(err)
							return
						}
						for i, id := range ids {
							if !bytes.Equal(dst[i*rb:(i+1)*rb], data[id*rb:(id+1)*rb]) {
								t.Errorf("reader %d: row %d differs", g, id)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			s := f.Stats()
			if want := int64(readers * rounds * batch); s.Rows != want || s.BytesNeeded != want*rb {
				t.Errorf("stats rows=%d bytes_needed=%d, want %d and %d", s.Rows, s.BytesNeeded, want, want*rb)
			}
			if s.BytesRead < s.BytesNeeded*9/10 {
				t.Errorf("bytes_read=%d is far below bytes_needed=%d", s.BytesRead, s.BytesNeeded)
			}
		})
	}
}

// countdownCtx is a context whose Err turns to Canceled after n calls, so
// a read is cancelled while reads are in flight.
type countdownCtx struct {
	context.Context
	n int
}

func (c *countdownCtx) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestCancel cancels reads before they start and while they are in flight,
// and checks that the Reader is usable afterwards.
func TestCancel(t *testing.T) {
	dir := directDir(t)
	path, data := writeRandomFile(t, dir, "cancel.bin", 4<<20, 8)
	for _, b := range []Backend{BackendUring, BackendPread} {
		t.Run(string(b), func(t *testing.T) {
			f := open(t, path, b, Options{RowBytes: 512, QueueDepth: 4, MaxMergeBytes: 512})
			r := reader(t, f)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := r.ReadRange(ctx, 0, make([]byte, 1<<20)); err != context.Canceled {
				t.Fatalf("cancelled ReadRange: %v", err)
			}
			// 2048 single-block requests at depth 4: cancelled after a few.
			err := r.ReadRange(&countdownCtx{Context: context.Background(), n: 3}, 0, make([]byte, 1<<20))
			if err != context.Canceled {
				t.Fatalf("ReadRange cancelled in flight: %v", err)
			}
			if s := f.Stats(); s.Requests == 0 || s.Requests >= 2048 {
				t.Fatalf("cancel in flight issued %d of 2048 requests", s.Requests)
			}
			if n := r.Outstanding(); n != 0 {
				t.Fatalf("%d requests outstanding after a cancelled read", n)
			}
			dst := make([]byte, 3*512)
			if err := r.ReadRows(context.Background(), []int64{3, 1, 4}, dst); err != nil {
				t.Fatal(err)
			}
			checkRows(t, data, 512, []int64{3, 1, 4}, dst)
		})
	}
}

// TestFallbacks checks the backend choice and its log line when io_uring is
// unavailable, and the O_DIRECT refusal paths.
func TestFallbacks(t *testing.T) {
	dir := directDir(t)
	path, data := writeRandomFile(t, dir, "fallback.bin", 64<<10, 9)
	var q quiet
	f, err := OpenFile(path, Options{RowBytes: 64, Logger: q.log})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.lines) != 1 || !strings.Contains(q.lines[0], "backend "+string(f.Backend())) {
		t.Fatalf("auto open logged %q, want one line naming backend %s", q.lines, f.Backend())
	}
	f.Close()

	saved := probeUring
	t.Cleanup(func() { probeUring = saved })
	probeUring = func() error { return fmt.Errorf("ring setup: operation not permitted") }
	q = quiet{}
	f = open(t, path, BackendAuto, Options{RowBytes: 64, Logger: q.log})
	if f.Backend() != BackendPread {
		t.Fatalf("auto with io_uring unavailable chose %s", f.Backend())
	}
	if len(q.lines) != 1 || !strings.Contains(q.lines[0], "io_uring unavailable: ring setup: operation not permitted") {
		t.Fatalf("fallback logged %q", q.lines)
	}
	r := reader(t, f)
	dst := make([]byte, 64)
	if err := r.ReadRows(context.Background(), []int64{7}, dst); err != nil {
		t.Fatal(err)
	}
	checkRows(t, data, 64, []int64{7}, dst)
	_, err = OpenFile(path, Options{Backend: BackendUring, Logger: q.log})
	isErr(t, err, ErrBackendUnavailable, "explicit uring while unavailable")
	probeUring = saved

	savedOpen := openFile
	t.Cleanup(func() { openFile = savedOpen })
	openFile = func(p string, flags int, mode uint32) (int, error) {
		if flags&unix.O_DIRECT != 0 {
			return -1, unix.EINVAL
		}
		return savedOpen(p, flags, mode)
	}
	_, err = OpenFile(path, Options{Backend: BackendPread, Logger: q.log})
	isErr(t, err, ErrDirectIOUnsupported, "O_DIRECT refused")
	q = quiet{}
	f = open(t, path, BackendUring, Options{RowBytes: 64, AllowBuffered: true, Logger: q.log})
	if f.Direct() || !strings.Contains(q.lines[0], "buffered") {
		t.Fatalf("AllowBuffered: direct=%v, log %q", f.Direct(), q.lines)
	}
	r = reader(t, f)
	if err := r.ReadRows(context.Background(), []int64{1, 1000, 3}, make([]byte, 3*64)); err != nil {
		t.Fatal(err)
	}
}

// TestTmpfs reads a file on tmpfs (/dev/shm) where one exists: O_DIRECT
// either works or is refused with ErrDirectIOUnsupported, and
// AllowBuffered always works.
func TestTmpfs(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "storage-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path, data := writeRandomFile(t, dir, "shm.bin", 100_000, 10)
	f, err := OpenFile(path, Options{Backend: BackendPread, RowBytes: 100, Logger: func(string) {}})
	if err != nil {
		isErr(t, err, ErrDirectIOUnsupported, "tmpfs without AllowBuffered")
		t.Logf("tmpfs refuses O_DIRECT here: %v", err)
	} else {
		f.Close()
	}
	f = open(t, path, BackendPread, Options{RowBytes: 100, AllowBuffered: true})
	r := reader(t, f)
	dst := make([]byte, 200)
	if err := r.ReadRows(context.Background(), []int64{999, 0}, dst); err != nil {
		t.Fatal(err)
	}
	checkRows(t, data, 100, []int64{999, 0}, dst)
}

// TestCloseRules checks ErrClosed and ErrBusy around Close.
func TestCloseRules(t *testing.T) {
	dir := directDir(t)
	path, _ := writeRandomFile(t, dir, "close.bin", 8192, 11)
	for _, b := range backends {
		f, err := OpenFile(path, Options{Backend: b, RowBytes: 8, Logger: func(string) {}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := f.NewReader()
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Submit([]Request{{Off: 0, Dst: make([]byte, 10), Tag: 1}}); err != nil {
			t.Fatal(err)
		}
		isErr(t, f.Close(), ErrBusy, string(b)+": closing a File with an open Reader")
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		isErr(t, r.ReadRows(context.Background(), []int64{0}, make([]byte, 8)), ErrClosed, string(b)+": read after Close")
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		_, err = f.NewReader()
		isErr(t, err, ErrClosed, string(b)+": NewReader after Close")
	}
}

// TestFileShrinks truncates a file after it was opened: reads past the new
// end get a short read, are re-issued, and fail with io.ErrUnexpectedEOF
// instead of returning stale or zero bytes.
func TestFileShrinks(t *testing.T) {
	dir := directDir(t)
	path, data := writeRandomFile(t, dir, "shrink.bin", 64<<10, 13)
	for _, b := range []Backend{BackendUring, BackendPread} {
		t.Run(string(b), func(t *testing.T) {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			f := open(t, path, b, Options{RowBytes: 1000})
			r := reader(t, f)
			if err := os.Truncate(path, 40_000+300); err != nil {
				t.Fatal(err)
			}
			dst := make([]byte, 2000)
			// Row 40 spans [40000, 41000): the read of its blocks returns
			// 300 bytes, the re-issued rest returns 0.
			err := r.ReadRows(context.Background(), []int64{1, 40}, dst)
			isErr(t, err, io.ErrUnexpectedEOF, "row across the new end")
			err = r.ReadRows(context.Background(), []int64{50, 1}, dst)
			isErr(t, err, io.ErrUnexpectedEOF, "row beyond the new end")
			if s := f.Stats(); s.Retries == 0 {
				t.Errorf("the short read was not re-issued (retries=0)")
			}
			if err := r.ReadRows(context.Background(), []int64{39, 2}, dst); err != nil {
				t.Fatalf("rows before the new end: %v", err)
			}
			checkRows(t, data, 1000, []int64{39, 2}, dst)
		})
	}
}

// TestSteadyStateAllocs checks that reading does not allocate per request
// once a Reader is warm (ReadRows, and a Submit/Reap cycle).
func TestSteadyStateAllocs(t *testing.T) {
	dir := directDir(t)
	path, _ := writeRandomFile(t, dir, "allocs.bin", 1<<20, 14)
	for _, b := range []Backend{BackendUring, BackendPread} {
		t.Run(string(b), func(t *testing.T) {
			const rb = 512
			f := open(t, path, b, Options{RowBytes: rb, QueueDepth: 32})
			r := reader(t, f)
			ctx := context.Background()
			ids := []int64{9, 100, 3, 1500, 77, 78, 2000, 5}
			dst := make([]byte, len(ids)*rb)
			reqs := make([]Request, len(ids))
			done := make([]Completion, 0, len(ids))
			cycle := func() {
				if err := r.ReadRows(ctx, ids, dst); err != nil {
					t.Fatal(err)
				}
				for i, id := range ids {
					reqs[i] = f.RowRequest(id, dst[i*rb:], uint64(i))
				}
				if err := r.Submit(reqs); err != nil {
					t.Fatal(err)
				}
				var err error
				if done, err = r.Reap(ctx, done[:0], len(ids)); err != nil || len(done) != len(ids) {
					t.Fatalf("Reap: %d completions, %v", len(done), err)
				}
			}
			for range 10 {
				cycle()
			}
			if a := testing.AllocsPerRun(50, cycle); a > 0 {
				t.Errorf("%.1f allocations per ReadRows + Submit/Reap cycle of %d rows", a, len(ids))
			}
		})
	}
}

// TestPendingQueueBounded keeps the device busy with a producer that is
// always ahead of it and checks that the queue of waiting reads stays
// bounded by what was submitted and not yet issued.
func TestPendingQueueBounded(t *testing.T) {
	dir := directDir(t)
	path, data := writeRandomFile(t, dir, "pending.bin", 1<<20, 15)
	const rb, depth = 512, 4
	f := open(t, path, BackendUring, Options{RowBytes: rb, QueueDepth: depth, MaxMergeBytes: rb})
	r := reader(t, f)
	e := r.(*engine)
	rng := rand.New(rand.NewPCG(15, 15))
	bufs := make([][]byte, 64)
	ids := make([]int64, len(bufs))
	var done []Completion
	submit := func(slots []uint64) {
		var reqs []Request
		for _, slot := range slots {
			ids[slot] = rng.Int64N(f.Rows())
			bufs[slot] = make([]byte, rb)
			reqs = append(reqs, f.RowRequest(ids[slot], bufs[slot], slot))
		}
		if err := r.Submit(reqs); err != nil {
			t.Fatal(err)
		}
	}
	all := make([]uint64, len(bufs))
	for i := range all {
		all[i] = uint64(i)
	}
	submit(all)
	maxCap := 0
	for round := 0; round < 300; round++ {
		var err error
		if done, err = r.Reap(context.Background(), done[:0], 1); err != nil {
			t.Fatal(err)
		}
		var again []uint64
		for _, c := range done {
			if c.Err != nil {
				t.Fatal(c.Err)
			}
			if !bytes.Equal(bufs[c.Tag], data[ids[c.Tag]*rb:(ids[c.Tag]+1)*rb]) {
				t.Fatalf("tag %d: wrong bytes", c.Tag)
			}
			again = append(again, c.Tag)
		}
		submit(again) // refill the slots just reaped: always ~60 waiting
		e.mu.Lock()
		maxCap = max(maxCap, cap(e.pending))
		e.mu.Unlock()
	}
	if maxCap > 4*len(bufs) {
		t.Fatalf("pending queue grew to capacity %d with at most %d requests waiting", maxCap, len(bufs))
	}
	for r.Outstanding() > 0 {
		if _, err := r.Reap(context.Background(), nil, r.Outstanding()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadGranularity reads the same rows at the device's block, at 4 KiB
// blocks and with one separate 4 KiB read per row (Ginex's artifact):
// the bytes are right every time, and the device bytes are what each
// granularity implies.
func TestReadGranularity(t *testing.T) {
	dir := directDir(t)
	const rb, rows = 512, 256
	path, data := writeRandomFile(t, dir, "gran.bin", rb*rows, 21)
	// rows 0 and 1 share a 4 KiB block; row 9 is in the second block
	ids := []int64{0, 1, 9}
	for _, b := range []Backend{BackendUring, BackendPread} {
		for _, c := range []struct {
			name     string
			opts     Options
			wantRead int64
		}{
			{"device block", Options{RowBytes: rb, BlockSize: 512}, 3 * 512},
			{"4 KiB blocks", Options{RowBytes: rb, BlockSize: 4096}, 2 * 4096},
			{"4 KiB per row", Options{RowBytes: rb, BlockSize: 4096, SeparateReads: true}, 3 * 4096},
		} {
			t.Run(string(b)+"/"+c.name, func(t *testing.T) {
				f := open(t, path, b, c.opts)
				r := reader(t, f)
				dst := make([]byte, len(ids)*rb)
				if err := r.ReadRows(context.Background(), ids, dst); err != nil {
					t.Fatal(err)
				}
				checkRows(t, data, rb, ids, dst)
				if s := f.Stats(); s.BytesRead != c.wantRead || s.BytesNeeded != 3*rb {
					t.Fatalf("read %d bytes for %d needed, want %d for %d", s.BytesRead, s.BytesNeeded, c.wantRead, 3*rb)
				}
			})
		}
	}
}
