package report

import (
	"math"
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/experiments/studies"
	"outcore/store"
)

// TestStudyCompare matches runs to a study's points by system entry and
// memory limit (as a share of the feature bytes) and sets our ratios
// beside the paper's.
func TestStudyCompare(t *testing.T) {
	s, ok := studies.Lookup("gnndrive-table2")
	if !ok {
		t.Fatal("no gnndrive-table2")
	}
	const feat = 1 << 30
	at60 := int64(math.Round(0.6 * feat))
	run := func(sys string, limit int64, status string, epochS float64) RunData {
		r := RunData{System: sys, MemLimit: limit, Status: status}
		if status == RunDone {
			r.Digest = &Digest{Mean: map[string]float64{"epoch_s": epochS}}
		}
		return r
	}
	runs := []RunData{
		run("gnndrive:feature_buffer=device", at60, RunDone, 90),
		run("gnndrive:feature_buffer=device", at60, RunDone, 110), // mean 100
		run("gnndrive", at60, RunDone, 160),
		run("ginex", at60, RunDone, 250),
		run("pyg+", at60, RunOOM, 0),
		run("pyg+", feat/4, RunDone, 999), // another limit: not this point
	}
	tab := CompareStudy(s, runs, feat, 0)
	if len(tab.Rows) != 4 {
		t.Fatalf("rows %+v", tab.Rows)
	}
	byLabel := map[string]StudyRow{}
	for _, r := range tab.Rows {
		byLabel[r.Label] = r
	}
	if r := byLabel["GNNDrive-GPU"]; !r.HaveOurs || r.Ours != 100 || r.Paper != 241.12 || r.Done != 2 {
		t.Errorf("GNNDrive-GPU row %+v", r)
	}
	if r := byLabel["PyG+"]; r.HaveOurs || r.Outcomes != "oom ×1" || r.Paper != 4115.73 {
		t.Errorf("PyG+ row %+v", r)
	}
	ratios := map[string]RatioRow{}
	for _, r := range tab.Ratios {
		ratios[r.Label] = r
	}
	if r := ratios["GNNDrive-CPU / GNNDrive-GPU"]; !r.HaveOurs || r.Ours != 1.6 || !r.Within {
		t.Errorf("CPU/GPU ratio %+v (paper 1.54, ours 1.6: within 30%%)", r)
	}
	if r := ratios["Ginex / GNNDrive-GPU"]; !r.HaveOurs || r.Ours != 2.5 || !r.Within {
		t.Errorf("Ginex/GPU ratio %+v", r)
	}
	if r := ratios["PyG+ / GNNDrive-GPU"]; r.HaveOurs {
		t.Errorf("PyG+ ratio without a done PyG+ run: %+v", r)
	}
	var csvOut strings.Builder
	if err := WriteStudyCSV(&csvOut, tab); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"study,kind,label,system,mem_limit,metric,paper,ours,runs,done,other_outcomes,quiet_warm,cold,busy,num_evidence,den_evidence,enough_evidence",
		"gnndrive-table2,point,GNNDrive-GPU,gnndrive:feature_buffer=device,60%,epoch_s,241.12,100,2,2,,0,2,0,,,",
		"gnndrive-table2,point,PyG+,pyg+,60%,epoch_s,4115.73,,1,0,oom ×1,0,0,0,,,",
		"gnndrive-table2,ratio,Ginex / GNNDrive-GPU,ginex / gnndrive:feature_buffer=device,60%,epoch_s,2.64×,2.5,,,,,,,n=1 (1 cold),n=2 (2 cold),no",
	} {
		if !strings.Contains(csvOut.String(), want+"\n") {
			t.Errorf("CSV lacks the line %q:\n%s", want, csvOut.String())
		}
	}
	if got := limitShare(at60, feat); got != "60%" || studies.NormShare(" 60 %") != "60%" || limitShare(0, feat) != "none" {
		t.Errorf("limit shares %q %q", got, studies.NormShare(" 60 %"))
	}
}

// TestStudyVerdictNeedsQuietWarmRuns: a ratio's verdict stands only on at
// least MinEvidence quiet, warm runs per side; below that it says so, with
// each side's n and epoch kinds; with enough, the ratio is over the quiet
// warm runs only (a cold or busy run does not move it).
func TestStudyVerdictNeedsQuietWarmRuns(t *testing.T) {
	s, ok := studies.Lookup("gnndrive-table2")
	if !ok {
		t.Fatal("no gnndrive-table2")
	}
	const feat = 1 << 30
	at60 := int64(math.Round(0.6 * feat))
	run := func(sys string, epochS float64, warm, busy bool) RunData {
		d := &Digest{Epochs: 1, Steady: 1, Mean: map[string]float64{"epoch_s": epochS}}
		if warm {
			d.Epochs, d.Steady, d.Warm = 2, 1, 1
		}
		if busy {
			d.BusyEpochs = 1
		}
		return RunData{System: sys, MemLimit: at60, Status: RunDone, Digest: d}
	}
	ratio := func(runs []RunData) RatioRow {
		for _, r := range CompareStudy(s, runs, feat, 0).Ratios {
			if r.Label == "Ginex / GNNDrive-GPU" {
				return r
			}
		}
		t.Fatal("no Ginex / GNNDrive-GPU ratio")
		return RatioRow{}
	}
	gpu := "gnndrive:feature_buffer=device"
	// One cold run per side: a ratio, but not enough evidence.
	r := ratio([]RunData{run("ginex", 250, false, false), run(gpu, 100, false, false)})
	if !r.HaveOurs || r.Evidence || r.NumSide != (Side{N: 1, Cold: 1}) || r.NumSide.Words() != "n=1 (1 cold)" {
		t.Errorf("one cold run a side: %+v", r)
	}
	// Three quiet warm runs a side, and a cold and a busy one besides:
	// the verdict stands, over the quiet warm runs.
	runs := []RunData{run("ginex", 999, false, false), run(gpu, 1, true, true)}
	for range MinEvidence {
		runs = append(runs, run("ginex", 250, true, false), run(gpu, 100, true, false))
	}
	r = ratio(runs)
	if !r.Evidence || r.Ours != 2.5 || r.NumSide != (Side{N: 4, QuietWarm: 3, Cold: 1}) || r.DenSide != (Side{N: 4, QuietWarm: 3, Busy: 1}) {
		t.Errorf("three quiet warm runs a side: %+v", r)
	}
	// Two quiet warm runs on one side: not enough.
	if r = ratio(runs[:len(runs)-1]); r.Evidence {
		t.Errorf("two quiet warm Ginex runs: %+v", r)
	}
	if d := DigestEpochs(nil); d.EpochKind() != EpochsCold {
		t.Error("no digest is not warm")
	}
}

// DiskGNN's study compares what the paper compares: Ginex's epoch without
// its sampling beside DiskGNN's epoch, and for "+ preprocess" each
// system's epoch plus its preparation over its epochs; runs without the
// wall-clock stages or a prepare_s leave those ratios pending.
func TestDiskGNNStudyComparesThePapersEpochs(t *testing.T) {
	s, ok := studies.Lookup("diskgnn-fig9")
	if !ok {
		t.Fatal("no diskgnn-fig9")
	}
	const feat = 1 << 30
	at30 := int64(math.Round(0.3 * feat))
	prep := func(v float64) *float64 { return &v }
	runs := []RunData{
		// Ginex: 100 s epochs, 40 s of them waiting on its sampling; 10 s of preparation over 2 epochs
		{System: "ginex", MemLimit: at30, Status: RunDone, PrepareS: prep(10),
			Digest: &Digest{Epochs: 2, WallMeasured: 2, Mean: map[string]float64{"epoch_s": 100, "wall_sample_s": 40}}},
		// DiskGNN: 10 s epochs, 30 s of offline preparation over 2 epochs
		{System: "diskgnn", MemLimit: at30, Status: RunDone, PrepareS: prep(30),
			Digest: &Digest{Epochs: 2, WallMeasured: 2, Mean: map[string]float64{"epoch_s": 10, "wall_sample_s": 1}}},
	}
	tab := CompareStudy(s, runs, feat, 0)
	got := map[string]RatioRow{}
	for _, r := range tab.Ratios {
		got[r.Label] = r
	}
	want := map[string]float64{
		"Ginex (without its sampling) / DiskGNN at 30%": 60.0 / 10,  // (100 − 40) / 10
		"Ginex + sample / DiskGNN + preprocess at 30%":  105.0 / 25, // (100 + 10/2) / (10 + 30/2)
	}
	for label, w := range want {
		r, ok := got[label]
		if !ok || !r.HaveOurs || math.Abs(r.Ours-w) > 1e-9 {
			t.Errorf("%s: %+v, want %v", label, r, w)
		}
	}
	// the table's rows stay whole epochs
	for _, r := range tab.Rows {
		if r.System == "ginex" && r.MemLimit == "30%" && (!r.HaveOurs || r.Ours != 100) {
			t.Errorf("ginex row %+v, want the whole 100 s epoch", r)
		}
	}
	// without the wall-clock stages or a prepare_s: pending, not a number
	runs[0].Digest.WallMeasured, runs[0].PrepareS = 0, nil
	for _, r := range CompareStudy(s, runs, feat, 0).Ratios {
		if _, ok := want[r.Label]; ok && r.HaveOurs {
			t.Errorf("%s computed without the stage or the preparation: %+v", r.Label, r)
		}
	}
	for label := range s.RatioMetrics {
		if _, ok := got[label]; !ok {
			t.Errorf("ratio metric for %q, which is no ratio of the study", label)
		}
	}
}

// TestStudyRatioOOM: a side whose runs all ran out of memory is OOM, not
// pending.
func TestStudyRatioOOM(t *testing.T) {
	s, _ := studies.Lookup("ginex-overall")
	fb := int64(100 << 20)
	runs := []RunData{{System: "ginex", MemLimit: fb / 4, Status: RunOOM}, {System: "pyg+", MemLimit: fb / 4, Status: RunOOM}, {System: "ali+pg", MemLimit: fb / 4, Status: RunOOM}}
	tb := CompareStudy(s, runs, fb, 0)
	if len(tb.Ratios) == 0 {
		t.Fatal("no ratio")
	}
	for _, r := range tb.Ratios {
		if !r.NumOOM || !r.DenOOM || r.HaveOurs {
			t.Errorf("ratio %+v: want both sides OOM", r)
		}
	}
}

// TestDigestEpochKind: a digest's means are cold when they are over the
// run's first epoch alone, warm when over later epochs only, else mixed.
func TestDigestEpochKind(t *testing.T) {
	ep := func(i int, warmup bool) metrics.EpochRecord {
		return metrics.EpochRecord{Epoch: i, Warmup: warmup, EpochS: float64(10 - i)}
	}
	for _, c := range []struct {
		eps  []metrics.EpochRecord
		want string
	}{
		{[]metrics.EpochRecord{ep(0, false)}, EpochsCold},
		{[]metrics.EpochRecord{ep(0, true)}, EpochsCold},
		{[]metrics.EpochRecord{ep(0, true), ep(1, false), ep(2, false)}, EpochsWarm},
		{[]metrics.EpochRecord{ep(0, false), ep(1, false)}, EpochsMixed},
	} {
		if got := DigestEpochs(c.eps).EpochKind(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.eps, got, c.want)
		}
	}
}

// TestStudyCompareAcrossFeatureDims: a study that sweeps the feature
// dimension runs each cell on a dataset of that dimension, its limit a
// share of that dataset's feature bytes; each run is matched at its own
// share, not at the share of the base dataset's bytes.
func TestStudyCompareAcrossFeatureDims(t *testing.T) {
	s, ok := studies.Lookup("gnndrive-table2")
	if !ok {
		t.Fatal("no gnndrive-table2")
	}
	const feat, dim = 1 << 30, 128
	done := func(d int, epochS float64) RunData {
		return RunData{System: "ginex", Dim: d, MemLimit: int64(math.Round(0.6 * feat * float64(d) / dim)), Status: RunDone,
			Digest: &Digest{Mean: map[string]float64{"epoch_s": epochS}}}
	}
	runs := []RunData{done(128, 10), done(256, 20), done(512, 30)}
	for _, c := range []struct {
		dim  int
		want int
	}{{dim, 3}, {0, 1}} { // dim unknown: only the run at the base dimension matches 60%
		for _, r := range CompareStudy(s, runs, feat, c.dim).Rows {
			if r.Label == "Ginex" && r.Done != c.want {
				t.Errorf("dataset dim %d: Ginex at 60%% has %d runs, want %d", c.dim, r.Done, c.want)
			}
		}
	}
}

// TestStudyCompareByIDs: a structure study's runs on the two numberings
// (their cell "ids=scattered" / "ids=local") are rows of their own, each
// the mean of its own runs' hit ratio (the digest's memory-tier hits over
// its lookups), and a counter's mean compares as any digest mean.
func TestStudyCompareByIDs(t *testing.T) {
	s, ok := studies.Lookup("struct-ginex-cache")
	if !ok {
		t.Fatal("no struct-ginex-cache")
	}
	const feat = 1 << 30
	at50 := int64(feat / 2)
	run := func(sys, cell string, hits, lookups float64) RunData {
		return RunData{System: sys, MemLimit: at50, Status: RunDone, Cell: cell,
			Digest: &Digest{Mean: map[string]float64{"epoch_s": 1}, CacheHits: hits, Lookups: lookups}}
	}
	runs := []RunData{
		run("ginex", "ids=scattered", 30, 100),
		run("ginex", "ids=scattered", 50, 100), // mean 0.4
		run("ginex", "ids=local", 70, 100),
		run("ginex:policy=static", "ids=local", 20, 100),
	}
	tab := CompareStudy(s, runs, feat, 0)
	got := map[string]StudyRow{}
	for _, r := range tab.Rows {
		got[r.Label] = r
	}
	if len(tab.Rows) != 4 {
		t.Fatalf("%d rows, want 2 systems × 2 numberings: %+v", len(tab.Rows), tab.Rows)
	}
	for label, want := range map[string]float64{"Belady (Ginex) · ids=scattered": 0.4, "Belady (Ginex) · ids=local": 0.7, "PaGraph (static) · ids=local": 0.2} {
		r := got[label]
		if !r.HaveOurs || math.Abs(r.Ours-want) > 1e-12 {
			t.Errorf("%s: %+v, want hit ratio %g", label, r, want)
		}
	}
	if r := got["PaGraph (static) · ids=scattered"]; r.HaveOurs || r.Runs != 0 || r.Cell != "ids=scattered" {
		t.Errorf("a numbering without runs: %+v", r)
	}
	d := DigestEpochs([]metrics.EpochRecord{
		{Epoch: 0, Warmup: true, Counters: map[string]int64{"io_requests": 999}},
		{Epoch: 1, Counters: map[string]int64{"io_requests": 100}},
		{Epoch: 2, Counters: map[string]int64{"io_requests": 300}},
	})
	if v, ok := MetricValue(RunData{Digest: d}, CounterPrefix+"io_requests"); !ok || v != 200 {
		t.Errorf("counter_io_requests = %g, %v; want the steady epochs' mean 200", v, ok)
	}
	// a run-level measurement, read from the run's summary (DiskGNN Fig. 12)
	rd := RunDataOf(store.Run{Status: RunDone, Summary: []byte(`{"feature_disk_blowup": 2.5, "prepare_s": 1}`)}, nil)
	rd.Digest = d
	if v, ok := MetricValue(rd, "feature_disk_blowup"); !ok || v != 2.5 {
		t.Errorf("feature_disk_blowup = %g, %v; want the summary's 2.5", v, ok)
	}
	if _, ok := MetricValue(rd, "feature_disk_bytes"); ok {
		t.Error("feature_disk_bytes measured in a summary without it")
	}
	if _, ok := MetricValue(rd, "no_such_metric"); ok {
		t.Error("an unknown metric measured")
	}
}
