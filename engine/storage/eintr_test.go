package storage

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// signalAllThreads sends sig to every thread of this process (tgkill), so
// a thread sleeping in io_uring_enter receives it, as SIGCHLD from an exiting
// child would.
func signalAllThreads(sig unix.Signal) {
	pid := os.Getpid()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			unix.Tgkill(pid, tid, sig)
		}
	}
}

// TestSignalsDuringWaits reads while another goroutine floods every thread
// with SIGCHLD. Waits that return EINTR must be retried (Stats.Interrupts
// counts them) and every row must still be right.
func TestSignalsDuringWaits(t *testing.T) {
	dir := directDir(t)
	path, data := writeRandomFile(t, dir, "eintr.bin", 8<<20, 12)
	for _, b := range []Backend{BackendUring, BackendPread} {
		t.Run(string(b), func(t *testing.T) {
			const rb = 512
			f := open(t, path, b, Options{RowBytes: rb, QueueDepth: 64, MaxMergeBytes: rb})
			r := reader(t, f)
			stop := make(chan struct{})
			var sent atomic.Int64
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					signalAllThreads(unix.SIGCHLD)
					sent.Add(1)
					time.Sleep(20 * time.Microsecond)
				}
			}()
			rng := rand.New(rand.NewPCG(12, 12))
			dst := make([]byte, 256*rb)
			deadline := time.Now().Add(200 * time.Millisecond)
			for rounds := 0; rounds < 20 || time.Now().Before(deadline); rounds++ {
				ids := randomIDs(rng, 256, f.Rows())
				if err := r.ReadRows(context.Background(), ids, dst); err != nil {
					close(stop)
					wg.Wait()
					t.Fatalf("ReadRows under signals: %v", err)
				}
				checkRows(t, data, rb, ids, dst)
				if b == BackendUring && f.Stats().Interrupts > 0 && rounds >= 20 {
					break
				}
			}
			close(stop)
			wg.Wait()
			s := f.Stats()
			t.Logf("%d signal rounds sent, %d interrupted waits retried, %d requests", sent.Load(), s.Interrupts, s.Requests)
			if b == BackendUring && s.Interrupts == 0 {
				t.Errorf("no wait was interrupted by %d SIGCHLD rounds; the EINTR retry path was not exercised", sent.Load())
			}
		})
	}
}
