package report

import (
	"bytes"
	"strings"
	"testing"
)

// scaleSet is an experiment on a dataset of fb feature bytes: for each
// variant, two repeats at 25 % and one at 50 %; epoch time and bytes read
// grow with the dataset (per variant: epoch = k·GiB, read = 2k MiB per GiB).
func scaleSet(name string, fb int64, oomAt25 string) ScaleSet {
	var runs []RunData
	id := fb >> 20
	for vi, v := range []string{"pyg+", "ginex"} {
		for _, share := range []float64{0.25, 0.25, 0.5} {
			id++
			r := RunData{ID: id, System: v, MemLimit: int64(share * float64(fb)), Status: RunDone, Compute: "model:h100-pyg"}
			gib := float64(fb) / (1 << 30)
			k := float64(vi + 1)
			if share == 0.5 {
				k *= 10 // must not be picked at 25 %
			}
			r.Digest = &Digest{Epochs: 1, Steady: 1, Measured: 1, Mean: map[string]float64{"epoch_s": k * gib, "bytes_read": 2 * k * gib * (1 << 20)}}
			if v == oomAt25 && share == 0.25 {
				r.Status, r.Digest = RunOOM, nil
			}
			runs = append(runs, r)
		}
	}
	return ScaleSet{Dataset: name, FeatureBytes: fb, Cmp: NewComparison(runs)}
}

func TestScaleChart(t *testing.T) {
	sets := []ScaleSet{scaleSet("medium", 1<<30, ""), scaleSet("papers-like", 4<<30, "pyg+")}
	ch, err := ScaleChart("scale-epoch", sets, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	if ch.XType != "log" || ch.XLogBase != 2 || ch.XFormat != "bytes" || !strings.Contains(ch.Title, "25 %") {
		t.Errorf("axis %s base %v format %q, title %q", ch.XType, ch.XLogBase, ch.XFormat, ch.Title)
	}
	want := map[string][]struct {
		x      int64
		y      float64 // 0: no value
		status string
	}{
		"pyg+":  {{1 << 30, 1, StatusOK}, {4 << 30, 0, StatusOOM}},
		"ginex": {{1 << 30, 2, StatusOK}, {4 << 30, 8, StatusOK}},
	}
	if len(ch.Series) != 2 {
		t.Fatalf("%d series, want pyg+ and ginex", len(ch.Series))
	}
	for _, s := range ch.Series {
		w := want[s.Name]
		if len(s.Points) != len(w) {
			t.Fatalf("%s: %d points, want %d", s.Name, len(s.Points), len(w))
		}
		for i, p := range s.Points {
			if int64(p.X) != w[i].x || p.Status != w[i].status || (w[i].y == 0) != (p.Y == nil) || (p.Y != nil && (*p.Y != w[i].y || p.N != 2)) {
				t.Errorf("%s point %d: x %v y %v n %d status %s, want x %d y %v n 2 status %s", s.Name, i, p.X, p.Y, p.N, p.Status, w[i].x, w[i].y, w[i].status)
			}
		}
	}
	read, err := ScaleChart("scale-read", sets, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range read.Series {
		if s.Name == "ginex" && (s.Points[1].Y == nil || *s.Points[1].Y != 16) {
			t.Errorf("ginex read at 4 GiB: %v MiB, want 16", s.Points[1].Y)
		}
	}
	half, _ := ScaleChart("scale-epoch", sets, 0.5)
	if len(half.Series) != 2 || *half.Series[0].Points[0].Y != 10 {
		t.Errorf("at 50 %%: %+v", half.Series)
	}
	if none, _ := ScaleChart("scale-epoch", sets, 0.1); none.Empty == "" || len(none.Series) != 0 {
		t.Errorf("no run at 10 %%, chart %+v", none)
	}
	var svg, csv bytes.Buffer
	if err := WriteChartWith(&svg, ch, FigureSVG, FigureOptions{}); err != nil || !bytes.Contains(svg.Bytes(), []byte("ginex")) {
		t.Errorf("svg: %v", err)
	}
	if err := WriteChartCSV(&csv, ch); err != nil || !strings.Contains(csv.String(), "4294967296") {
		t.Errorf("csv %v:\n%s", err, csv.String())
	}
	for _, bad := range []struct {
		id    string
		share float64
		want  string
	}{{"scale-nope", 0.25, "want one of scale-epoch, scale-read"}, {"scale-epoch", -1, "memory share -1"}} {
		if _, err := ScaleChart(bad.id, sets, bad.share); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s at %v: %v, want %q", bad.id, bad.share, err, bad.want)
		}
	}
}

// A scale figure of bounded runs says so in its title and note; one of
// whole epochs says nothing of bounds.
func TestScaleChartNamesBoundedEpochs(t *testing.T) {
	sets := []ScaleSet{scaleSet("medium", 1<<30, ""), scaleSet("papers-like", 4<<30, "")}
	ch, err := ScaleChart("scale-epoch", sets, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ch.Title, "bounded") || strings.Contains(ch.Note, "bounded") {
		t.Errorf("whole epochs called bounded: %q / %q", ch.Title, ch.Note)
	}
	for _, s := range sets {
		for i := range s.Cmp.runs {
			s.Cmp.runs[i].TrainMaxNodes = 20000
		}
	}
	ch, _ = ScaleChart("scale-epoch", sets, 0.25)
	if !strings.Contains(ch.Title, "epochs bounded to 20000 training nodes") || !strings.Contains(ch.Note, "not of a whole epoch") {
		t.Errorf("bounded runs not named: %q / %q", ch.Title, ch.Note)
	}
	sets[1].Cmp.runs[0].TrainMaxNodes = 0
	ch, _ = ScaleChart("scale-epoch", sets, 0.25)
	if !strings.Contains(ch.Title, "all / 20000 training nodes (the runs differ)") {
		t.Errorf("mixed bounds: %q", ch.Title)
	}
}

func TestTrainMaxNodesOf(t *testing.T) {
	for in, want := range map[string]int{`{"train_max_nodes":20000}`: 20000, `{}`: 0, ``: 0, `{"train_max_nodes":-3}`: 0, `[`: 0} {
		if got := trainMaxNodesOf([]byte(in)); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}
