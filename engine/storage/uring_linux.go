package storage

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"github.com/pawelgaczynski/giouring"
)

// The io_uring backend: one ring per Reader, O_DIRECT reads into slots of a
// page-aligned arena that lives until the Reader closes (after its last
// completion), batched submission, bulk reaping.

// uringSetupFlags are tried first when creating a ring; COOP_TASKRUN and
// TASKRUN_FLAG avoid interrupting the task to post completions (the reaper
// posts them when it enters the kernel). Kernels before 5.19 reject them
// and get a plain ring.
const uringSetupFlags = giouring.SetupCoopTaskrun | giouring.SetupTaskrunFlag

// uringSingleIssuerFlags are Options.SingleIssuer's ring (fio's setup):
// completions wait in the ring's deferred list until the issuing thread
// asks for events, and a wait for n completions wakes after n, not after
// the task work of the whole queue has run.
const uringSingleIssuerFlags = giouring.SetupCoopTaskrun | giouring.SetupTaskrunFlag | giouring.SetupSingleIssuer | giouring.SetupDeferTaskrun

// probeUring reports why io_uring cannot be used here, or nil. Rings can
// fail to set up in containers (ENOSYS from seccomp, EPERM from
// kernel.io_uring_disabled). Tests replace it to exercise the fallback.
var probeUring = sync.OnceValue(func() error {
	ring, err := newRing(2, uringSetupFlags)
	if err != nil {
		return fmt.Errorf("ring setup: %w", err)
	}
	defer ring.QueueExit()
	probe, err := ring.GetProbeRing()
	if err != nil {
		return fmt.Errorf("probe opcodes: %w", err)
	}
	if !probe.IsSupported(giouring.OpRead) {
		return errors.New("kernel lacks IORING_OP_READ (needs Linux 5.6+)")
	}
	return nil
})

// newRing sets up a ring with entries submission slots and flags, else
// (a kernel that rejects them) the default flags, else a plain ring.
func newRing(entries uint32, flags uint32) (*giouring.Ring, error) {
	ring := giouring.NewRing()
	err := ring.QueueInit(entries, flags)
	if errors.Is(err, syscall.EINVAL) && flags != uringSetupFlags {
		ring = giouring.NewRing()
		err = ring.QueueInit(entries, uringSetupFlags)
	}
	if errors.Is(err, syscall.EINVAL) {
		ring = giouring.NewRing()
		err = ring.QueueInit(entries, 0)
	}
	if err != nil {
		return nil, err
	}
	return ring, nil
}

// uringDev is the device of a uring Reader.
type uringDev struct {
	ring      *giouring.Ring
	fd        int
	sqeFlags  uint8
	fixedBufs bool
	cqes      []*giouring.CompletionQueueEvent
}

// newUringReader creates a Reader with its own ring of QueueDepth entries.
func newUringReader(f *File) (Reader, error) {
	depth := f.opts.QueueDepth
	slot := slotStride(f)
	arena, err := allocArena(depth * slot)
	if err != nil {
		return nil, err
	}
	flags := uint32(uringSetupFlags)
	if f.opts.SingleIssuer {
		flags = uringSingleIssuerFlags
	}
	ring, err := newRing(uint32(depth), flags)
	if err != nil {
		freeArena(arena)
		return nil, fmt.Errorf("io_uring setup (%d entries): %w", depth, err)
	}
	d := &uringDev{ring: ring, fd: f.fd, cqes: make([]*giouring.CompletionQueueEvent, 2*depth)}
	fail := func(what string, err error) (Reader, error) {
		ring.QueueExit()
		freeArena(arena)
		return nil, fmt.Errorf("io_uring %s: %w", what, err)
	}
	if f.opts.FixedFile {
		if _, err := ring.RegisterFiles([]int{f.fd}); err != nil {
			return fail("register file", err)
		}
		d.fd, d.sqeFlags = 0, giouring.SqeFixedFile
	}
	if f.opts.FixedBuffers {
		iov := []syscall.Iovec{{Base: &arena[0]}}
		iov[0].SetLen(len(arena))
		if _, err := ring.RegisterBuffers(iov); err != nil {
			return fail("register buffers", err)
		}
		d.fixedBufs = true
	}
	e := newEngine(f, depth, slot, arena)
	e.dev = d
	return e, nil
}

// slotStride is the size of one buffer slot: the largest request rounded up
// to the buffer alignment.
func slotStride(f *File) int {
	seg := f.maxSeg()
	align := max(f.blockSize, f.memAlign)
	return int((seg + align - 1) &^ (align - 1))
}

// issue implements device.
func (d *uringDev) issue(segs []*segment) error {
	for _, s := range segs {
		sqe := d.ring.GetSQE()
		if sqe == nil {
			// Cannot happen while in-flight reads <= ring entries; submit
			// and retry once to be safe.
			if err := d.submit(); err != nil {
				return err
			}
			if sqe = d.ring.GetSQE(); sqe == nil {
				return errors.New("io_uring submission queue full")
			}
		}
		buf := s.buf[s.done:]
		addr := uintptr(unsafe.Pointer(&buf[0]))
		if d.fixedBufs {
			sqe.PrepareReadFixed(d.fd, addr, uint32(len(buf)), uint64(s.off+int64(s.done)), 0)
		} else {
			sqe.PrepareRead(d.fd, addr, uint32(len(buf)), uint64(s.off+int64(s.done)))
		}
		sqe.Flags |= d.sqeFlags
		sqe.UserData = uint64(s.slot)
	}
	return d.submit()
}

// submit hands queued SQEs to the kernel, retrying EINTR.
func (d *uringDev) submit() error {
	for {
		_, err := d.ring.Submit()
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return err
	}
}

// poll implements device.
func (d *uringDev) poll(out []doneRec) []doneRec {
	n := d.ring.PeekBatchCQE(d.cqes)
	for _, c := range d.cqes[:n] {
		out = append(out, doneRec{slot: int32(c.UserData), res: c.Res})
	}
	if n > 0 {
		d.ring.CQAdvance(n)
	}
	return out
}

// wait implements device: WaitCQE returns EINTR when a signal (SIGCHLD,
// SIGURG, ...) arrives while the thread sleeps in io_uring_enter; retry.
func (d *uringDev) wait() (int, error) {
	intr := 0
	for {
		_, err := d.ring.WaitCQENr(1)
		if errors.Is(err, syscall.EINTR) {
			intr++
			continue
		}
		return intr, err
	}
}

// close implements device.
func (d *uringDev) close() error {
	d.ring.QueueExit()
	return nil
}
