package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Benchmarks read random rows from a file: $OUTCORE_BENCH_FILE when set
// (e.g. the 8 GiB file of docs/benchmarks/storage.md), else a 256 MiB file
// written once per run in a directory that accepts O_DIRECT. Run with
//
//	go test -run '^$' -bench . -benchtime 3s ./engine/storage

var (
	benchOnce sync.Once
	benchPath string
	benchDir  string
	benchErr  error
)

// TestMain removes the benchmark file this process created.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchFile returns the file benchmarks read.
func benchFile(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		if p := os.Getenv("OUTCORE_BENCH_FILE"); p != "" {
			benchPath = p
			return
		}
		var err error
		for _, parent := range []string{os.TempDir(), "."} {
			var d string
			if d, err = os.MkdirTemp(parent, ".storage-bench-"); err != nil {
				continue
			}
			if err = directWorks(d); err != nil {
				os.RemoveAll(d)
				continue
			}
			benchDir = d
			break
		}
		if benchDir == "" {
			benchErr = fmt.Errorf("no directory accepts O_DIRECT: %v", err)
			return
		}
		benchPath = filepath.Join(benchDir, "bench.bin")
		fh, err := os.Create(benchPath)
		if err != nil {
			benchErr = err
			return
		}
		defer fh.Close()
		chunk := make([]byte, 4<<20)
		rng := rand.New(rand.NewPCG(1, 2))
		for range 64 {
			for i := range chunk {
				chunk[i] = byte(rng.Uint32())
			}
			if _, benchErr = fh.Write(chunk); benchErr != nil {
				return
			}
		}
		benchErr = fh.Sync()
	})
	if benchErr != nil {
		b.Skipf("benchmark file: %v", benchErr)
	}
	return benchPath
}

// evict drops the file's pages from the page cache so mmap starts cold.
func evict(b *testing.B, path string) {
	fd, err := unix.Open(path, unix.O_RDONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
}

// reportStats adds the File's counters as benchmark metrics.
func reportStats(b *testing.B, f *File, rows int64, elapsed time.Duration) {
	s := f.Stats()
	b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(s.Latency.Percentile(0.5))/1e3, "p50-µs")
	b.ReportMetric(float64(s.Latency.Percentile(0.99))/1e3, "p99-µs")
	b.ReportMetric(s.Amplification(), "read-amp")
}

// BenchmarkReadRows gathers batches of 1000 random rows with ReadRows, the
// way a trainer gathers a mini-batch's features.
func BenchmarkReadRows(b *testing.B) {
	path := benchFile(b)
	for _, be := range backends {
		for _, rb := range []int64{512, 4096} {
			b.Run(fmt.Sprintf("%s/row=%d/batch=1000", be, rb), func(b *testing.B) {
				if be == BackendMmap {
					evict(b, path)
				}
				f := open(b, path, be, Options{RowBytes: rb})
				r := reader(b, f)
				rng := rand.New(rand.NewPCG(7, 7))
				ids := make([]int64, 1000)
				dst := make([]byte, int64(len(ids))*rb)
				b.SetBytes(int64(len(ids)) * rb)
				b.ResetTimer()
				t0 := time.Now()
				for b.Loop() {
					for i := range ids {
						ids[i] = rng.Int64N(f.Rows())
					}
					if err := r.ReadRows(context.Background(), ids, dst); err != nil {
						b.Fatal(err)
					}
				}
				reportStats(b, f, int64(b.N)*int64(len(ids)), time.Since(t0))
			})
		}
	}
}

// BenchmarkStream keeps 128 single-row reads in flight with Submit/Reap
// (the fio-like pattern of `outcore bench io`); one op is one row.
func BenchmarkStream(b *testing.B) {
	path := benchFile(b)
	for _, be := range []Backend{BackendUring, BackendPread} {
		b.Run(fmt.Sprintf("%s/row=512/depth=128", be), func(b *testing.B) {
			const rb, depth = 512, 128
			f := open(b, path, be, Options{RowBytes: rb, QueueDepth: depth})
			r := reader(b, f)
			rng := rand.New(rand.NewPCG(8, 8))
			buf := make([]byte, depth*rb)
			reqs := make([]Request, 0, depth)
			var done []Completion
			b.SetBytes(rb)
			b.ResetTimer()
			t0 := time.Now()
			issued := 0
			for slot := 0; slot < depth && issued < b.N; slot++ {
				reqs = append(reqs, f.RowRequest(rng.Int64N(f.Rows()), buf[slot*rb:], uint64(slot)))
				issued++
			}
			if err := r.Submit(reqs); err != nil {
				b.Fatal(err)
			}
			for r.Outstanding() > 0 {
				var err error
				if done, err = r.Reap(context.Background(), done[:0], 1); err != nil {
					b.Fatal(err)
				}
				reqs = reqs[:0]
				for _, c := range done {
					if c.Err != nil {
						b.Fatal(c.Err)
					}
					if issued < b.N {
						reqs = append(reqs, f.RowRequest(rng.Int64N(f.Rows()), buf[int(c.Tag)*rb:], c.Tag))
						issued++
					}
				}
				if err := r.Submit(reqs); err != nil {
					b.Fatal(err)
				}
			}
			reportStats(b, f, int64(b.N), time.Since(t0))
		})
	}
}

// BenchmarkMerge reads dense sorted id sets (1000 of 4000 consecutive
// 512-byte rows, so neighbours are often adjacent) with and without
// merging adjacent blocks into one request.
func BenchmarkMerge(b *testing.B) {
	path := benchFile(b)
	for _, be := range []Backend{BackendUring, BackendPread} {
		for _, merge := range []int64{512, 4 << 10, 64 << 10, 256 << 10} {
			b.Run(fmt.Sprintf("%s/merge=%d", be, merge), func(b *testing.B) {
				const rb = 512
				f := open(b, path, be, Options{RowBytes: rb, MaxMergeBytes: merge})
				r := reader(b, f)
				rng := rand.New(rand.NewPCG(9, 9))
				ids := make([]int64, 1000)
				dst := make([]byte, len(ids)*rb)
				b.SetBytes(int64(len(ids)) * rb)
				b.ResetTimer()
				t0 := time.Now()
				for b.Loop() {
					base := rng.Int64N(f.Rows() - 4000)
					perm := rng.Perm(4000)[:len(ids)]
					for i, p := range perm {
						ids[i] = base + int64(p)
					}
					slices.Sort(ids)
					if err := r.ReadRows(context.Background(), ids, dst); err != nil {
						b.Fatal(err)
					}
				}
				reportStats(b, f, int64(b.N)*int64(len(ids)), time.Since(t0))
				s := f.Stats()
				b.ReportMetric(float64(s.Requests)/float64(b.N), "requests/op")
			})
		}
	}
}

// BenchmarkPlan measures planning 1000 random 512-byte rows.
func BenchmarkPlan(b *testing.B) {
	p := planner{bs: 512, maxSeg: 64 << 10}
	rng := rand.New(rand.NewPCG(10, 10))
	dst := make([]byte, 1000*512)
	for b.Loop() {
		p.items = p.items[:0]
		for i := range 1000 {
			p.items = append(p.items, item{off: rng.Int64N(1<<24) * 512, dst: dst[i*512 : (i+1)*512]})
		}
		p.plan()
	}
}
