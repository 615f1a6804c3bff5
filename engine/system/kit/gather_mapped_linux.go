package kit

/*
#include <stdint.h>
#include <string.h>

// oc_gather_rows copies rows ids[0..n) of a memory-mapped row-major table
// into dst. Page faults on the mapping happen here, on an OS thread that
// does not hold a Go scheduler slot, so many of them can be outstanding at
// once, like PyTorch's gather threads over a numpy memmap.
static void oc_gather_rows(const char *base, int64_t row_bytes, const int64_t *ids, int64_t n, char *dst) {
	for (int64_t i = 0; i < n; i++) {
		memcpy(dst + i * row_bytes, base + ids[i] * row_bytes, (size_t)row_bytes);
	}
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"outcore/internal/osutil"
)

// GatherMapped copies rows ids of a mapped table (rowBytes each) into dst
// (len(ids)*rowBytes bytes) with threads goroutines, each copying a
// contiguous share of ids inside one cgo call. A goroutine blocked in a cgo
// call gives up its scheduler slot, so threads page faults can be in flight
// even when threads exceeds GOMAXPROCS: the "I/O threads more than twice
// the core count" of PyG+ (Ginex §5.1, GNNDrive §5).
func GatherMapped(m *osutil.Mapping, rowBytes int64, ids []int64, dst []byte, threads int) error {
	if len(ids) == 0 {
		return nil
	}
	if int64(len(dst)) < int64(len(ids))*rowBytes {
		return fmt.Errorf("gather: destination of %d bytes for %d rows of %d", len(dst), len(ids), rowBytes)
	}
	rows := int64(len(m.Data)) / rowBytes
	for _, v := range ids {
		if v < 0 || v >= rows {
			return fmt.Errorf("gather: row %d outside [0,%d) of %s", v, rows, m.Path)
		}
	}
	threads = max(1, min(threads, len(ids)))
	base := (*C.char)(unsafe.Pointer(&m.Data[0]))
	var wg sync.WaitGroup
	for t := 0; t < threads; t++ {
		lo, hi := t*len(ids)/threads, (t+1)*len(ids)/threads
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			C.oc_gather_rows(base, C.int64_t(rowBytes), (*C.int64_t)(unsafe.Pointer(&ids[lo])), C.int64_t(hi-lo),
				(*C.char)(unsafe.Pointer(&dst[int64(lo)*rowBytes])))
		}(lo, hi)
	}
	wg.Wait()
	return nil
}
