package kit

/*
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>

// oc_thread_inblock is the calling thread's device reads so far, in
// 512-byte units (its share of /proc/self/io read_bytes).
static long oc_thread_inblock(void) {
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0) return 0;
	return ru.ru_inblock;
}

// oc_gather_rows copies rows ids[0..n) of a memory-mapped row-major table
// into dst. Page faults on the mapping happen here, on an OS thread that
// does not hold a Go scheduler slot, so many of them can be outstanding at
// once, like PyTorch's gather threads over a numpy memmap. Rows with
// check[i] set (check may be NULL) are copied between two readings of the
// thread's device reads; it returns how many of them read from the device.
static int64_t oc_gather_rows(const char *base, int64_t row_bytes, const int64_t *ids, int64_t n, char *dst, const uint8_t *check) {
	int64_t from_device = 0;
	for (int64_t i = 0; i < n; i++) {
		if (check != NULL && check[i]) {
			long before = oc_thread_inblock();
			memcpy(dst + i * row_bytes, base + ids[i] * row_bytes, (size_t)row_bytes);
			if (oc_thread_inblock() > before) from_device++;
			continue;
		}
		memcpy(dst + i * row_bytes, base + ids[i] * row_bytes, (size_t)row_bytes);
	}
	return from_device;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"time"
	"unsafe"

	"outcore/engine/metrics"
	"outcore/internal/osutil"
)

// MappedGather is what one GatherMapped call measured (DESIGN §5).
type MappedGather struct {
	// DeviceBytes is what the gather threads read from the device while
	// they copied: the page faults on the mapping, exact (per-thread read
	// counters around each thread's copies).
	DeviceBytes int64
	// Faults are the threads' major page faults on the mapping, which
	// read DeviceBytes (ReadAccount.AddFaults).
	Faults int64
	// DeviceRows is the rows marked in check whose copy read from the
	// device (0 without check).
	DeviceRows int64
	// Busy and Wait are summed over the threads: their CPU time, and the
	// rest of their wall time from the start of the call (page faults
	// waiting for the device, waiting for a core or to be scheduled).
	Busy, Wait time.Duration
}

// GatherMapped copies rows ids of a mapped table (rowBytes each) into dst
// (len(ids)*rowBytes bytes) with threads goroutines, each copying a
// contiguous share of ids inside one cgo call. A goroutine blocked in a cgo
// call gives up its scheduler slot, so threads page faults can be in flight
// even when threads exceeds GOMAXPROCS: the "I/O threads more than twice
// the core count" of PyG+ (Ginex §5.1, GNNDrive §5).
//
// Each goroutine is locked to its thread for the call and measured
// (metrics.ThreadMeter). Rows with check[i] set (check nil, or as long as
// ids) are copied one at a time between readings of the thread's device
// reads, which tells the rows that came from the device; pass the rows
// that were not resident before the call (a resident row needs no check).
func GatherMapped(m *osutil.Mapping, rowBytes int64, ids []int64, dst []byte, threads int, check []bool) (MappedGather, error) {
	var out MappedGather
	if len(ids) == 0 {
		return out, nil
	}
	if int64(len(dst)) < int64(len(ids))*rowBytes {
		return out, fmt.Errorf("gather: destination of %d bytes for %d rows of %d", len(dst), len(ids), rowBytes)
	}
	if check != nil && len(check) != len(ids) {
		return out, fmt.Errorf("gather: check has %d entries for %d rows", len(check), len(ids))
	}
	rows := int64(len(m.Data)) / rowBytes
	for _, v := range ids {
		if v < 0 || v >= rows {
			return out, fmt.Errorf("gather: row %d outside [0,%d) of %s", v, rows, m.Path)
		}
	}
	threads = max(1, min(threads, len(ids)))
	base := (*C.char)(unsafe.Pointer(&m.Data[0]))
	var wg sync.WaitGroup
	var mu sync.Mutex
	t0 := time.Now() // a thread's wall time counts from here: waiting to run is wait
	for t := 0; t < threads; t++ {
		lo, hi := t*len(ids)/threads, (t+1)*len(ids)/threads
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			var chk *C.uint8_t
			if check != nil {
				chk = (*C.uint8_t)(unsafe.Pointer(&check[lo]))
			}
			meter := metrics.StartThreadMeterSince(t0)
			dev := C.oc_gather_rows(base, C.int64_t(rowBytes), (*C.int64_t)(unsafe.Pointer(&ids[lo])), C.int64_t(hi-lo),
				(*C.char)(unsafe.Pointer(&dst[int64(lo)*rowBytes])), chk)
			read, cpu, wall := meter.StopMapped()
			mu.Lock()
			out.DeviceBytes += read.Bytes
			out.Faults += read.Faults
			out.DeviceRows += int64(dev)
			out.Busy += cpu
			out.Wait += wall - cpu
			mu.Unlock()
		}(lo, hi)
	}
	wg.Wait()
	return out, nil
}

// Mapped is the gather's device reads as page faults (ReadAccount.AddFaults).
func (g MappedGather) Mapped() metrics.MappedReads {
	return metrics.MappedReads{Bytes: g.DeviceBytes, Faults: g.Faults}
}
