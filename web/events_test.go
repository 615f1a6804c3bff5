package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"outcore/store"
)

// sseEvent is one message read from a stream.
type sseEvent struct {
	ID   int64
	Name string
	Data string
	At   time.Time
}

// sseClient reads a live stream in the background.
type sseClient struct {
	resp   *http.Response
	mu     sync.Mutex
	events []sseEvent
	pings  int
	done   chan struct{}
}

func openStream(t *testing.T, url, lastEventID string) *sseClient {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	c := &sseClient{resp: resp, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Name != "" {
					ev.Data, ev.At = strings.Join(data, "\n"), time.Now()
					c.mu.Lock()
					c.events = append(c.events, ev)
					c.mu.Unlock()
				}
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(line, ": ping"):
				c.mu.Lock()
				c.pings++
				c.mu.Unlock()
			case strings.HasPrefix(line, "id: "):
				ev.ID, _ = strconv.ParseInt(line[4:], 10, 64)
			case strings.HasPrefix(line, "event: "):
				ev.Name = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = append(data, line[6:])
			}
		}
	}()
	return c
}

func (c *sseClient) snapshot() ([]sseEvent, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sseEvent(nil), c.events...), c.pings
}

func (c *sseClient) close() {
	c.resp.Body.Close()
	<-c.done
}

// liveEnv serves the dashboard on a real port with its live feed running.
func liveEnv(t *testing.T) (*testEnv, string, context.CancelFunc, chan error) {
	t.Helper()
	e := newEnv(t)
	base, cancel, served := serveLive(t, e)
	return e, base, cancel, served
}

// serveLive starts (another) server of the env on a real port, with a
// short heartbeat; it becomes e.srv.
func serveLive(t *testing.T, e *testEnv) (string, context.CancelFunc, chan error) {
	t.Helper()
	srv, err := New(context.Background(), Config{Store: e.st, Queue: e.mgr, DataDir: e.dir,
		CSRFKey: []byte("0123456789abcdef0123456789abcdef"), Heartbeat: 100 * time.Millisecond, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	addr, cancel, served := serveLoopback(t, srv)
	return "http://" + addr, cancel, served
}

func TestStreamDeliversLiveAndResumesWithoutDuplicates(t *testing.T) {
	e, base, _, _ := liveEnv(t)
	x := e.create(tinyGrid)
	runs := e.runs(x.ID)
	after, _ := e.st.LastEventID(context.Background())
	url := fmt.Sprintf("%s/events?experiment=%d&after=%d", base, x.ID, after)

	// First connection: one run plays; its epochs arrive within a second.
	c1 := openStream(t, url, "")
	e.play(runs[0], 2, 0.5, store.StatusDone)
	committed := time.Now()
	waitFor(t, 5*time.Second, "the first run's updates", func() bool {
		evs, _ := c1.snapshot()
		for _, ev := range evs {
			if strings.Contains(ev.Data, `data-status="done"`) && strings.Contains(ev.Data, fmt.Sprintf(`id="run-%d"`, runs[0].ID)) {
				return true
			}
		}
		return false
	})
	evs1, pings := c1.snapshot()
	if lag := evs1[len(evs1)-1].At.Sub(committed); lag > time.Second {
		t.Errorf("the final update came %v after the commit (> 1 s)", lag)
	}
	c1.close()
	lastSeen := evs1[len(evs1)-1].ID

	// While nobody listens, the second run plays; the browser reconnects
	// with Last-Event-ID and gets exactly what it missed.
	e.play(runs[1], 1, 0.5, store.StatusOOM)
	waitFor(t, 5*time.Second, "the feed to catch up", func() bool {
		id, _ := e.st.LastEventID(context.Background())
		return e.srv.Hub().LastID() >= id
	})
	c2 := openStream(t, url, strconv.FormatInt(lastSeen, 10))
	waitFor(t, 5*time.Second, "the missed updates", func() bool {
		evs, _ := c2.snapshot()
		for _, ev := range evs {
			if strings.Contains(ev.Data, `data-status="oom"`) {
				return true
			}
		}
		return false
	})
	time.Sleep(300 * time.Millisecond) // anything repeated would arrive by now
	evs2, pings2 := c2.snapshot()
	c2.close()

	all := append(evs1, evs2...)
	seen := map[int64]bool{}
	var prev int64
	for _, ev := range all {
		if ev.ID <= prev || seen[ev.ID] {
			t.Fatalf("event %d after %d: repeated or out of order", ev.ID, prev)
		}
		seen[ev.ID], prev = true, ev.ID
		if ev.Name != EventUpdate {
			t.Errorf("event %d is %q", ev.ID, ev.Name)
		}
	}
	// Every status and epoch event of the experiment reached the page.
	for _, r := range runs[:2] {
		stored, err := e.st.RunEvents(context.Background(), r.ID, store.EventStatus, store.EventEpoch)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range stored {
			if !seen[ev.ID] {
				t.Errorf("%s event %d of run %d never reached the stream", ev.Kind, ev.ID, r.ID)
			}
		}
	}
	if pings+pings2 == 0 {
		t.Error("no heartbeat on an idle stream")
	}
}

func TestStreamAsksForReloadWhenItCannotResume(t *testing.T) {
	e := newEnv(t)
	x := e.create(tinyGrid)
	e.play(e.runs(x.ID)[0], 1, 0.1, store.StatusDone)
	base, _, _ := serveLive(t, e) // a server started after those events
	seed := e.srv.Hub().LastID()
	if seed < 3 {
		t.Fatalf("seed %d: the events before the server are missing", seed)
	}
	for name, query := range map[string]string{
		"before this server": fmt.Sprintf("?experiment=%d&after=1", x.ID),
		"far in the future":  fmt.Sprintf("?experiment=%d&after=%d", x.ID, seed+1_000_000),
	} {
		t.Run(name, func(t *testing.T) {
			c := openStream(t, base+"/events"+query, "")
			waitFor(t, 6*time.Second, "a reload event", func() bool {
				evs, _ := c.snapshot()
				return len(evs) > 0 && evs[0].Name == EventReload
			})
			c.close()
		})
	}
}

func TestShutdownClosesOpenStreams(t *testing.T) {
	e, base, cancel, served := liveEnv(t)
	x := e.create(tinyGrid)
	var clients []*sseClient
	for _, q := range []string{fmt.Sprintf("experiment=%d", x.ID), "scope=experiments", fmt.Sprintf("run=%d", e.runs(x.ID)[0].ID)} {
		clients = append(clients, openStream(t, base+"/events?"+q, ""))
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown hangs with open event streams")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	for i, c := range clients {
		select {
		case <-c.done:
		case <-time.After(2 * time.Second):
			t.Errorf("stream %d still open after shutdown", i)
		}
	}
}
