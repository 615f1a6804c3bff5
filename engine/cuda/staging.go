//go:build cgo

package cuda

// Pinned host staging for the trainer's input copy (docs/ARCHITECTURE.md
// "engine/cuda"): a copy from pageable Go memory (cuMemcpyHtoD) runs at
// the driver's bounce-buffer rate, a fraction of what the bus carries from
// page-locked memory. PutF32Staged instead cuts the rows into chunks,
// copies each into one of a few page-locked slots (cuMemHostAlloc) with
// several goroutines, and queues the slot's host-to-device copy
// (cuMemcpyHtoDAsync) on the slot's own stream, so the next chunk's host
// copy overlaps the previous chunks' transfers. A slot is written again
// only after its stream has finished (cuStreamSynchronize). The streams
// are created with CU_STREAM_DEFAULT, so their copies wait for the
// kernels already queued on the legacy default stream (the previous
// step's reads of the destination) and the kernels queued after wait for
// them.

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Staging sizes: stagingSlots page-locked slots of stagingSlotBytes each,
// allocated on the first staged copy and held until the process ends (the
// driver frees them with the context). They are host memory outside the Go
// heap, part of the model step the memory contract holds outside the host
// budget (docs/DESIGN.md §3).
const (
	stagingSlots     = 4
	stagingSlotBytes = 4 << 20
	// StagingBytes is the page-locked host memory a device's staging holds.
	StagingBytes = stagingSlots * stagingSlotBytes
)

// staging is a device's pinned slots and their streams.
type staging struct {
	slot    [stagingSlots]unsafe.Pointer
	stream  [stagingSlots]unsafe.Pointer
	pending [stagingSlots]bool
	copiers int
}

var stagingMu sync.Mutex

// staging returns the device's staging, allocating it on first use.
func (d *Device) staging() (*staging, error) {
	stagingMu.Lock()
	defer stagingMu.Unlock()
	if d.stage != nil {
		return d.stage, nil
	}
	s := &staging{copiers: max(1, min(runtime.GOMAXPROCS(0), 8))}
	for i := range s.slot {
		if err := d.drv.err("cuMemHostAlloc", cuHostAlloc(d.drv, &s.slot[i], stagingSlotBytes)); err != nil {
			s.free(d)
			return nil, err
		}
		if err := d.drv.err("cuStreamCreate", cuStream(d.drv, &s.stream[i])); err != nil {
			s.free(d)
			return nil, err
		}
	}
	d.stage = s
	return s, nil
}

func (s *staging) free(d *Device) {
	for i, p := range s.slot {
		if p != nil {
			cuHostFree(d.drv, p)
			s.slot[i] = nil
		}
	}
}

// PutF32Staged copies host floats to the start of b through the pinned
// staging slots (the copy is queued, not finished, when it returns: the
// kernels queued after it see the data; Sync waits for it).
func (d *Device) PutF32Staged(b Buf, h []float32) error {
	if len(h) == 0 {
		return nil
	}
	n := int64(len(h)) * 4
	if n > b.Bytes {
		return fmt.Errorf("cuda: %d floats into a %d-byte buffer", len(h), b.Bytes)
	}
	s, err := d.staging()
	if err != nil {
		return err
	}
	src := unsafe.Slice((*byte)(unsafe.Pointer(&h[0])), n)
	k := 0
	for off := int64(0); off < n; off += stagingSlotBytes {
		c := min(n-off, stagingSlotBytes)
		i := k % stagingSlots
		k++
		if s.pending[i] {
			if err := d.drv.err("cuStreamSynchronize", cuStreamSync(d.drv, s.stream[i])); err != nil {
				return err
			}
			s.pending[i] = false
		}
		dst := unsafe.Slice((*byte)(s.slot[i]), c)
		parallelCopy(dst, src[off:off+c], s.copiers)
		if err := d.drv.err("cuMemcpyHtoDAsync", cuHtoDAsync(d.drv, b.Ptr+uint64(off), s.slot[i], c, s.stream[i])); err != nil {
			return err
		}
		s.pending[i] = true
	}
	return nil
}

// SyncStaging waits for every staged copy queued so far.
func (d *Device) SyncStaging() error {
	s := d.stage
	if s == nil {
		return nil
	}
	for i := range s.stream {
		if s.pending[i] {
			if err := d.drv.err("cuStreamSynchronize", cuStreamSync(d.drv, s.stream[i])); err != nil {
				return err
			}
			s.pending[i] = false
		}
	}
	return nil
}

// parallelCopy copies src to dst (same length) with up to workers
// goroutines over pieces of at least 256 KiB.
func parallelCopy(dst, src []byte, workers int) {
	const minPiece = 256 << 10
	n := len(src)
	w := min(workers, max(1, n/minPiece))
	if w <= 1 {
		copy(dst, src)
		return
	}
	piece := (n + w - 1) / w
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += piece {
		hi := min(n, lo+piece)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
		}()
	}
	wg.Wait()
}
