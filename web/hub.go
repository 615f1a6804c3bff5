package web

import "sync"

// Event is one message of a live stream (Server-Sent Events).
type Event struct {
	// ID is the id of the store event (run_events.id) it was made from:
	// increasing, never reused, the same across server restarts.
	ID    int64
	Scope string // which page's stream carries it: ScopeExperiments, "experiment:7", "run:42", ScopeDatasets
	Name  string // the SSE event name: EventUpdate, EventCharts or EventReload
	Data  string // HTML fragment (htmx out-of-band swaps) or a short JSON/text payload
}

// SSE event names the pages listen to.
const (
	// EventUpdate carries HTML with hx-swap-oob elements; htmx swaps them
	// into the page. When it holds ChartsMarker the page also refetches its
	// chart data (throttled).
	EventUpdate = "update"
	// EventReload tells the page that the stream cannot resume without a gap
	// (too old a Last-Event-ID, or a restarted server): the page reloads itself.
	EventReload = "reload"
)

// Scopes of the pages without an id.
const (
	ScopeExperiments = "experiments"
	ScopeDatasets    = "datasets"
)

// ChartsMarker in an update's HTML tells the page its charts changed.
const ChartsMarker = `<template data-charts-changed></template>`

// Hub keeps the recent events of every scope and wakes the streams that
// follow them. Ids come from the store's event log, so they increase across
// restarts; the hub holds only events after seed (the newest id when the
// server started), and a stream asked to resume from before seed, or from
// before events the hub has dropped, is told to reload instead.
type Hub struct {
	mu       sync.Mutex
	seed     int64 // the newest store event id when the hub was made
	last     int64 // the newest id published
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

// NewHub returns a hub whose events follow the store event seed, keeping
// up to perScope recent events for each of at most maxScopes scopes (the
// least recently active scope is dropped first).
func NewHub(seed int64, perScope, maxScopes int) *Hub {
	if perScope < 1 {
		perScope = 1
	}
	if maxScopes < 1 {
		maxScopes = 1
	}
	return &Hub{
		seed: seed, last: seed, perScope: perScope, maxScope: maxScopes,
		scopes: map[string]*scopeRing{},
		wake:   make(chan struct{}), done: make(chan struct{}),
	}
}

// Publish appends events (ids increasing within each scope, above the
// seed) and wakes the streams. After Close it does nothing.
func (h *Hub) Publish(evs ...Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(evs) == 0 {
		return
	}
	for _, ev := range evs {
		r := h.scopes[ev.Scope]
		if r == nil {
			if len(h.scopes) >= h.maxScope {
				h.dropOldestScope()
			}
			r = &scopeRing{}
			h.scopes[ev.Scope] = r
		}
		if n := len(r.events); n > 0 && ev.ID <= r.events[n-1].ID {
			panic("web: hub events out of order in scope " + ev.Scope)
		}
		if len(r.events) >= h.perScope {
			r.evicted = r.events[0].ID
			copy(r.events, r.events[1:])
			r.events = r.events[:len(r.events)-1]
		}
		r.events = append(r.events, ev)
		if ev.ID > h.last {
			h.last = ev.ID
		}
	}
	close(h.wake)
	h.wake = make(chan struct{})
}

// Advance records that the store has no events up to id for any scope
// (the feed read them and none concerned a page), so LastID moves on.
func (h *Hub) Advance(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if id > h.last {
		h.last = id
	}
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

// LastID is the newest store event id the hub has seen.
func (h *Hub) LastID() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// Since returns the scope's events with ids above after, oldest first, and
// a channel closed by the next Publish or by Close. gap is true when events
// after `after` may be lost to the hub: the id predates this process or
// falls before events it dropped. ahead is true when after is beyond what
// the hub has seen (a page rendered from the store a moment before the
// feed caught up): the caller waits, and treats a long wait as a gap.
func (h *Hub) Since(scope string, after int64) (events []Event, gap, ahead bool, wake <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if after < h.seed || after < h.pruned {
		return nil, true, false, h.wake
	}
	if after > h.last {
		return nil, false, true, h.wake
	}
	r := h.scopes[scope]
	if r == nil {
		return nil, false, false, h.wake
	}
	if after < r.evicted {
		return nil, true, false, h.wake
	}
	for i, ev := range r.events {
		if ev.ID > after {
			events = append(events, r.events[i:]...)
			break
		}
	}
	return events, false, false, h.wake
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
