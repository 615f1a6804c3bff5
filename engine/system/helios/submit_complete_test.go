package helios

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"outcore/engine/storage"
	"outcore/engine/system/systest"
)

const testRow = 512

// rowFile writes rows rows of testRow bytes (row i filled from i) in a
// directory on disk and opens it with rings of depth depth.
func rowFile(t *testing.T, rows, depth int) (*storage.File, []byte) {
	t.Helper()
	dir := systest.DiskDir(t)
	data := make([]byte, rows*testRow)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	p := filepath.Join(dir, "features.bin")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := storage.OpenFile(p, storage.Options{RowBytes: testRow, QueueDepth: depth, MaxMergeBytes: testRow, AllowBuffered: true, Logger: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, data
}

// rowReads returns one request per id into dst (row i of dst for ids[i]).
func rowReads(f *storage.File, ids []int64, dst []byte) []storage.Request {
	reqs := make([]storage.Request, len(ids))
	for i, v := range ids {
		reqs[i] = f.RowRequest(v, dst[i*testRow:(i+1)*testRow], 0)
	}
	return reqs
}

func checkRows(t *testing.T, data []byte, ids []int64, dst []byte) {
	t.Helper()
	for i, v := range ids {
		if !bytes.Equal(dst[i*testRow:(i+1)*testRow], data[v*testRow:(v+1)*testRow]) {
			t.Fatalf("row %d (node %d) differs from the file", i, v)
		}
	}
}

func randomIDs(r *rand.Rand, n, rows int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(r.IntN(rows))
	}
	return ids
}

// Submission does not depend on completion: with no completion path
// running, Submit returns with every read outstanding, and a second job's
// submission proceeds while the first's reads are in flight.
func TestSubmitDoesNotWaitForCompletion(t *testing.T) {
	f, data := rowFile(t, 2000, 4)
	s, err := NewIOStack(f, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 1))
	idsA, idsB := randomIDs(r, 300, 2000), randomIDs(r, 50, 2000)
	dstA, dstB := make([]byte, len(idsA)*testRow), make([]byte, len(idsB)*testRow)
	a, b := s.NewJob(), s.NewJob()
	if err := s.Submit(a, rowReads(f, idsA, dstA)); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(b, rowReads(f, idsB, dstB)); err != nil {
		t.Fatal(err)
	}
	s.Seal(a)
	s.Seal(b)
	st := s.Stats()
	if st.Submitted != 350 || st.Completed != 0 || st.SubmitCalls != 2 || st.Overlapped != 1 {
		t.Fatalf("before the completion path runs: %+v", st)
	}
	select {
	case <-a.Done():
		t.Fatal("job done with no completion handled")
	default:
	}
	s.Start(context.Background())
	for _, j := range []*Job{a, b} {
		if err := s.Wait(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
	checkRows(t, data, idsA, dstA)
	checkRows(t, data, idsB, dstB)
	if st := s.Stats(); st.Completed != 350 {
		t.Fatalf("after: %+v", st)
	}
}

// A batch's I/O completes while another batch's job is still open: jobs
// do not wait for one another. Hops of one job interleave with other jobs.
func TestJobsCompleteIndependently(t *testing.T) {
	f, data := rowFile(t, 4000, 8)
	s, err := NewIOStack(f, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Start(context.Background())
	r := rand.New(rand.NewPCG(2, 2))
	hop0, hop1 := randomIDs(r, 100, 4000), randomIDs(r, 700, 4000)
	other := randomIDs(r, 40, 4000)
	dst0, dst1, dstO := make([]byte, len(hop0)*testRow), make([]byte, len(hop1)*testRow), make([]byte, len(other)*testRow)
	a := s.NewJob()
	if err := s.Submit(a, rowReads(f, hop0, dst0)); err != nil {
		t.Fatal(err)
	}
	b := s.NewJob()
	if err := s.Submit(b, rowReads(f, other, dstO)); err != nil {
		t.Fatal(err)
	}
	s.Seal(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Wait(ctx, b); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Done():
		t.Fatal("job a done before it was sealed")
	default:
	}
	checkRows(t, data, other, dstO)
	if err := s.Submit(a, rowReads(f, hop1, dst1)); err != nil {
		t.Fatal(err)
	}
	s.Seal(a)
	if err := s.Wait(ctx, a); err != nil {
		t.Fatal(err)
	}
	checkRows(t, data, hop0, dst0)
	checkRows(t, data, hop1, dst1)
	if a.Reads() != 800 {
		t.Fatalf("job a: %d reads", a.Reads())
	}
}

func TestManySubmitters(t *testing.T) {
	f, data := rowFile(t, 3000, 16)
	s, err := NewIOStack(f, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Start(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 3))
			for k := 0; k < 15; k++ {
				ids := randomIDs(r, 1+r.IntN(400), 3000)
				dst := make([]byte, len(ids)*testRow)
				j := s.NewJob()
				// two hops
				h := len(ids) / 2
				if err := s.Submit(j, rowReads(f, ids[:h], dst[:h*testRow])); err != nil {
					errs <- err
					return
				}
				if err := s.Submit(j, rowReads(f, ids[h:], dst[h*testRow:])); err != nil {
					errs <- err
					return
				}
				s.Seal(j)
				if err := s.Wait(context.Background(), j); err != nil {
					errs <- err
					return
				}
				for i, v := range ids {
					if !bytes.Equal(dst[i*testRow:(i+1)*testRow], data[v*testRow:(v+1)*testRow]) {
						errs <- fmt.Errorf("submitter %d, job %d: row of node %d differs from the file", g, k, v)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Completed != st.Submitted || st.Submitted == 0 {
		t.Fatalf("%+v", st)
	}
}

func TestSubmitBadRequest(t *testing.T) {
	f, _ := rowFile(t, 10, 4)
	s, err := NewIOStack(f, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Start(context.Background())
	j := s.NewJob()
	bad := []storage.Request{{Off: 1 << 30, Dst: make([]byte, testRow)}}
	if err := s.Submit(j, bad); err == nil {
		t.Fatal("read past the end submitted")
	}
	s.Seal(j)
	if err := s.Wait(context.Background(), j); err == nil {
		t.Fatal("job with a failed submission reports no error")
	}
	if _, err := NewIOStack(f, 0); err == nil {
		t.Fatal("zero rings accepted")
	}
}
