package gnndrive

// GNNDrive §4.1 ⑧–⑨ and §4.2 "Release Feature Buffer": after training, the
// trainer enqueues the mini-batch's original sampled node list into the
// releasing queue; the releaser dequeues it and decrements each node's
// reference count, appending slots whose count reaches zero to the tail of
// the standby list. Invalidation is delayed until a slot is reused, so a
// later mini-batch can still hit the node (inter-batch locality).

import (
	"time"

	"outcore/engine/cache"
	"outcore/engine/metrics"
)

// runReleaser releases every node list received on q until q closes; the
// returned channel closes when it is done.
func runReleaser(buf *cache.FeatureBuffer, q <-chan []int64, ep *metrics.EpochStats) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ids := range q {
			t0 := time.Now()
			buf.Release(ids)
			ep.Add("release_s", time.Since(t0))
		}
	}()
	return done
}
