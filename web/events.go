package web

import (
	"bufio"
	"fmt"
	"log"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// EventsHandler serves GET /events: one Server-Sent Events stream per page,
// scoped by the query (?experiment=ID, ?run=ID, ?scope=experiments or
// ?scope=datasets). A stream starts after the larger of the Last-Event-ID
// header (sent by the browser when it reconnects by itself) and the `after`
// query (embedded by the page when it is rendered, and kept current by
// app.js when htmx opens a new EventSource), so nothing is sent twice and
// nothing is skipped. When that is impossible the stream says `reload`.
type EventsHandler struct {
	Hub       *Hub
	Heartbeat time.Duration // a comment line this often, so dead peers are found; default 15 s
	Log       *log.Logger   // panics of a stream
}

// Stream handles GET /events.
func (h *EventsHandler) Stream(c *fiber.Ctx) error {
	scope, err := eventScope(c)
	if err != nil {
		return err
	}
	after, err := resumePoint(c)
	if err != nil {
		return err
	}
	if after == 0 { // a bare client: live from now on
		after = h.Hub.LastID()
	}
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache, no-store")
	c.Set("X-Accel-Buffering", "no")
	hub := h.Hub
	beat := h.Heartbeat
	if beat <= 0 {
		beat = 15 * time.Second
	}
	// The writer runs after this handler returns, on the connection's
	// goroutine: it must not touch c. A vanished browser shows only as a
	// Flush error.
	lg := h.Log
	if lg == nil {
		lg = log.Default()
	}
	c.Context().SetBodyStreamWriter(safeStream(lg, "event stream", func(w *bufio.Writer) {
		streamEvents(w, hub, scope, after, beat)
	}))
	return nil
}

// aheadLimit is how long a stream waits for the hub to reach the id a page
// was rendered at before it gives up and asks the page to reload.
const aheadLimit = 3 * time.Second

// streamEvents writes the scope's events after `after` until the peer goes
// away or the hub closes.
func streamEvents(w *bufio.Writer, hub *Hub, scope string, after int64, beat time.Duration) {
	// The retry hint keeps the browser's own reconnection (which sends
	// Last-Event-ID) quick after a server restart.
	if _, err := w.WriteString("retry: 1000\n: stream " + scope + "\n\n"); err != nil {
		return
	}
	if w.Flush() != nil {
		return
	}
	ticker := time.NewTicker(beat)
	defer ticker.Stop()
	cursor := after
	var aheadSince time.Time
	for {
		select {
		case <-hub.Done():
			return
		default:
		}
		events, gap, ahead, wake := hub.Since(scope, cursor)
		if ahead {
			if aheadSince.IsZero() {
				aheadSince = time.Now()
			} else if time.Since(aheadSince) > aheadLimit {
				gap = true
			}
		} else {
			aheadSince = time.Time{}
		}
		if gap {
			writeEvent(w, Event{ID: hub.LastID(), Name: EventReload, Data: "resume impossible"})
			_ = w.Flush()
			return
		}
		for _, ev := range events {
			writeEvent(w, ev)
			cursor = ev.ID
		}
		if len(events) > 0 && w.Flush() != nil {
			return
		}
		var poll <-chan time.Time
		if ahead {
			poll = time.After(100 * time.Millisecond)
		}
		select {
		case <-hub.Done():
			return
		case <-wake:
		case <-poll:
		case <-ticker.C:
			if _, err := w.WriteString(": ping\n\n"); err != nil {
				return
			}
			if w.Flush() != nil {
				return
			}
		}
	}
}

// writeEvent writes one SSE message; each line of Data becomes a data: line.
func writeEvent(w *bufio.Writer, ev Event) {
	fmt.Fprintf(w, "id: %d\nevent: %s\n", ev.ID, ev.Name)
	data := strings.ReplaceAll(ev.Data, "\r", "")
	for _, line := range strings.Split(data, "\n") {
		w.WriteString("data: ")
		w.WriteString(line)
		w.WriteByte('\n')
	}
	w.WriteByte('\n')
}

// eventScope reads which page's stream is asked for.
func eventScope(c *fiber.Ctx) (string, error) {
	exp, run, page := c.Query("experiment"), c.Query("run"), c.Query("scope")
	n := 0
	for _, v := range []string{exp, run, page} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return "", fiber.NewError(fiber.StatusBadRequest, "events: give exactly one of experiment=ID, run=ID or scope=experiments|datasets")
	}
	switch {
	case exp != "":
		id, err := parseID(exp)
		if err != nil {
			return "", fiber.NewError(fiber.StatusBadRequest, "events: experiment: "+err.Error())
		}
		return ExperimentScope(id), nil
	case run != "":
		id, err := parseID(run)
		if err != nil {
			return "", fiber.NewError(fiber.StatusBadRequest, "events: run: "+err.Error())
		}
		return RunScope(id), nil
	}
	if page != ScopeExperiments && page != ScopeDatasets {
		return "", fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("events: unknown scope %q (want experiments or datasets)", page))
	}
	return page, nil
}

// resumePoint is the larger of the Last-Event-ID header and the after query; 0 when neither is set.
func resumePoint(c *fiber.Ctx) (int64, error) {
	var after int64
	for name, v := range map[string]string{"Last-Event-ID": c.Get("Last-Event-ID"), "after": c.Query("after")} {
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("events: %s must be a non-negative event id, got %q", name, v))
		}
		if n > after {
			after = n
		}
	}
	return after, nil
}

// ExperimentScope names the stream of one experiment's page.
func ExperimentScope(id int64) string { return "experiment:" + strconv.FormatInt(id, 10) }

// RunScope names the stream of one run's page.
func RunScope(id int64) string { return "run:" + strconv.FormatInt(id, 10) }

// parseID reads a positive decimal id.
func parseID(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive integer id, got %q", s)
	}
	return n, nil
}
