package storage

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// The pread backend: a File runs a pool of worker goroutines that each do
// blocking pread(2) calls (O_DIRECT) into the slot buffers of the Readers
// that queued them; every Reader gets its finished reads back on its own
// channel. The asynchronous Reader interface is emulated on top.

// preadJob is one read for a worker.
type preadJob struct {
	fd   int
	buf  []byte
	off  int64
	slot int32
	done chan<- doneRec
}

// preadPool is a File's set of pread workers.
type preadPool struct {
	jobs chan preadJob
	wg   sync.WaitGroup
}

// newPreadPool starts workers goroutines.
func newPreadPool(workers, depth int) *preadPool {
	p := &preadPool{jobs: make(chan preadJob, max(workers, depth))}
	p.wg.Add(workers)
	for range workers {
		go p.work()
	}
	return p
}

// work serves jobs until the pool stops.
func (p *preadPool) work() {
	defer p.wg.Done()
	for j := range p.jobs {
		var n int
		var err error
		for {
			n, err = unix.Pread(j.fd, j.buf, j.off)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		res := int32(n)
		if err != nil {
			var errno unix.Errno
			if !errors.As(err, &errno) {
				errno = unix.EIO
			}
			res = -int32(errno)
		}
		j.done <- doneRec{slot: j.slot, res: res}
	}
}

// stop ends the workers once queued jobs are done.
func (p *preadPool) stop() {
	close(p.jobs)
	p.wg.Wait()
}

// preadDev is the device of a pread Reader.
type preadDev struct {
	pool  *preadPool
	fd    int
	done  chan doneRec
	stash []doneRec // received by wait, handed out by poll
}

// newPreadReader creates a Reader that queues its reads to the File's pool.
func newPreadReader(f *File) (Reader, error) {
	depth := f.opts.QueueDepth
	slot := slotStride(f)
	arena, err := allocArena(depth * slot)
	if err != nil {
		return nil, err
	}
	e := newEngine(f, depth, slot, arena)
	e.dev = &preadDev{pool: f.pool, fd: f.fd, done: make(chan doneRec, depth)}
	return e, nil
}

// issue implements device. The done channel holds QueueDepth results, so
// workers never block on it.
func (d *preadDev) issue(segs []*segment) error {
	for _, s := range segs {
		d.pool.jobs <- preadJob{fd: d.fd, buf: s.buf[s.done:], off: s.off + int64(s.done), slot: s.slot, done: d.done}
	}
	return nil
}

// poll implements device.
func (d *preadDev) poll(out []doneRec) []doneRec {
	out = append(out, d.stash...)
	d.stash = d.stash[:0]
	for {
		select {
		case r := <-d.done:
			out = append(out, r)
		default:
			return out
		}
	}
}

// wait implements device.
func (d *preadDev) wait() (int, error) {
	if len(d.stash) == 0 {
		d.stash = append(d.stash, <-d.done)
	}
	return 0, nil
}

// close implements device.
func (d *preadDev) close() error { return nil }
