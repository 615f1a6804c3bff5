package osutil

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestRunQueueWait: more runnable threads than cores wait on the run
// queue, and the process's sum grows. GOMAXPROCS is raised so that the
// spinning goroutines run on as many OS threads at once (with GOMAXPROCS
// = NumCPU they would wait for a P in Go's own queue, which the kernel
// does not see).
func TestRunQueueWait(t *testing.T) {
	w0, err := RunQueueWait()
	if err != nil {
		t.Skipf("no schedstat on this kernel: %v", err)
	}
	// 2 × NumCPU threads spinning for 100 ms of wall time each cannot all
	// run at once: together they wait at least ~NumCPU × 100 ms.
	n := 2 * runtime.NumCPU()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n + 1))
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
			}
		}()
	}
	wg.Wait()
	w1, err := RunQueueWait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("run-queue wait %v → %v with %d spinning threads on %d cores", w0, w1, n, runtime.NumCPU())
	if w1 <= w0 {
		t.Errorf("run-queue wait %v → %v: %d threads spinning on %d cores waited no time", w0, w1, n, runtime.NumCPU())
	}
}
