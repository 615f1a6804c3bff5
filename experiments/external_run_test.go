package experiments

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outcore/experiments/external"
	"outcore/store"
)

// externalPrograms registers small shell programs as external systems:
// each writes its records to descriptor 3 as the protocol says.
func externalPrograms(t *testing.T) *external.Registry {
	t.Helper()
	dir := t.TempDir()
	progs := map[string]string{
		// two epochs, a line the parser refuses, a summary; output on stdout and stderr
		"good": `echo "hello from stdout"; echo "hello from stderr" >&2
echo '{"type":"epoch","epoch":0,"epoch_s":0.1,"val_acc":0.5}' >&3
echo '{"type":"epoch","epoch":1,"epoch_s":0.1,"val_acc":1.5}' >&3
echo '{"type":"epoch","epoch":1,"epoch_s":0.1,"val_acc":0.6}' >&3
echo '{"type":"summary","epochs":2,"best_epoch":1,"best_val_acc":0.6}' >&3
case "$1" in --fail=true) exit 3;; esac`,
		// exits 0 without a summary line
		"nosum": `echo '{"type":"epoch","epoch":0,"epoch_s":0.1}' >&3`,
		// runs until it is stopped
		"sleeper": `echo '{"type":"epoch","epoch":0,"epoch_s":0.1}' >&3
exec sleep 120`,
		// takes 1 GiB
		"hog": `echo '{"type":"epoch","epoch":0,"epoch_s":0.1}' >&3
exec /usr/bin/python3 -c 'b = b"x" * (1 << 30); import time; time.sleep(30)'`,
	}
	var systems []any
	for name, body := range progs {
		p := filepath.Join(dir, name+".sh")
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		systems = append(systems, map[string]any{"name": name, "command": []string{p},
			"options": map[string]any{"fail": map[string]any{"type": "bool", "default": false}}})
	}
	b, _ := json.Marshal(map[string]any{"systems": systems})
	reg := filepath.Join(dir, "systems.json")
	if err := os.WriteFile(reg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := external.Load(reg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestExternalRunOutcomes: the runner's handling of an external system's
// program: records from descriptor 3 stored (a refused line a warning,
// not stored), stdout and stderr kept in the run directory, the outcome
// outcore's — done, failed for a non-zero exit or a missing summary,
// cancelled when stopped, oom at the cgroup's limit.
func TestExternalRunOutcomes(t *testing.T) {
	reg := externalPrograms(t)
	h := newHarness(t, func(o *Options) { o.External = reg })
	e := h.create(`{"dataset":"tiny","epochs":1,"axes":{"system":["external:good","external:good:fail=true","external:nosum"]}}`)
	h.start()
	runs := h.waitRuns(e.ID, "finished", finished)
	bySystem := map[string]store.Run{}
	for _, r := range runs {
		bySystem[r.System] = r
	}
	good := bySystem["external:good"]
	if good.Status != store.StatusDone {
		t.Fatalf("good: %s (%s)", good.Status, good.Error)
	}
	eps, _ := h.st.Epochs(context.Background(), good.ID)
	if len(eps) != 2 || eps[1].ValAcc != 0.6 {
		t.Errorf("good: epochs %+v; want 0 and 1, the refused line left out", eps)
	}
	evs, _ := h.st.RunEvents(context.Background(), good.ID, store.EventLog)
	refused := false
	for _, ev := range evs {
		if ev.Level == "warn" && strings.Contains(ev.Msg, "records line 2 of external system good refused") && strings.Contains(ev.Msg, "val_acc") {
			refused = true
		}
	}
	if !refused {
		t.Errorf("good: no warning naming the refused line's field; events %+v", evs)
	}
	dirs, _ := filepath.Glob(filepath.Join(h.dataDir, "runs", "*", "*"))
	var outs, errs string
	for _, d := range dirs {
		o, _ := os.ReadFile(filepath.Join(d, "stdout.log"))
		e, _ := os.ReadFile(filepath.Join(d, "stderr.log"))
		outs, errs = outs+string(o), errs+string(e)
		if _, err := os.Stat(filepath.Join(d, "scratch")); err == nil {
			t.Errorf("%s: the scratch directory was left behind", d)
		}
	}
	if !strings.Contains(outs, "hello from stdout") || !strings.Contains(errs, "hello from stderr") {
		t.Errorf("the program's output was not kept: stdout %q, stderr %q", outs, errs)
	}
	if r := bySystem["external:good:fail=true"]; r.Status != store.StatusFailed || !strings.Contains(r.Error, "exited with status 3") {
		t.Errorf("failing: %s (%s)", r.Status, r.Error)
	}
	if r := bySystem["external:nosum"]; r.Status != store.StatusFailed || !strings.Contains(r.Error, "without a summary line") {
		t.Errorf("no summary: %s (%s)", r.Status, r.Error)
	}

	// Cancelled while it runs.
	e = h.create(`{"dataset":"tiny","epochs":1,"axes":{"system":["external:sleeper"]}}`)
	r := h.waitRuns(e.ID, "running", func(r store.Run) bool { return r.Status == store.StatusRunning })[0]
	h.waitEpochs(r.ID, 1)
	// outcore's per-second samples of the program while it runs
	var smp []store.Sample
	waitUntil(t, 30*time.Second, "a sample of the running program", func() bool {
		smp, _ = h.st.Samples(context.Background(), r.ID, 0, 1e9, 0)
		return len(smp) > 0
	})
	if s := smp[0]; s.T <= 0 || s.RSSBytes <= 0 || (r.LimitEnforced || haveCgroups(t)) && s.CgroupBytes <= 0 {
		t.Errorf("sample %+v: want its time, the program's RSS and the cgroup's usage", s.SampleRecord)
	}
	if err := h.m.CancelRun(context.Background(), r.ID); err != nil {
		t.Fatal(err)
	}
	if r := h.waitStatus(r.ID, store.StatusCancelled); !strings.Contains(r.Error, "cancelled") {
		t.Errorf("cancelled: %s", r.Error)
	}

	// Out of memory at the cgroup's limit.
	if _, err := os.Stat("/usr/bin/python3"); err != nil || !haveCgroups(t) {
		t.Skip("no python3 or no memory cgroups for the OOM case")
	}
	e = h.create(`{"dataset":"tiny","epochs":1,"axes":{"system":["external:hog"],"mem_limit":["128MiB"]}}`)
	r = h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusOOM || !r.LimitEnforced {
		t.Errorf("hog at 128MiB: %s (%s), enforced %v", r.Status, r.Error, r.LimitEnforced)
	}
}

// TestExternalNotOnSlurm: a job executor does not run external systems:
// a grid naming one for Slurm is refused at creation, saying so.
func TestExternalNotOnSlurm(t *testing.T) {
	reg := externalPrograms(t)
	h := newHarness(t, func(o *Options) { o.External = reg })
	_, err := h.m.CreateWith(context.Background(), []byte(`{"dataset":"tiny","epochs":1,"axes":{"system":["external:good"]}}`),
		CreateOptions{Executor: "slurm"})
	if err == nil || !strings.Contains(err.Error(), `"external:good" is an external system, which only the local executor runs`) {
		t.Errorf("slurm grid with an external system: %v", err)
	}
}

// waitUntil polls cond every 20 ms until it holds or d has passed.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for dl := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(dl) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
