package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
)

// badLines are lines that are not the run's (a run of 5 epochs at most):
// written by the fake child after epoch 0 (bad_lines) and into a record
// log replayed after a crash. Each has what its refusal must say.
var badLines = []string{
	`{"type":"epoch","epoch":-5,"epoch_s":0.5,"batches":3}`,
	`{"type":"epoch","epoch":1000000000000000000,"epoch_s":0.5,"batches":3}`,
	`{"type":"epoch","epoch":1,"epoch_s":99,"batches":3,"run_id":999}`,
	`{"type":"sample","t":0.25,"cpu_pct":1,"rss_bytes":999,"run_id":999}`,
	`{"type":"epoch","epoch":2,"epoch_s":`,
	`{"type":"epoch","epoch":"1","epoch_s":0.5}`,
	`{"type":"epoch","epoch_s":0.5}`,
	`{"type":"epoch","epoch":0,"epoch_s":0.5}`,
}

// badLineReasons: what the refusal of each of badLines says.
var badLineReasons = []string{
	"epoch -5 is outside 0..",
	"epoch 1000000000000000000 is outside 0..",
	"run_id 999 is not this run's",
	"run_id 999 is not this run's",
	"not valid JSON",
	`"epoch" is a string, not an integer`,
	`required field "epoch" is missing`,
	"epoch 0 is out of order",
}

// refusals returns the run's events that say a line was refused.
func refusals(t *testing.T, st *store.Store, runID int64) []string {
	t.Helper()
	evs, err := st.RunEvents(context.Background(), runID, store.EventLog)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if strings.Contains(ev.Msg, "refused") {
			out = append(out, ev.Msg)
		}
	}
	return out
}

// TestChildLinesNotTheRunsAreRefused: a real child writes, between its
// epochs, lines that are not its run's (epoch −5, epoch 10^18, records of
// run 999, a cut line, a string epoch, an epoch without its number, an
// epoch again): none is stored, each refusal is an event of the run
// naming the stdout line and why, and the run's own epochs are stored.
func TestChildLinesNotTheRunsAreRefused(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":3,"options":{"epoch_ms":"10","bad_lines":"1"}}`)
	r := h.waitRuns(e.ID, "finished", finished)[0]
	if r.Status != store.StatusDone {
		t.Fatalf("run ended %s (%s)", r.Status, r.Error)
	}
	eps, err := h.st.Epochs(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 3 {
		t.Fatalf("stored epochs %+v, want 0, 1, 2", eps)
	}
	for i, ep := range eps {
		if ep.Epoch != i || ep.EpochS > 1 {
			t.Fatalf("stored epoch %d: %+v (a line that is not the run's was stored)", i, ep)
		}
	}
	smp, err := h.st.Samples(context.Background(), r.ID, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range smp {
		if s.RSSBytes == 999 {
			t.Fatalf("run 999's sample was stored: %+v", s)
		}
	}
	got := refusals(t, h.st, r.ID)
	checkRefusals(t, got, "stdout line ", badLineReasons)
}

// checkRefusals: every reason is said by one refusal naming where the
// line was (where, then its number), in order.
func checkRefusals(t *testing.T, got []string, where string, reasons []string) {
	t.Helper()
	i := 0
	for _, msg := range got {
		if i < len(reasons) && strings.Contains(msg, reasons[i]) {
			if !strings.Contains(msg, where) {
				t.Errorf("refusal %q does not say where the line was (%q and its number)", msg, where)
			}
			i++
		}
	}
	if i < len(reasons) {
		t.Fatalf("no refusal says %q; refusals:\n%s", reasons[i], strings.Join(got, "\n"))
	}
}

// TestCrashReplayRefusesLinesNotTheRuns replays the crash of issue 33: a
// run's record log holds epoch −5, epoch 10^18, records of run 999, a
// corrupt line, an epoch out of order and a line cut by the crash. The
// next server (a real store, the record log on disk) ingests it when it
// starts: only the run's own epochs and samples are stored, and each line
// it refuses is logged in the run's events with its line number and why.
func TestCrashReplayRefusesLinesNotTheRuns(t *testing.T) {
	h := newHarness(t, nil)
	e := h.create(`{"dataset":"tiny","system":"fake","epochs":5}`)
	runs, _ := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
	id := runs[0].ID
	// The dead server had claimed the run and stored its epoch 0.
	if err := h.st.Update(context.Background(), func(tx *store.Tx) error {
		if _, err := tx.ClaimRun(id); err != nil {
			return err
		}
		return tx.InsertEpoch(id, &metrics.EpochRecord{Type: metrics.TypeEpoch, Epoch: 0, EpochS: 1})
	}); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"type":"start","system":"fake","dataset":"tiny","config":{}}`,
		`{"type":"epoch","epoch":0,"epoch_s":1}`,
		`{"type":"epoch","epoch":-5,"epoch_s":2}`,
		`{"type":"epoch","epoch":1000000000000000000,"epoch_s":3}`,
		`{"type":"epoch","epoch":1,"epoch_s":4,"run_id":999}`,
		`{"type":"sample","t":1,"rss_bytes":999,"run_id":999}`,
		`{"type":"epoch","epoch":2,"epo`,
		`{"type":"epoch","epoch":1,"epoch_s":5}`,
		`{"type":"sample","t":2,"rss_bytes":6}`,
		`{"type":"epoch","epoch":0,"epoch_s":6}`,
	}
	os.MkdirAll(h.m.runDir(id), 0o755)
	cut := `{"type":"epoch","epoch":2,"epoch_s":7` // the crash cut the last line
	if err := os.WriteFile(h.m.recordLogPath(id), []byte(strings.Join(lines, "\n")+"\n"+cut), 0o644); err != nil {
		t.Fatal(err)
	}
	h.start() // the next server: ingests the record log, then marks the run interrupted
	r := h.waitStatus(id, store.StatusInterrupted)
	eps, _ := h.st.Epochs(context.Background(), id)
	if len(eps) != 2 || eps[0].Epoch != 0 || eps[0].EpochS != 1 || eps[1].Epoch != 1 || eps[1].EpochS != 5 || r.EpochsDone != 2 {
		t.Fatalf("after the replay: epochs %+v (epochs_done %d), want epoch 0 (1 s) and epoch 1 (5 s)", eps, r.EpochsDone)
	}
	smp, _ := h.st.Samples(context.Background(), id, 0, 0, 0)
	if len(smp) != 1 || smp[0].T != 2 {
		t.Fatalf("samples %+v, want the one at t=2", smp)
	}
	got := refusals(t, h.st, id)
	want := []struct {
		line   int
		reason string
	}{
		{3, "epoch -5 is outside 0..4"},
		{4, "epoch 1000000000000000000 is outside 0..4"},
		{5, "run_id 999 is not this run's"},
		{6, "run_id 999 is not this run's"},
		{7, "not valid JSON"},
		{10, "epoch 0 is out of order"},
		{11, "cut"},
	}
	for _, w := range want {
		found := false
		for _, msg := range got {
			found = found || strings.Contains(msg, fmt.Sprintf("%s line %d ", RecordLogFile, w.line)) && strings.Contains(msg, w.reason)
		}
		if !found {
			t.Errorf("no refusal of %s line %d saying %q; refusals:\n%s", RecordLogFile, w.line, w.reason, strings.Join(got, "\n"))
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d refusals, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

// FuzzRecordLines: whatever lines a run's child, records file or record
// log hold, checking them never panics, and what is accepted is the
// run's: a record of a known type with its fields, no other run's id,
// epochs within the run's 0..epochs-1 and strictly increasing, samples'
// times strictly increasing and not negative; and a record accepted,
// written again by engine/metrics' own types, is accepted again (the
// check refuses nothing the engine writes).
func FuzzRecordLines(f *testing.F) {
	for _, s := range []string{
		`{"type":"epoch","epoch":0,"epoch_s":1.5,"batches":3}` + "\n" + `{"type":"sample","t":1,"rss_bytes":100}`,
		`{"type":"start","system":"fake","dataset":"tiny","config":{"epochs":5}}` + "\n" + `{"type":"log","level":"warn","msg":"deviation: x","t":0.1}`,
		`{"type":"progress","epoch":4,"batch":3,"batches":9,"elapsed_s":2}` + "\n" + `{"type":"summary","outcome":"done","epochs":5,"deviations":["a"]}`,
		strings.Join(badLines, "\n"),
		`{"type":"epoch","epoch":1,"epoch":-5,"epoch_s":1}` + "\n" + `{"type":"epoch","epoch":1e0,"epoch_s":1}`,
		`{"type":"sample","t":-1e300}` + "\n" + `{"type":"sample","t":1e308,"run_id":7}` + "\n" + `{"type":"sample","t":2,"run_id":7.5}`,
		"not json\n{}\n{\"type\":5}\n{\"type\":null}\n{\"type\":\"epoch\",\"epoch\":null,\"epoch_s\":1}",
		`{"type":"summary","outcome":"done","epochs":6}` + "\n" + `{"type":"start","system":"other","dataset":"tiny"}`,
	} {
		f.Add([]byte(s))
	}
	run := store.Run{ID: 7, System: "fake", Config: []byte(`{"epochs":5}`)}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := newRecordCheck(run)
		lastEpoch, lastT := -1, -1.0
		for _, line := range bytes.Split(b, []byte("\n")) {
			rec, err := c.check(line)
			if err != nil {
				if err.Error() == "" {
					t.Fatalf("a refusal without a reason: %q", line)
				}
				continue
			}
			if rec.RunID != nil && *rec.RunID != run.ID {
				t.Fatalf("run %d's line accepted: %q", *rec.RunID, line)
			}
			var again []byte
			switch {
			case rec.Start != nil:
				if rec.Start.System != run.System {
					t.Fatalf("another system's start accepted: %q", line)
				}
				again, _ = json.Marshal(rec.Start)
			case rec.Epoch != nil:
				e := rec.Epoch.Epoch
				if e < 0 || e >= 5 || e <= lastEpoch || rec.Epoch.EpochS < 0 {
					t.Fatalf("epoch %d (after %d, %v s) accepted: %q", e, lastEpoch, rec.Epoch.EpochS, line)
				}
				lastEpoch = e
				again, _ = json.Marshal(rec.Epoch)
			case rec.Sample != nil:
				if rec.Sample.T < 0 || rec.Sample.T <= lastT {
					t.Fatalf("sample at t=%v (after %v) accepted: %q", rec.Sample.T, lastT, line)
				}
				lastT = rec.Sample.T
				again, _ = json.Marshal(rec.Sample)
			case rec.Progress != nil:
				again, _ = json.Marshal(rec.Progress)
			case rec.Log != nil:
				again, _ = json.Marshal(rec.Log)
			case rec.Summary != nil:
				again, _ = json.Marshal(rec.Summary)
			default:
				t.Fatalf("accepted without a record: %q", line)
			}
			fresh := newRecordCheck(run)
			if rec.Epoch != nil {
				fresh.lastEpoch = rec.Epoch.Epoch - 1
			}
			if _, err := fresh.check(again); err != nil {
				t.Fatalf("%q accepted, but as engine/metrics writes it again (%s) refused: %v", line, again, err)
			}
		}
	})
}

// TestRecordCheckSystemEntryWithOptions: a run whose system entry carries
// options ("helios:cpu_cache=10%") accepts its child's start record, which
// names the variant alone, and still refuses another variant's.
func TestRecordCheckSystemEntryWithOptions(t *testing.T) {
	run := store.Run{ID: 3, System: "helios:cpu_cache=10%", Config: []byte(`{"epochs":2}`)}
	if _, err := newRecordCheck(run).check([]byte(`{"type":"start","system":"helios","dataset":"tiny"}`)); err != nil {
		t.Errorf("the variant's own start refused: %v", err)
	}
	if _, err := newRecordCheck(run).check([]byte(`{"type":"start","system":"gids","dataset":"tiny"}`)); err == nil || !strings.Contains(err.Error(), "not this run's") {
		t.Errorf("another variant's start: %v, want refused as not this run's", err)
	}
}
