//go:build cgo

package cuda

// Pinned host staging for the trainer's input copy (docs/ARCHITECTURE.md
// "engine/cuda"): a copy from pageable Go memory (cuMemcpyHtoD) runs at
// the driver's bounce-buffer rate, a fraction of what the bus carries from
// page-locked memory. PutF32Staged instead cuts the rows into chunks and
// hands them round-robin to stagingSlots workers; each owns one
// page-locked slot (cuMemHostAlloc) and one stream, copies its chunk into
// the slot and queues the slot's host-to-device copy (cuMemcpyHtoDAsync)
// on its stream, so the host copies run in parallel and overlap the
// transfers. A worker writes its slot again only after its stream has
// finished (cuStreamSynchronize). The streams are created with
// CU_STREAM_DEFAULT, so their copies wait for the kernels already queued
// on the legacy default stream (the previous step's reads of the
// destination) and the kernels queued after wait for them.

import (
	"errors"
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
	stagingSlots     = 8
	stagingSlotBytes = 4 << 20
	// StagingBytes is the page-locked host memory a device's staging holds.
	StagingBytes = stagingSlots * stagingSlotBytes
)

// staging is a device's pinned slots and their streams.
type staging struct {
	slot    [stagingSlots]unsafe.Pointer
	stream  [stagingSlots]unsafe.Pointer
	pending [stagingSlots]bool
}

var stagingMu sync.Mutex

// staging returns the device's staging, allocating it on first use.
func (d *Device) staging() (*staging, error) {
	stagingMu.Lock()
	defer stagingMu.Unlock()
	if d.stage != nil {
		return d.stage, nil
	}
	s := &staging{}
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
	chunks := int((n + stagingSlotBytes - 1) / stagingSlotBytes)
	workers := min(stagingSlots, chunks, max(1, runtime.GOMAXPROCS(0)))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = d.stageChunks(s, w, workers, chunks, src, b.Ptr)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stageChunks is worker w's part of PutF32Staged: chunks w, w+workers, ...
// through slot w.
func (d *Device) stageChunks(s *staging, w, workers, chunks int, src []byte, dst uint64) error {
	n := int64(len(src))
	for k := w; k < chunks; k += workers {
		off := int64(k) * stagingSlotBytes
		c := min(n-off, stagingSlotBytes)
		if s.pending[w] {
			if err := d.drv.err("cuStreamSynchronize", cuStreamSync(d.drv, s.stream[w])); err != nil {
				return err
			}
			s.pending[w] = false
		}
		copy(unsafe.Slice((*byte)(s.slot[w]), c), src[off:off+c])
		if err := d.drv.err("cuMemcpyHtoDAsync", cuHtoDAsync(d.drv, dst+uint64(off), s.slot[w], c, s.stream[w])); err != nil {
			return err
		}
		s.pending[w] = true
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
