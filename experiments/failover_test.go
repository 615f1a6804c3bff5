package experiments

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"outcore/store"
)

// TestSecondServerTakesTheQueueOver: two servers share a data directory;
// the second stands by. When the first is SIGKILLed in the middle of a run,
// the second takes the queue over within seconds: the dead server's run
// ends interrupted and the next queued run runs to done.
func TestSecondServerTakesTheQueueOver(t *testing.T) {
	dataDir := newDataDir(t)
	ctx := context.Background()
	st, err := store.OpenDataDir(ctx, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := New(testOptions(dataDir, st))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	victim, err := m.Create(ctx, []byte(`{"dataset":"tiny","system":"fake","epochs":3,"options":{"hang":"1"}}`))
	if err != nil {
		t.Fatal(err)
	}

	first, lines1 := startServer(t, dataDir)
	waitLine(t, lines1, "running as pid")
	_, lines2 := startServer(t, dataDir)
	waitLine(t, lines2, "STANDBY")

	next, err := m.Create(ctx, []byte(`{"dataset":"tiny","system":"fake","epochs":2}`))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the standby server must not start it meanwhile
	if r := runOf(t, st, next.ID); r.Status != store.StatusQueued {
		t.Fatalf("while the first server runs the queue, the next run is %s", r.Status)
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	killed := time.Now()
	for {
		r := runOf(t, st, next.ID)
		if r.Status != store.StatusQueued {
			break
		}
		if time.Since(killed) > 5*time.Second {
			t.Fatalf("no server took the queue over within 5 s of the SIGKILL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the second server started the next run %.2f s after the first was killed", time.Since(killed).Seconds())
	for dl := time.Now().Add(30 * time.Second); ; {
		r := runOf(t, st, next.ID)
		if r.Status == store.StatusDone {
			break
		}
		if store.Finished(r.Status) || time.Now().After(dl) {
			t.Fatalf("next run: %s %s", r.Status, r.Error)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := runOf(t, st, victim.ID); r.Status != store.StatusInterrupted {
		t.Fatalf("the dead server's run is %s, want interrupted", r.Status)
	}
}

// runOf returns the only run of an experiment.
func runOf(t *testing.T, st *store.Store, expID int64) store.Run {
	t.Helper()
	runs, err := st.Runs(context.Background(), store.RunFilter{ExperimentID: expID, Current: true})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs of experiment %d: %v %v", expID, runs, err)
	}
	return runs[0]
}

// waitLine reads a server's output until a line contains s (30 s at most).
func waitLine(t *testing.T, lines <-chan string, s string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("server exited before printing %q", s)
			}
			if strings.Contains(l, s) {
				go func() {
					for range lines {
					}
				}()
				return
			}
		case <-deadline:
			t.Fatalf("server did not print %q", s)
		}
	}
}
