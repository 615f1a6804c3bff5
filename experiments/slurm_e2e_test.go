package experiments

// End-to-end tests of the slurm executor against a real Slurm cluster:
// scripts/slurm-local.sh's single-node cluster (make test starts it through
// scripts/install-deps.sh; a test starts it too when it is down). Skipped,
// saying why, only when Slurm cannot start here, and with -short.

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"outcore/experiments/slurm"
	"outcore/store"
)

var (
	outcoreBinOnce sync.Once
	outcoreBinDir  string
	outcoreBin     string
	outcoreBinErr  error
)

// outcoreBinary builds the outcore binary once per test binary: the jobs
// run its dataset commands (data digest, data gen) and, in
// TestSlurmGridFromCLI, the real engine.
func outcoreBinary(t *testing.T) string {
	t.Helper()
	outcoreBinOnce.Do(func() {
		outcoreBinDir, outcoreBinErr = os.MkdirTemp("", "outcore-slurm-bin-")
		if outcoreBinErr != nil {
			return
		}
		outcoreBin = filepath.Join(outcoreBinDir, "outcore")
		cmd := exec.Command("go", "build", "-buildvcs=false", "-o", outcoreBin, "outcore/cmd/outcore")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			outcoreBinErr = fmt.Errorf("go build: %v\n%s", err, stderr.String())
		}
	})
	if outcoreBinErr != nil {
		t.Fatal(outcoreBinErr)
	}
	return outcoreBin
}

// slurmTakesJobs reports whether sbatch exists and a node takes jobs.
func slurmTakesJobs() bool {
	if _, err := exec.LookPath("sbatch"); err != nil {
		return false
	}
	out, err := exec.Command("sinfo", "--noheader", "--Node", "--format=%T").Output()
	if err != nil {
		return false
	}
	for _, st := range strings.Fields(string(out)) {
		st = strings.TrimRight(st, "*~#!%$@^-")
		if st == "idle" || st == "mixed" || st == "allocated" || st == "completing" {
			return true
		}
	}
	return false
}

var slurmStartOnce sync.Once

// requireSlurm starts scripts/slurm-local.sh's cluster when Slurm does not
// take jobs, and skips the test, with the reason, when it cannot start.
func requireSlurm(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the Slurm end-to-end tests submit real jobs; -short skips them")
	}
	if slurmTakesJobs() {
		return
	}
	var out []byte
	var err error
	slurmStartOnce.Do(func() {
		out, err = exec.Command(filepath.Join("..", "scripts", "slurm-local.sh"), "start").CombinedOutput()
	})
	if slurmTakesJobs() {
		return
	}
	t.Skipf("SKIPPED: Slurm cannot start on this machine (scripts/slurm-local.sh start: %v: %s); the slurm executor's end-to-end tests need sbatch and a node that takes jobs",
		err, strings.TrimSpace(string(out)))
}

// testSlurmOptions are the slurm executor's options in tests: the jobs'
// dataset commands use bin, squeue is asked three times a second.
func testSlurmOptions(bin string) slurm.Options {
	return slurm.Options{Outcore: bin, Poll: 300 * time.Millisecond}
}

// slurmHarness is a harness whose fake children run as Slurm jobs.
func slurmHarness(t *testing.T) *harness {
	bin := outcoreBinary(t)
	return newHarness(t, func(o *Options) { o.ExecutorOptions = map[string]any{slurm.Name: testSlurmOptions(bin)} })
}

// TestSlurmGridFromCLI runs a 3 variants × 2 limits grid on tiny with the
// real engine, once through the slurm executor and once through the local
// one, from the command line, and compares them: every run done, the same
// epoch columns filled for every run, Slurm's job id and node recorded.
func TestSlurmGridFromCLI(t *testing.T) {
	requireSlurm(t)
	bin := outcoreBinary(t)
	tmp := t.TempDir()
	dataDir := filepath.Join(tmp, "data")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--data-dir", dataDir)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("outcore %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return string(out)
	}
	run("data", "gen", "--preset", "tiny", "--quiet")
	grid := filepath.Join(tmp, "grid.json")
	if err := os.WriteFile(grid, []byte(`{"name":"slurm-grid","dataset":"tiny","model":"sage","epochs":1,
		"hidden":16,"fanout":[5,5],
		"axes":{"system":["pyg+","ginex","gnndrive"],"mem_limit":["64MiB","128MiB"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	out := run("exp", "create", "--file", grid, "--executor", "slurm", "--wait", "--slurm-poll", "300ms")
	t.Logf("6 runs through Slurm in %.1f s", time.Since(t0).Seconds())
	if !strings.Contains(out, "experiment 1 finished: 6 done, 0 oom, 0 failed") {
		t.Fatalf("slurm: create --wait output:\n%s", out)
	}
	t0 = time.Now()
	out = run("exp", "create", "--file", grid, "--wait")
	t.Logf("6 runs as local children in %.1f s", time.Since(t0).Seconds())
	if !strings.Contains(out, "experiment 2 finished: 6 done, 0 oom, 0 failed") {
		t.Fatalf("local: create --wait output:\n%s", out)
	}

	type table struct {
		header []string
		rows   []map[string]string
	}
	export := func(exp int, what string) table {
		recs, err := csv.NewReader(strings.NewReader(run("exp", "export", fmt.Sprint(exp), "--csv", "--what", what))).ReadAll()
		if err != nil || len(recs) < 2 {
			t.Fatalf("export %d %s: %d records, %v", exp, what, len(recs), err)
		}
		tb := table{header: recs[0]}
		for _, r := range recs[1:] {
			row := map[string]string{}
			for i, h := range recs[0] {
				row[h] = r[i]
			}
			tb.rows = append(tb.rows, row)
		}
		return tb
	}
	cell := func(r map[string]string) string { return r["system"] + "/" + r["mem_limit_bytes"] }

	enforcedHere := haveCgroups(t)
	for _, r := range export(1, "runs").rows {
		if r["status"] != "done" || r["executor"] != "slurm" || r["job_id"] == "" || r["node"] == "" {
			t.Errorf("slurm run %s: status %s executor %q job %q node %q", r["run_id"], r["status"], r["executor"], r["job_id"], r["node"])
		}
		if enforcedHere && r["limit_enforced"] != "1" {
			t.Errorf("slurm run %s: limit not enforced: %s", r["run_id"], r["limit_note"])
		}
	}
	for _, r := range export(2, "runs").rows {
		if r["executor"] != "local" || r["job_id"] != "" {
			t.Errorf("local run %s: executor %q job %q", r["run_id"], r["executor"], r["job_id"])
		}
	}
	se, le := export(1, "epochs"), export(2, "epochs")
	if strings.Join(se.header, ",") != strings.Join(le.header, ",") {
		t.Fatalf("epoch columns differ:\nslurm %v\nlocal %v", se.header, le.header)
	}
	// The same epochs per cell, and the same columns filled in each. Tier,
	// counter and disk-service columns are left out: which tiers served
	// rows depends on what the page cache held, and jobs running side by
	// side on one node warm it for each other (a pyg+ epoch may then read
	// no row from the device, count no rows_delivered, and see the disk
	// serve no read, which leaves its disk_* cells empty).
	shape := func(tb table) map[string][]string {
		out := map[string][]string{}
		for _, r := range tb.rows {
			var filled []string
			for _, h := range tb.header {
				if r[h] != "" && h != "run_id" && !strings.HasPrefix(h, "tier_") && !strings.HasPrefix(h, "counter_") && !strings.HasPrefix(h, "disk_") {
					filled = append(filled, h)
				}
			}
			out[cell(r)] = append(out[cell(r)], r["epoch"]+":"+strings.Join(filled, ","))
		}
		for k := range out {
			sort.Strings(out[k])
		}
		return out
	}
	ss, ls := shape(se), shape(le)
	if len(ss) != 6 || len(ls) != 6 {
		t.Fatalf("epochs of %d slurm cells and %d local cells, want 6 each", len(ss), len(ls))
	}
	for k, v := range ls {
		if strings.Join(ss[k], "|") != strings.Join(v, "|") {
			t.Errorf("cell %s: slurm epochs %v, local %v", k, ss[k], v)
		}
	}
}

// TestSlurmCancelAndKill: the dashboard's cancel of a running run becomes
// scancel (cancelled in Slurm and in the store); a job killed behind
// outcore's back with `scancel --signal=KILL` ends failed with its reason.
func TestSlurmCancelAndKill(t *testing.T) {
	requireSlurm(t)
	h := slurmHarness(t)
	h.start()
	e := h.create(`{"dataset":"tiny","executor":"slurm","epochs":3,"axes":{"system":["fake","fake2"]},"options":{"hang":"1"}}`)
	runs := h.waitRuns(e.ID, "running in Slurm with an epoch stored", func(r store.Run) bool {
		return r.JobState == "RUNNING" && r.EpochsDone >= 1
	})
	ctx := context.Background()
	cancelled, killed := runs[0], runs[1]

	if err := h.m.CancelRun(ctx, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	r := h.waitStatus(cancelled.ID, store.StatusCancelled)
	info, err := slurm.CLI{}.Show(ctx, r.JobID)
	if err != nil || info.State != "CANCELLED" {
		t.Fatalf("Slurm says job %s is %+v (%v), want CANCELLED", r.JobID, info, err)
	}
	if r.JobState != "CANCELLED" || !strings.Contains(r.Error, "scancel") || r.EpochsDone != 1 {
		t.Errorf("cancelled run: job state %q, error %q, %d epochs", r.JobState, r.Error, r.EpochsDone)
	}

	if out, err := exec.Command("scancel", "--signal=KILL", killed.JobID).CombinedOutput(); err != nil {
		t.Fatalf("scancel --signal=KILL %s: %v %s", killed.JobID, err, out)
	}
	r = h.waitStatus(killed.ID, store.StatusFailed)
	if !strings.Contains(r.Error, "Slurm job "+killed.JobID) || !strings.Contains(r.Error, "outside outcore") {
		t.Errorf("killed run's error %q does not say the job was killed outside outcore", r.Error)
	}
	if r.EpochsDone != 1 || r.StderrTail == "" {
		t.Errorf("killed run: %d epochs, stderr tail %q", r.EpochsDone, r.StderrTail)
	}
	t.Logf("killed run: %s", r.Error)
}

// TestSlurmNodeFailure takes the node of a running job down (its job is
// not requeued: --no-requeue): the run ends failed, naming the node and
// Slurm's reason.
func TestSlurmNodeFailure(t *testing.T) {
	requireSlurm(t)
	h := slurmHarness(t)
	h.start()
	e := h.create(`{"dataset":"tiny","executor":"slurm","system":"fake","epochs":3,"options":{"hang":"1"},
		"slurm":{"args":"--no-requeue"}}`)
	r := h.waitRuns(e.ID, "running in Slurm", func(r store.Run) bool { return r.JobState == "RUNNING" && r.Node != "" })[0]
	resume := func() {
		for dl := time.Now().Add(30 * time.Second); time.Now().Before(dl); time.Sleep(200 * time.Millisecond) {
			exec.Command("scontrol", "update", "NodeName="+r.Node, "State=RESUME").Run()
			if slurmTakesJobs() {
				return
			}
		}
		t.Errorf("node %s does not take jobs again", r.Node)
	}
	t.Cleanup(resume)
	if out, err := exec.Command("scontrol", "update", "NodeName="+r.Node, "State=DOWN", "Reason=outcore node failure test").CombinedOutput(); err != nil {
		t.Fatalf("take node %s down: %v %s", r.Node, err, out)
	}
	r = h.waitStatus(r.ID, store.StatusFailed)
	if !strings.Contains(r.Error, "node "+r.Node+" failed (NODE_FAIL") {
		t.Errorf("error %q does not name the node failure", r.Error)
	}
	t.Logf("node failure: %s", r.Error)
	resume()
}

// TestSlurmOOMFromTheRunsCgroup: a job whose training process was killed by
// its own memory cgroup (an oom summary, exit 1: Slurm says FAILED) ends oom.
func TestSlurmOOMFromTheRunsCgroup(t *testing.T) {
	requireSlurm(t)
	h := slurmHarness(t)
	h.start()
	e := h.create(`{"dataset":"tiny","executor":"slurm","system":"fake","epochs":3,"options":{"oom":"1"}}`)
	r := h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusOOM || !strings.Contains(r.Error, "FAILED") || !strings.Contains(r.Error, "killed by the memory limit") {
		t.Fatalf("run: %s %q", r.Status, r.Error)
	}
	if r.ExitCode == nil || *r.ExitCode != 1 || r.EpochsDone != 1 || len(r.Summary) == 0 {
		t.Errorf("run: exit code %v, %d epochs, summary %s", r.ExitCode, r.EpochsDone, r.Summary)
	}
}

// TestSlurmRequeue: a job requeued by Slurm trains again in a new records
// file; its epochs replace those of the execution that did not finish.
func TestSlurmRequeue(t *testing.T) {
	requireSlurm(t)
	h := slurmHarness(t)
	h.start()
	e := h.create(`{"dataset":"tiny","executor":"slurm","system":"fake","epochs":4,"options":{"epoch_ms":"500"}}`)
	r := h.waitRuns(e.ID, "past its first epoch", func(r store.Run) bool { return r.EpochsDone >= 1 && r.JobState == "RUNNING" })[0]
	if out, err := exec.Command("scontrol", "requeue", r.JobID).CombinedOutput(); err != nil {
		t.Fatalf("scontrol requeue %s: %v %s", r.JobID, err, out)
	}
	// A requeued job waits before it is eligible again (its BeginTime);
	// let it start now — but not within the second in which slurmd killed
	// its first execution: slurmd refuses to launch a job whose credential
	// it revoked up to that second ("Job N already killed, do not launch
	// batch job"; the job then ends FAILED, exit 1), which the wait
	// Slurm imposes avoids. So first wait for the first execution to have
	// ended on the node (PENDING, no longer COMPLETING), then for the next
	// second.
	for dl := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, err := exec.Command("squeue", "--noheader", "--jobs="+r.JobID, "--format=%T").CombinedOutput()
		if err == nil && strings.TrimSpace(string(out)) == "PENDING" {
			break
		}
		if time.Now().After(dl) {
			t.Fatalf("job %s did not go back to PENDING after the requeue: %v %s", r.JobID, err, out)
		}
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	for dl := time.Now().Add(20 * time.Second); time.Now().Before(dl); time.Sleep(200 * time.Millisecond) {
		out, _ := exec.Command("scontrol", "update", "JobId="+r.JobID, "StartTime=now").CombinedOutput()
		if strings.Contains(string(out), "no longer pending") {
			break
		}
	}
	r = h.waitStatus(r.ID, store.StatusDone)
	eps, err := h.st.Epochs(context.Background(), r.ID)
	if err != nil || len(eps) != 4 {
		t.Fatalf("epochs after the requeue: %d, %v", len(eps), err)
	}
	for i, ep := range eps {
		if ep.Epoch != i {
			t.Fatalf("epochs %v are not 0..3", eps)
		}
	}
	if r.RecordsFile != slurm.RecordsFileName(r.JobID, 1) {
		t.Errorf("records file %q, want the second execution's %q", r.RecordsFile, slurm.RecordsFileName(r.JobID, 1))
	}
	evs, err := h.st.RunEvents(context.Background(), r.ID, store.EventLog)
	if err != nil {
		t.Fatal(err)
	}
	requeued := false
	for _, ev := range evs {
		requeued = requeued || strings.Contains(ev.Msg, "Slurm requeued job "+r.JobID)
	}
	if !requeued {
		t.Error("no event says the job was requeued")
	}
}

// TestSlurmServerKilledPicksUpJobs kills a queue server with SIGKILL while
// its grid runs in Slurm, lets the jobs go on writing epochs with no server,
// then starts another: it picks the runs up again and every epoch every job
// wrote is stored exactly once.
func TestSlurmServerKilledPicksUpJobs(t *testing.T) {
	requireSlurm(t)
	bin := outcoreBinary(t)
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
	const epochs = 6
	e, err := m.Create(ctx, []byte(fmt.Sprintf(`{"dataset":"tiny","executor":"slurm","epochs":%d,
		"axes":{"system":["fake","fake2","fake3"],"repeat":2},"options":{"epoch_ms":"400"}}`, epochs)))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envSlurmOutcore, bin)
	srv, lines := startServer(t, dataDir)
	published := 0
	deadline := time.After(90 * time.Second)
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
	runs, err := st.Runs(ctx, store.RunFilter{ExperimentID: e.ID})
	if err != nil {
		t.Fatal(err)
	}
	inSlurm := 0
	for _, r := range runs {
		if r.Status == store.StatusRunning && r.JobID != "" {
			inSlurm++
		}
	}
	if inSlurm == 0 {
		t.Fatal("no run was in Slurm when the server was killed")
	}
	// The jobs go on without a server.
	time.Sleep(2 * time.Second)

	_, lines2 := startServer(t, dataDir)
	go func() {
		for range lines2 {
		}
	}()
	for dl := time.Now().Add(120 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		runs, err = st.Runs(ctx, store.RunFilter{ExperimentID: e.ID})
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, r := range runs {
			if r.Status == store.StatusDone {
				done++
			} else if store.Finished(r.Status) {
				t.Fatalf("run %d ended %s: %s", r.ID, r.Status, r.Error)
			}
		}
		if done == len(runs) {
			break
		}
		if time.Now().After(dl) {
			t.Fatalf("%d of %d runs done two minutes after the restart", done, len(runs))
		}
	}
	pickedUp := 0
	for _, r := range runs {
		eps, err := st.Epochs(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(eps) != epochs || r.EpochsDone != epochs {
			t.Errorf("run %d: %d epochs stored (epochs_done %d), want %d", r.ID, len(eps), r.EpochsDone, epochs)
		}
		evs, err := st.RunEvents(ctx, r.ID, store.EventEpoch, store.EventLog)
		if err != nil {
			t.Fatal(err)
		}
		epochEvents := 0
		for _, ev := range evs {
			if ev.Kind == store.EventEpoch {
				epochEvents++
			}
			if strings.Contains(ev.Msg, "picked up again after a restart") {
				pickedUp++
			}
		}
		if epochEvents != epochs {
			t.Errorf("run %d: %d epoch events, want %d (each record ingested once)", r.ID, epochEvents, epochs)
		}
	}
	if pickedUp != inSlurm {
		t.Errorf("%d runs picked up again, %d were in Slurm", pickedUp, inSlurm)
	}
	t.Logf("killed the server with %d runs in Slurm after %d published epochs; all %d runs done with %d epochs each", inSlurm, published, len(runs), epochs)
}

// TestSlurmNodeDataDir: with a per-node data directory the job generates
// the dataset there from the shared meta.json and checks its digest before
// training; a node copy that differs from the server's fails the run with
// the digest mismatch named.
func TestSlurmNodeDataDir(t *testing.T) {
	requireSlurm(t)
	bin := outcoreBinary(t)
	nodeDir := filepath.Join(t.TempDir(), "node")
	h := newHarness(t, func(o *Options) {
		so := testSlurmOptions(bin)
		so.NodeDataDir = nodeDir
		o.ExecutorOptions = map[string]any{slurm.Name: so}
	})
	h.start()
	e := h.create(`{"dataset":"tiny","executor":"slurm","system":"fake","epochs":1}`)
	r := h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusDone {
		t.Fatalf("run on a node data directory: %s %s\n%s", r.Status, r.Error, r.StderrTail)
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "datasets", "tiny", "meta.json")); err != nil {
		t.Fatalf("the job did not generate the dataset in the node data directory: %v", err)
	}
	if !strings.Contains(r.StderrTail, "(as expected)") {
		t.Errorf("no digest check in the job's stderr:\n%s", r.StderrTail)
	}
	cfg, err := os.ReadFile(filepath.Join(h.m.runDir(r.ID), "config.json"))
	if err != nil || !strings.Contains(string(cfg), `"data_dir":"`+nodeDir+`"`) {
		t.Errorf("the run's config does not point at the node data directory: %s %v", cfg, err)
	}

	// Another node directory holding a different "tiny" (another seed): a
	// grid may name one inside the queue's node data directory.
	otherDir := filepath.Join(nodeDir, "other")
	if out, err := exec.Command(bin, "data", "gen", "--preset", "tiny", "--name", "tiny", "--seed", "7", "--quiet",
		"--data-dir", otherDir).CombinedOutput(); err != nil {
		t.Fatalf("data gen: %v %s", err, out)
	}
	e = h.create(fmt.Sprintf(`{"dataset":"tiny","executor":"slurm","system":"fake","epochs":1,"slurm":{"node_data_dir":%q}}`, otherDir))
	r = h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusFailed || !strings.Contains(r.Error, "digest mismatch") || r.EpochsDone != 0 {
		t.Fatalf("run on a different copy: %s, %d epochs, error %q", r.Status, r.EpochsDone, r.Error)
	}
	t.Logf("mismatch: %s", r.Error)
}

// TestSlurmDataDirWithBlank: a data directory whose path holds a blank
// (and a quote) runs its Slurm jobs to the end; before, the #SBATCH lines
// split such a path and every job of it failed.
func TestSlurmDataDirWithBlank(t *testing.T) {
	requireSlurm(t)
	bin := outcoreBinary(t)
	dir := filepath.Join(t.TempDir(), "it's a data dir")
	if err := os.Rename(newDataDir(t), dir); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(dir, st)
	opts.Logf = t.Logf
	opts.ExecutorOptions = map[string]any{slurm.Name: testSlurmOptions(bin)}
	h := harnessOn(t, dir, st, opts)
	h.start()
	e := h.create(`{"dataset":"tiny","executor":"slurm","system":"fake","epochs":2}`)
	r := h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusDone || r.EpochsDone != 2 {
		t.Fatalf("run in %q: %s, %d epochs, %s\n%s", dir, r.Status, r.EpochsDone, r.Error, r.StderrTail)
	}
	if _, err := os.Stat(filepath.Join(h.m.runDir(r.ID), slurm.JobStderrFile)); err != nil {
		t.Errorf("the job's stderr is not in the run directory: %v", err)
	}
}
