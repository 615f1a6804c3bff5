package experiments

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"outcore/store"
)

// startServer starts this test binary as a queue server over dataDir
// (fakeServer) and returns it with a channel of the events it prints.
func startServer(t *testing.T, dataDir string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envServer+"="+dataDir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, lines
}

// TestServerKilledLosesNoEpoch kills a real server process with SIGKILL in
// the middle of a run and checks that every epoch the child reported is
// in the database, that the child died with the server, and that a new
// server marks the run interrupted and goes on with the queue.
func TestServerKilledLosesNoEpoch(t *testing.T) {
	dataDir := newDataDir(t)
	ctx := context.Background()
	report := filepath.Join(t.TempDir(), "reported")
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
	// Run 1: 50 epochs of 60 ms; after writing epoch N to stdout the child
	// waits 300 ms, then appends "epoch N" to the report file. Run 2: short.
	victim, err := m.Create(ctx, []byte(fmt.Sprintf(`{"dataset":"tiny","system":"fake","epochs":50,
		"options":{"epoch_ms":"60","report":%q,"report_ms":"300"}}`, report)))
	if err != nil {
		t.Fatal(err)
	}
	after, err := m.Create(ctx, []byte(`{"dataset":"tiny","system":"fake","epochs":2}`))
	if err != nil {
		t.Fatal(err)
	}

	srv, lines := startServer(t, dataDir)
	// Kill the server right after it published the 4th epoch.
	published := 0
	deadline := time.After(60 * time.Second)
	for published < 4 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("server exited early")
			}
			if strings.Contains(l, " epoch ") {
				published++
			}
		case <-deadline:
			t.Fatal("server published no epochs")
		}
	}
	if err := srv.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.Wait()

	runs, err := st.Runs(ctx, store.RunFilter{ExperimentID: victim.ID})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	r := runs[0]
	if r.Status != store.StatusRunning || r.PID == 0 {
		t.Fatalf("after SIGKILL the row says %s pid %d", r.Status, r.PID)
	}
	// The child dies with its server (Pdeathsig); give the kernel a moment.
	for dl := time.Now().Add(5 * time.Second); syscall.Kill(r.PID, 0) == nil; {
		if time.Now().After(dl) {
			t.Fatalf("child %d outlived its server", r.PID)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Ground truth: every epoch the child reported (written to stdout at
	// least 300 ms before it appears in the report file) is stored.
	b, _ := os.ReadFile(report)
	reported := strings.Count(string(b), "epoch ")
	eps, err := st.Epochs(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if reported < 3 || len(eps) < reported || len(eps) < published {
		t.Fatalf("child reported %d epochs, server published %d, store has %d", reported, published, len(eps))
	}
	for i, e := range eps {
		if e.Epoch != i {
			t.Fatalf("stored epochs %v are not 0..%d", eps, len(eps)-1)
		}
	}
	t.Logf("killed the server after %d published epochs; child had reported %d; store holds %d", published, reported, len(eps))

	// A new server: the run is interrupted, the queue goes on.
	_, lines2 := startServer(t, dataDir)
	go func() {
		for range lines2 {
		}
	}()
	for dl := time.Now().Add(60 * time.Second); ; {
		a, err := st.Runs(ctx, store.RunFilter{ExperimentID: after.ID})
		if err != nil {
			t.Fatal(err)
		}
		if a[0].Status == store.StatusDone {
			break
		}
		if store.Finished(a[0].Status) || time.Now().After(dl) {
			t.Fatalf("next run: %s %s", a[0].Status, a[0].Error)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r, _ = st.Run(ctx, r.ID)
	if r.Status != store.StatusInterrupted || r.EpochsDone != len(eps) || r.EndedAt.IsZero() {
		t.Fatalf("victim after restart: %s epochs_done %d", r.Status, r.EpochsDone)
	}
	if r.CgroupPath != "" {
		if _, err := os.Stat(r.CgroupPath); !os.IsNotExist(err) {
			t.Fatalf("the interrupted run's cgroup %s was not removed: %v", r.CgroupPath, err)
		}
	}
}
