package external

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"outcore/engine/metrics"
)

func TestParseEpochLine(t *testing.T) {
	line := `{"type": "epoch", "epoch": 2, "epoch_s": 1.5, "warmup": false,
	  "stages": {"sample": 0.2, "extract_s": 0.3, "train": 0.9, "stall": 0.1, "forward": 0.4},
	  "wall": {"sample": 0.1, "load": 0.2, "train": 1.1, "stall": 0.1},
	  "batches": 12, "bytes_read": 4096, "bytes_needed": 8192, "rows_from_device": 32,
	  "tiers": {"cpu": {"lookups": 100, "hits": 40}},
	  "train_loss": 0.7, "train_acc": 0.8, "val_acc": 0.75, "test_acc": 0.74, "eval_s": 0.05,
	  "counters": {"io_requests": 9}, "extra": {"grad_norm": 3.25}}`
	r, err := ParseLine([]byte(strings.ReplaceAll(line, "\n", " ")))
	if err != nil {
		t.Fatal(err)
	}
	e := r.Epoch
	if r.Type != metrics.TypeEpoch || e == nil || r.Log != nil || r.Summary != nil {
		t.Fatalf("record %+v", r)
	}
	if e.Epoch != 2 || e.EpochS != 1.5 || e.SampleS != 0.2 || e.ExtractS != 0.3 || e.TrainS != 0.9 || e.StallS != 0.1 ||
		e.Stages["forward_s"] != 0.4 || len(e.Stages) != 1 || e.WallTrainS != 1.1 || e.WallLoadS != 0.2 ||
		e.Batches != 12 || e.BytesRead != 4096 || e.BytesNeeded != 8192 || e.RowsFromDevice != 32 ||
		e.Tiers["cpu"] != (metrics.TierCount{Lookups: 100, Hits: 40}) || e.TrainLoss != 0.7 || e.TrainAcc != 0.8 ||
		e.ValAcc != 0.75 || e.TestAcc != 0.74 || !e.Evaluated || e.EvalS != 0.05 || e.Counters["io_requests"] != 9 ||
		string(e.Extra["grad_norm"]) != "3.25" {
		t.Errorf("epoch record %+v", e)
	}
	// What the pipeline stores: the record's JSON reads back the same,
	// the extra value as a top-level key.
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back metrics.EpochRecord
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.EpochS != 1.5 || back.Tiers["cpu"].Hits != 40 {
		t.Errorf("round trip %+v", back)
	}
	r, err = ParseLine([]byte(`{"type":"epoch","epoch":0,"epoch_s":0.25}`))
	if err != nil || r.Epoch.Evaluated || r.Epoch.BytesRead != 0 {
		t.Errorf("a minimal epoch: %+v %v", r.Epoch, err)
	}
}

func TestParseLogAndSummary(t *testing.T) {
	r, err := ParseLine([]byte(`{"type":"log","level":"warn","msg":"cache smaller than asked"}`))
	if err != nil || r.Log == nil || r.Log.Level != "warn" || r.Log.Msg != "cache smaller than asked" {
		t.Errorf("log: %+v %v", r.Log, err)
	}
	r, err = ParseLine([]byte(`{"type":"summary","epochs":3,"best_epoch":2,"best_val_acc":0.6,"test_acc":0.58,"mean_epoch_s":1.2,"total_s":4,"prepare_s":0.5,"prepare_stages":{"load":0.5},"deviations":["no GPU"]}`))
	s := r.Summary
	if err != nil || s == nil || s.Epochs != 3 || s.BestEpoch != 2 || s.BestValAcc != 0.6 || s.TestAcc != 0.58 || s.TotalS != 4 ||
		s.PrepareStages["load_s"] != 0.5 || len(s.Deviations) != 1 || s.Outcome != "" || s.PeakRSSBytes != 0 {
		t.Errorf("summary: %+v %v", s, err)
	}
}

// TestParseRefusals: a bad line is refused with the field named.
func TestLineRefusals(t *testing.T) {
	for _, c := range []struct{ line, field, msg string }{
		{`{"type":"epoch","epoch":0,"epoch_s":NaN}`, "epoch_s", "NaN is not a JSON number"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"train_loss":Infinity}`, "train_loss", "Infinity"},
		{`{"type":"epoch","epoch":0,"epoch_s":-1}`, "epoch_s", "non-negative"},
		{`{"type":"epoch","epoch":0}`, "epoch_s", "missing"},
		{`{"type":"epoch","epoch_s":1}`, "epoch", "missing"},
		{`{"type":"epoch","epoch":-1,"epoch_s":1}`, "epoch", "want 0"},
		{`{"type":"epoch","epoch":1.5,"epoch_s":1}`, "epoch", "number 1.5"},
		{`{"type":"epoch","epoch":"1","epoch_s":1}`, "epoch", "string"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"stages":{"train":-0.1}}`, "stages.train", "non-negative"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"stages":{"Train":0.1}}`, "stages.Train", "not a name"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"wall":{"train":3}}`, "wall", "more than epoch_s"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"wall":{"gpu":3}}`, "", "unknown field"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"bytes_read":-5}`, "bytes_read", "count"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"tiers":{"cpu":{"lookups":3,"hits":4}}}`, "tiers.cpu", "hits ≤ lookups"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"tiers":{"cpu":{"lookups":3}}}`, "tiers.cpu", "want"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"val_acc":75}`, "val_acc", "ratio in [0, 1]"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"test_acc":0.5}`, "test_acc", "without val_acc"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"train_loss":-2}`, "train_loss", "loss ≥ 0"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"counters":{"n":-1}}`, "counters.n", "count"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"counters":{"n":1.5}}`, "counters", "number 1.5"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"extra":{"epoch_s":1}}`, "extra.epoch_s", "outcore's own"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"msg":"x"}`, "msg", "unknown field for a epoch line"},
		{`{"type":"epoch","epoch":0,"epoch_s":1,"wall_s":3}`, "wall_s", "unknown field"},
		{`{"type":"summary","epochs":1,"outcome":"done"}`, "outcome", "unknown field"},
		{`{"type":"summary","epochs":1,"peak_rss_bytes":1}`, "peak_rss_bytes", "unknown field"},
		{`{"type":"summary","epochs":2,"best_epoch":2}`, "best_epoch", "below epochs"},
		{`{"type":"summary"}`, "epochs", "missing"},
		{`{"type":"log","level":"debug","msg":"x"}`, "level", "info, warn or error"},
		{`{"type":"log"}`, "msg", "missing"},
		{`{"type":"log","msg":""}`, "msg", "empty"},
		{`{"type":"sample","t":1}`, "type", "not a record type"},
		{`{"epoch":1}`, "type", "missing"},
		{`{"type":3}`, "type", "not a string"},
		{`[1,2]`, "", "not a JSON object"},
		{`{"type":"epoch"`, "", "not a JSON object"},
		{``, "", "empty line"},
		{`{"type":"log","msg":"` + strings.Repeat("x", MaxLineBytes) + `"}`, "", "longer than"},
	} {
		_, err := ParseLine([]byte(c.line))
		var le *LineError
		if !errors.As(err, &le) {
			t.Errorf("ParseLine(%.80s) = %v, want a *LineError", c.line, err)
			continue
		}
		if le.Field != c.field || !strings.Contains(le.Error(), c.msg) {
			t.Errorf("ParseLine(%.80s) = field %q, %q; want field %q with %q", c.line, le.Field, le.Error(), c.field, c.msg)
		}
	}
}

// FuzzProtocolLine: ParseLine never panics; a line it accepts gives
// exactly the record its type says, with finite, non-negative durations
// and counts and ratios within [0, 1]; a refusal is a *LineError.
func FuzzProtocolLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"epoch","epoch":0,"epoch_s":1.5,"stages":{"train":1},"bytes_read":10,"tiers":{"cpu":{"lookups":2,"hits":1}},"val_acc":0.5,"counters":{"a":1},"extra":{"x":2}}`,
		`{"type":"log","level":"info","msg":"hello"}`,
		`{"type":"summary","epochs":2,"best_epoch":1,"best_val_acc":0.5,"total_s":3,"prepare_stages":{"load":1}}`,
		`{"type":"epoch","epoch":0,"epoch_s":NaN}`,
		`{"type":"epoch","epoch":0,"epoch_s":1,"wall":{"train":1,"load":0.001}}`,
	} {
		f.Add([]byte(s))
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseLine(line)
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("refusal %v is not a *LineError", err)
			}
			return
		}
		n := 0
		for _, set := range []bool{r.Epoch != nil, r.Log != nil, r.Summary != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d records from one line", n)
		}
		switch r.Type {
		case metrics.TypeEpoch:
			e := r.Epoch
			if e == nil || e.Type != r.Type || e.Epoch < 0 || !finite(e.EpochS) || !finite(e.TrainLoss) || e.BytesRead < 0 ||
				!(e.ValAcc >= 0 && e.ValAcc <= 1) || !(e.TrainAcc >= 0 && e.TrainAcc <= 1) {
				t.Fatalf("accepted epoch %+v", e)
			}
			for k, v := range e.Stages {
				if !finite(v) || !strings.HasSuffix(k, "_s") {
					t.Fatalf("stage %s = %v", k, v)
				}
			}
			for k, c := range e.Tiers {
				if c.Hits < 0 || c.Hits > c.Lookups {
					t.Fatalf("tier %s = %+v", k, c)
				}
			}
			if _, err := json.Marshal(e); err != nil {
				t.Fatalf("accepted epoch does not marshal: %v", err)
			}
		case metrics.TypeLog:
			if r.Log == nil || r.Log.Msg == "" || r.Log.Level == "" {
				t.Fatalf("accepted log %+v", r.Log)
			}
		case metrics.TypeSummary:
			s := r.Summary
			if s == nil || s.Epochs < 0 || !finite(s.TotalS) || s.Outcome != "" {
				t.Fatalf("accepted summary %+v", s)
			}
		default:
			t.Fatalf("type %q accepted", r.Type)
		}
	})
}
