package storage

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestSingleIssuerStream keeps requests in flight on a fio-style ring
// (Options.SingleIssuer: SINGLE_ISSUER | DEFER_TASKRUN) from one locked OS
// thread, as `outcore bench device` does, and checks every byte; then
// ReadRows on the same Reader. Completions on such a ring are posted only
// when the owning thread asks for them, so a reaper that never asked
// would hang here instead of finishing.
func TestSingleIssuerStream(t *testing.T) {
	dir := directDir(t)
	path, data := writeRandomFile(t, dir, "single.bin", 1<<20+77, 9)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const rb, depth, total = 512, 16, 2000
	f := open(t, path, BackendUring, Options{RowBytes: rb, QueueDepth: depth, SingleIssuer: true, SeparateReads: true})
	r, err := f.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 9))
	ids := make([]int64, depth)
	buf := make([]byte, depth*rb)
	reqs := make([]Request, 0, depth)
	for slot := range depth {
		ids[slot] = rng.Int64N(f.Rows())
		reqs = append(reqs, f.RowRequest(ids[slot], buf[slot*rb:], uint64(slot)))
	}
	if err := r.Submit(reqs); err != nil {
		t.Fatal(err)
	}
	var done []Completion
	n := 0
	for n < total {
		if done, err = r.Reap(ctx, done[:0], 1); err != nil {
			t.Fatal(err)
		}
		reqs = reqs[:0]
		for _, c := range done {
			if c.Err != nil {
				t.Fatal(c.Err)
			}
			slot := int64(c.Tag)
			if got, want := buf[slot*rb:(slot+1)*rb], data[ids[slot]*rb:(ids[slot]+1)*rb]; !bytes.Equal(got, want) {
				t.Fatalf("completion %d (row %d): bytes differ from the file", n, ids[slot])
			}
			n++
			ids[slot] = rng.Int64N(f.Rows())
			reqs = append(reqs, f.RowRequest(ids[slot], buf[slot*rb:], c.Tag))
		}
		if err := r.Submit(reqs); err != nil {
			t.Fatal(err)
		}
	}
	for r.Outstanding() > 0 {
		if done, err = r.Reap(ctx, done[:0], r.Outstanding()); err != nil {
			t.Fatal(err)
		}
	}
	rows := randomIDs(rng, 300, f.Rows())
	dst := make([]byte, len(rows)*rb)
	if err := r.ReadRows(ctx, rows, dst); err != nil {
		t.Fatal(err)
	}
	checkRows(t, data, rb, rows, dst)
	if s := f.Stats(); s.Requests < total+300 {
		t.Errorf("%d device requests for %d separate reads", s.Requests, total+300)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}
