package record

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outcore/experiments/external"
)

// TestLinesParse: every line the writer writes is one ParseLine accepts,
// with the values written.
func TestLinesParse(t *testing.T) {
	p := filepath.Join(t.TempDir(), "records.jsonl")
	t.Setenv(EnvRecords, p)
	w, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		err := w.Epoch(Epoch{Epoch: i, EpochS: 0.5 + float64(i), Stages: map[string]float64{"sample": 0.1, "forward": 0.2},
			Wall: &Wall{Train: 0.4}, Batches: 4, BytesRead: 1 << 20, Tiers: map[string]Tier{"cpu": {Lookups: 10, Hits: 3}},
			TrainLoss: F(1.25), TrainAcc: F(0.5), ValAcc: F(0.4), TestAcc: F(0.39), Counters: map[string]int64{"reads": 7},
			Extra: map[string]float64{"lr": 0.01}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Log("warn", "no GPU here"); err != nil {
		t.Fatal(err)
	}
	if err := w.Summary(Summary{Epochs: 3, BestEpoch: 2, BestValAcc: 0.4, TestAcc: 0.39, TotalS: 5}); err != nil {
		t.Fatal(err)
	}
	if err := w.Epoch(Epoch{Epoch: 3, EpochS: math.NaN()}); err == nil || !strings.Contains(err.Error(), "not a finite number") {
		t.Errorf("a NaN epoch_s was written: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Log("info", "after close"); err == nil {
		t.Error("a closed writer wrote")
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var types []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		r, err := external.ParseLine(sc.Bytes())
		if err != nil {
			t.Fatalf("line %q refused: %v", sc.Text(), err)
		}
		types = append(types, r.Type)
		if r.Epoch != nil {
			e := r.Epoch
			if e.EpochS != 0.5+float64(e.Epoch) || e.SampleS != 0.1 || e.Stages["forward_s"] != 0.2 || e.WallTrainS != 0.4 ||
				e.BytesRead != 1<<20 || e.Tiers["cpu"].Hits != 3 || e.TrainLoss != 1.25 || !e.Evaluated || e.ValAcc != 0.4 ||
				e.Counters["reads"] != 7 || string(e.Extra["lr"]) != "0.01" {
				t.Errorf("epoch read back as %+v", e)
			}
		}
		if r.Summary != nil && (r.Summary.Epochs != 3 || r.Summary.BestEpoch != 2 || r.Summary.TotalS != 5) {
			t.Errorf("summary read back as %+v", r.Summary)
		}
	}
	if got := strings.Join(types, ","); got != "epoch,epoch,epoch,log,summary" {
		t.Errorf("lines %s", got)
	}
}

// TestOpenFD: a descriptor the parent opened (outcore's /dev/fd/N).
func TestOpenFD(t *testing.T) {
	r, wf, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := OpenFD(wf.Fd())
	if err := w.Epoch(Epoch{Epoch: 0, EpochS: 1}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// The writer owned the descriptor and closed it; wf's Close only drops
	// its finalizer, which would otherwise close the number again later.
	_ = wf.Close()
	line, err := bufio.NewReader(r).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := external.ParseLine(line); err != nil || rec.Epoch == nil || rec.Epoch.EpochS != 1 {
		t.Errorf("%q: %+v %v", line, rec, err)
	}
	t.Setenv(EnvRecords, "")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), EnvRecords) {
		t.Errorf("FromEnv without the variable: %v", err)
	}
}
