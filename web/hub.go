package web

import (
	"sync"
	"time"
)

// Event is one message of a live stream (Server-Sent Events).
type Event struct {
	ID    int64  // monotonically increasing over the server's life and across restarts
	Scope string // which page's stream carries it: ScopeExperiments, "experiment:7", "run:42", ScopeDatasets
	Name  string // the SSE event name: EventUpdate, EventCharts or EventReload
	Data  string // HTML fragment (htmx out-of-band swaps) or a short JSON/text payload
}

// SSE event names the pages listen to.
const (
	// EventUpdate carries HTML with hx-swap-oob elements; htmx swaps them into the page.
	EventUpdate = "update"
	// EventCharts says the page's chart data changed; the page refetches it (throttled).
	EventCharts = "charts"
	// EventReload tells the page that the stream cannot resume without a gap
	// (too old a Last-Event-ID, or a restarted server): the page reloads itself.
	EventReload = "reload"
)

// Scopes of the pages without an id.
const (
	ScopeExperiments = "experiments"
	ScopeDatasets    = "datasets"
)

// Hub keeps the recent events of every scope and wakes the streams that
// follow them. Event ids start from the wall clock in microseconds when the
// hub is made, so ids a browser saw from an earlier server process are
// always smaller than this process's first id and are recognised as a gap.
type Hub struct {
	mu       sync.Mutex
	seed     int64 // the id before this process's first event
	last     int64
	perScope int
	maxScope int
	scopes   map[string]*scopeRing
	pruned   int64 // the largest id of any event dropped with its whole scope
	wake     chan struct{}
	done     chan struct{}
	closed   bool
}

type scopeRing struct {
	events  []Event // oldest first, at most perScope
	evicted int64   // the largest id dropped from this ring
}

// NewHub returns a hub keeping up to perScope recent events for each of at
// most maxScopes scopes (the least recently active scope is dropped first).
func NewHub(perScope, maxScopes int) *Hub {
	if perScope < 1 {
		perScope = 1
	}
	if maxScopes < 1 {
		maxScopes = 1
	}
	seed := time.Now().UnixMicro()
	return &Hub{
		seed: seed, last: seed, perScope: perScope, maxScope: maxScopes,
		scopes: map[string]*scopeRing{},
		wake:   make(chan struct{}), done: make(chan struct{}),
	}
}

// Publish appends an event to a scope, wakes the streams and returns its id.
// After Close it does nothing and returns 0.
func (h *Hub) Publish(scope, name, data string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return 0
	}
	h.last++
	ev := Event{ID: h.last, Scope: scope, Name: name, Data: data}
	r := h.scopes[scope]
	if r == nil {
		if len(h.scopes) >= h.maxScope {
			h.dropOldestScope()
		}
		r = &scopeRing{}
		h.scopes[scope] = r
	}
	if len(r.events) >= h.perScope {
		r.evicted = r.events[0].ID
		copy(r.events, r.events[1:])
		r.events = r.events[:len(r.events)-1]
	}
	r.events = append(r.events, ev)
	close(h.wake)
	h.wake = make(chan struct{})
	return ev.ID
}

// dropOldestScope forgets the scope whose newest event is oldest. Called with h.mu held.
func (h *Hub) dropOldestScope() {
	var oldest string
	var oldestID int64 = -1
	for name, r := range h.scopes {
		newest := r.evicted
		if n := len(r.events); n > 0 {
			newest = r.events[n-1].ID
		}
		if oldestID < 0 || newest < oldestID {
			oldest, oldestID = name, newest
		}
	}
	if oldestID > h.pruned {
		h.pruned = oldestID
	}
	delete(h.scopes, oldest)
}

// LastID is the id of the newest event of any scope; a page rendered now
// embeds it so that its stream starts exactly after what the page shows.
func (h *Hub) LastID() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// Since returns the scope's events with ids above after, oldest first, and
// a channel closed by the next Publish or by Close. gap is true when events
// after `after` may have been lost: the id predates this process, lies in
// the future, or falls before events this hub has already dropped.
func (h *Hub) Since(scope string, after int64) (events []Event, gap bool, wake <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if after < h.seed || after > h.last {
		return nil, true, h.wake
	}
	if after < h.pruned {
		return nil, true, h.wake
	}
	r := h.scopes[scope]
	if r == nil {
		return nil, false, h.wake
	}
	if after < r.evicted {
		return nil, true, h.wake
	}
	for i, ev := range r.events {
		if ev.ID > after {
			events = append(events, r.events[i:]...)
			break
		}
	}
	return events, false, h.wake
}

// Done is closed by Close.
func (h *Hub) Done() <-chan struct{} { return h.done }

// Close ends every stream that follows the hub; later Publish calls do nothing.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	close(h.done)
	close(h.wake)
}
