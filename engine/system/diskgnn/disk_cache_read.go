package diskgnn

// DiskGNN §6 "I/O operations": "For random disk accesses to fetch
// features in disk cache, DiskGNN leverages io_uring and uses 4 threads
// with each thread holding a ring". A batch's disk-cache rows (ascending)
// are split into contiguous shares, one per io_uring reader; engine/storage
// reads every covering block of a share once and merges adjacent blocks
// into one request (§4, Fig. 3 "Merge IO Requests").

import (
	"context"
	"sync"
	"time"

	"outcore/engine/metrics"
)

// readDiskRows reads rows of the disk-cache file into dst (one row
// after the other), a share per reader of fl.disk, in calls of at most
// diskCallRows rows: the last share on the calling
// goroutine (the loader, already timed), the others each on a goroutine
// that is an extract worker of the epoch since t1.
func (fl *featureLoader) readDiskRows(ctx context.Context, t1 time.Time, rows []int64, dst []byte) error {
	rb := fl.rowBytes
	parts := min(len(fl.disk), len(rows))
	per := (len(rows) + parts - 1) / parts
	var wg sync.WaitGroup
	errs := make([]error, parts)
	for k := 0; k < parts; k++ {
		lo, hi := k*per, min((k+1)*per, len(rows))
		if lo >= hi {
			break
		}
		read := func(k, lo, hi int) {
			// calls of at most diskCallRows rows: the reader keeps
			// bookkeeping for its largest call (sizing.go)
			for a := lo; a < hi && errs[k] == nil; a += diskCallRows {
				b := min(a+diskCallRows, hi)
				errs[k] = fl.disk[k].ReadRows(ctx, rows[a:b], dst[int64(a)*rb:int64(b)*rb])
			}
		}
		if k == parts-1 {
			read(k, lo, hi) // on the loader's own (already timed) thread
			continue
		}
		wg.Add(1)
		go func(k, lo, hi int) {
			defer wg.Done()
			w := fl.ep.StartWorkerSince(metrics.WorkExtract, t1) // an io_uring thread of the loader
			read(k, lo, hi)
			w.Stop()
		}(k, lo, hi)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
