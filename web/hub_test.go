package web

import (
	"sync"
	"testing"
	"time"
)

func TestHubSinceAndGaps(t *testing.T) {
	h := NewHub(100, 3, 2)
	h.Publish(Event{ID: 101, Scope: "a", Name: EventUpdate}, Event{ID: 101, Scope: "b", Name: EventUpdate},
		Event{ID: 102, Scope: "a", Name: EventUpdate})
	h.Advance(105) // events 103..105 concerned no page
	tests := []struct {
		name      string
		scope     string
		after     int64
		ids       []int64
		gap, ahed bool
	}{
		{"from the seed", "a", 100, []int64{101, 102}, false, false},
		{"after the first", "a", 101, []int64{102}, false, false},
		{"nothing new", "a", 102, nil, false, false},
		{"quiet scope", "c", 104, nil, false, false},
		{"before the seed", "a", 99, nil, true, false},
		{"ahead of the hub", "a", 106, nil, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, gap, ahead, _ := h.Since(tc.scope, tc.after)
			if gap != tc.gap || ahead != tc.ahed || len(evs) != len(tc.ids) {
				t.Fatalf("got %v gap %v ahead %v", evs, gap, ahead)
			}
			for i, ev := range evs {
				if ev.ID != tc.ids[i] {
					t.Errorf("event %d is %d, want %d", i, ev.ID, tc.ids[i])
				}
			}
		})
	}
	// The ring keeps 3 events per scope: resuming before the oldest kept is a gap.
	h.Publish(Event{ID: 106, Scope: "a"}, Event{ID: 107, Scope: "a"})
	if _, gap, _, _ := h.Since("a", 100); !gap {
		t.Error("resume across evicted events is not a gap")
	}
	if evs, gap, _, _ := h.Since("a", 101); gap || len(evs) != 3 {
		t.Errorf("resume right after the evicted event: %v gap %v", evs, gap)
	}
	// Two scopes at most: a third drops the least recent, and resuming
	// in the dropped one before its last event is a gap.
	h.Publish(Event{ID: 108, Scope: "c"})
	if _, gap, _, _ := h.Since("b", 100); !gap {
		t.Error("resume in a dropped scope is not a gap")
	}
}

func TestHubWakesAndCloses(t *testing.T) {
	h := NewHub(0, 10, 10)
	_, _, _, wake := h.Since("x", 0)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		h.Publish(Event{ID: 1, Scope: "x"})
	}()
	select {
	case <-wake:
	case <-time.After(2 * time.Second):
		t.Fatal("publish did not wake the reader")
	}
	wg.Wait()
	h.Close()
	select {
	case <-h.Done():
	default:
		t.Fatal("Done not closed")
	}
	h.Publish(Event{ID: 2, Scope: "x"}) // ignored after Close
	if evs, _, _, _ := h.Since("x", 1); len(evs) != 0 {
		t.Errorf("published after Close: %v", evs)
	}
	h.Close() // twice is fine
}

func TestHubRejectsOutOfOrderIDs(t *testing.T) {
	h := NewHub(0, 10, 10)
	h.Publish(Event{ID: 5, Scope: "x"})
	defer func() {
		if recover() == nil {
			t.Error("an id below the scope's last was accepted")
		}
	}()
	h.Publish(Event{ID: 4, Scope: "x"})
}
