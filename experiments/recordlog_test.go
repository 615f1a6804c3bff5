package experiments

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"outcore/experiments/grid"
	"outcore/store"
)

// FuzzRecordLogIngest: whatever a run's record log holds (a child's
// stdout, cut by a crash, or a file left in the run directory), reading
// it never fails on content and ingesting it into a real store either
// stores every epoch of the run it holds or says why, without a panic; no
// line that is not a whole line is counted, and every line is either one
// of the run's records or refused.
func FuzzRecordLogIngest(f *testing.F) {
	for _, s := range []string{
		`{"type":"epoch","epoch":0,"epoch_s":1.5,"train_loss":0.7}` + "\n" + `{"type":"sample","t":1,"rss_bytes":100}` + "\n",
		`{"type":"summary","outcome":"done","deviations":["a","b"]}` + "\n",
		`{"type":"epoch","epoch":1,"stages":{"sample":{"s":1}},"tiers":{"device":{"hits":3}}}` + "\n" + `{"type":"epo`,
		"not json\n{}\n{\"type\":5}\n",
		`{"type":"epoch","epoch":-3,"epoch_s":-1e308}` + "\n" + `{"type":"epoch","epoch":2147483648}` + "\n",
		`{"type":"sample","t":-1e300,"cgroup_bytes":-5}` + "\n" + `{"type":"sample","t":1e300}` + "\n",
	} {
		f.Add([]byte(s))
	}
	ctx := context.Background()
	dir := f.TempDir()
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	m, err := New(testOptions(dir, st))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { m.Close() })
	var run store.Run
	err = st.Update(ctx, func(tx *store.Tx) error {
		e := store.Experiment{Name: "fuzz", Dataset: "tiny", Grid: []byte(`{}`), BaseConfig: []byte(`{}`)}
		if err := tx.InsertExperiment(&e); err != nil {
			return err
		}
		run = store.Run{ExperimentID: e.ID, System: "fake", Dataset: "tiny", Model: "sage", Config: []byte(`{}`), Executor: store.ExecutorLocal}
		return tx.InsertRun(&run)
	})
	if err != nil {
		f.Fatal(err)
	}
	path := m.recordLogPath(run.ID)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err := readRecordLog(path, run)
		if err != nil {
			t.Fatalf("readRecordLog: %v", err)
		}
		if whole := bytes.Count(b, []byte("\n")); recs.lines != whole {
			t.Fatalf("%d lines counted, the log has %d whole lines", recs.lines, whole)
		}
		for _, e := range recs.epochs {
			if e.Epoch < 0 || e.Epoch >= grid.MaxEpochs {
				t.Fatalf("epoch %d accepted from the log", e.Epoch)
			}
		}
		if err := m.ingestRecordLog(ctx, run, true); err != nil {
			t.Fatalf("ingest: %v", err)
		}
		eps, err := st.Epochs(ctx, run.ID)
		if err != nil {
			t.Fatalf("epochs read back: %v", err)
		}
		have := map[int]bool{}
		for _, e := range eps {
			have[e.Epoch] = true
		}
		for _, e := range recs.epochs {
			if !have[e.Epoch] {
				t.Fatalf("epoch %d of the log is not stored", e.Epoch)
			}
		}
	})
}
