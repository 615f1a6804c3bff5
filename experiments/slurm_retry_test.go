package experiments

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"outcore/experiments/slurm"
	"outcore/store"
)

// TestSlurmStoreRefusalRetried: the store refuses every write from the
// first stored epoch of a Slurm run until its job has ended in Slurm and a
// little longer. The run's records and its outcome are retried (as a local
// run's are) and the run ends done with every epoch once the store
// accepts again. (Before, the Slurm executor wrote the outcome once: a
// refusal left the run running with no one watching it.)
func TestSlurmStoreRefusalRetried(t *testing.T) {
	requireSlurm(t)
	bin := outcoreBinary(t)
	var logMu sync.Mutex
	var logs []string
	h := newHarness(t, func(o *Options) {
		o.ExecutorOptions = map[string]any{slurm.Name: testSlurmOptions(bin)}
		o.Logf = func(format string, a ...any) {
			logMu.Lock()
			logs = append(logs, fmt.Sprintf(format, a...))
			logMu.Unlock()
			t.Logf(format, a...)
		}
	})
	var refuse atomic.Bool
	h.m.writeFault = func() error {
		if refuse.Load() {
			return fmt.Errorf("test: the store refuses writes: %w", syscall.ENOSPC)
		}
		return nil
	}
	h.start()
	const epochs = 4
	e := h.create(fmt.Sprintf(`{"dataset":"tiny","executor":"slurm","system":"fake","epochs":%d,"options":{"epoch_ms":"300"}}`, epochs))
	r := h.waitRuns(e.ID, "running in Slurm with an epoch stored", func(r store.Run) bool {
		return r.JobID != "" && r.EpochsDone >= 1
	})[0]
	refuse.Store(true)
	ctx := context.Background()
	for dl := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if info, err := (slurm.CLI{}).Show(ctx, r.JobID); err == nil && slurm.IsFinal(info.State) {
			if info.State != "COMPLETED" {
				t.Fatalf("Slurm job %s ended %s", r.JobID, info.State)
			}
			break
		}
		if time.Now().After(dl) {
			t.Fatalf("Slurm job %s did not end", r.JobID)
		}
	}
	retried := func() bool {
		logMu.Lock()
		defer logMu.Unlock()
		for _, l := range logs {
			if strings.Contains(l, "(retrying)") || strings.Contains(l, "the training goes on") {
				return true
			}
		}
		return false
	}
	// The job has ended; its run must stay running while the store
	// refuses what the executor read and decided.
	for dl := time.Now().Add(3 * time.Second); time.Now().Before(dl); time.Sleep(50 * time.Millisecond) {
		if got, _ := h.st.Run(ctx, r.ID); got.Status != store.StatusRunning {
			t.Fatalf("the run ended %s (%s) while the store refused writes", got.Status, got.Error)
		}
	}
	if !retried() {
		t.Fatal("no write was refused and retried while the job ended")
	}
	refuse.Store(false)
	got := h.waitStatus(r.ID, store.StatusDone)
	if got.EpochsDone != epochs || len(got.Summary) == 0 {
		t.Errorf("run: %d epochs (want %d), summary %s", got.EpochsDone, epochs, got.Summary)
	}
	eps, err := h.st.Epochs(ctx, r.ID)
	if err != nil || len(eps) != epochs {
		t.Errorf("%d epoch rows stored (%v), want %d", len(eps), err, epochs)
	}
}
