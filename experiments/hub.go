package experiments

import (
	"context"
	"sync"
	"time"

	"outcore/store"
)

// Event is one entry of the live event stream: a row of the store's event
// log (store.Event). IDs increase monotonically across the whole database.
type Event = store.Event

// hub delivers the event log to subscribers. Every event is written to the
// database first; each subscriber has its own cursor (the last id it
// received) and reads rows after it whenever the hub is kicked. So a
// subscriber never sees a duplicate or an event out of order, a slow one
// lags without the hub buffering for it, and a reconnecting client resumes
// exactly from the id it last saw. Kicks come from this process's commits
// at once, and from a poll of the newest id (other processes' writes, such
// as `outcore exp create` beside a running server).
type hub struct {
	st   *store.Store
	logf func(string, ...any)

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every kick
	subs    int
	stop    chan struct{}
	polling bool
	closed  bool
	wg      sync.WaitGroup
}

// pollInterval is how often the hub looks for events written by other
// processes while it has subscribers.
const pollInterval = 250 * time.Millisecond

func newHub(st *store.Store, logf func(string, ...any)) *hub {
	return &hub{st: st, logf: logf, changed: make(chan struct{}), stop: make(chan struct{})}
}

// kick wakes every subscriber to read new rows.
func (h *hub) kick() {
	h.mu.Lock()
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
}

func (h *hub) wait() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

// subscribe starts delivering events with id > after.
func (h *hub) subscribe(after int64) (<-chan Event, func()) {
	out := make(chan Event, 64)
	done := make(chan struct{})
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		close(out)
		return out, func() {}
	}
	h.subs++
	if !h.polling {
		h.polling = true
		h.wg.Add(1)
		go h.poll()
	}
	h.wg.Add(1)
	h.mu.Unlock()

	go func() {
		defer h.wg.Done()
		defer close(out)
		defer func() {
			h.mu.Lock()
			h.subs--
			h.mu.Unlock()
		}()
		cursor := after
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-done:
			case <-h.stop:
			}
			cancel()
		}()
		for {
			changed := h.wait()
			evs, err := h.st.EventsSince(ctx, cursor, 500)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				h.logf("events: %v", err)
				select {
				case <-time.After(time.Second):
					continue
				case <-ctx.Done():
					return
				}
			}
			for _, ev := range evs {
				select {
				case out <- ev:
					cursor = ev.ID
				case <-ctx.Done():
					return
				}
			}
			if len(evs) == 500 {
				continue
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return
			}
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { close(done) }) }
}

// poll kicks the hub when the newest event id moves (writes by other
// processes) while anyone listens.
func (h *hub) poll() {
	defer h.wg.Done()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	var last int64 = -1
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		h.mu.Lock()
		subs := h.subs
		h.mu.Unlock()
		if subs == 0 {
			continue
		}
		id, err := h.st.LastEventID(context.Background())
		if err != nil {
			continue
		}
		if id != last {
			last = id
			h.kick()
		}
	}
}

// close ends every subscription and the poller.
func (h *hub) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	close(h.stop)
	h.mu.Unlock()
	h.wg.Wait()
}
