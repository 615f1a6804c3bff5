package web

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"outcore/experiments/studies"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/experiments"
	"outcore/store"
)

// TestReproducePage lists every registered study with a Start button, and
// a study whose limits are below the variants' floors on the chosen
// dataset comes back with the problems in words, creating nothing.
func TestReproducePage(t *testing.T) {
	e := newEnv(t)
	e.login()
	code, page := e.get("/reproduce")
	if code != 200 {
		t.Fatalf("GET /reproduce: %d", code)
	}
	for _, s := range studies.Papers() {
		tb, err := s.Testbed()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`id="study-` + s.ID + `"`, `action="/reproduce/` + s.ID + `"`, s.Figure,
			`<td id="testbed-` + s.ID + `"><code>` + tb + `</code>`} {
			if !strings.Contains(page, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
	}
	// tiny's features are 1 MiB: 60% of them is below any limit a run
	// can start with
	resp := e.post("/reproduce/gnndrive-table2", url.Values{"dataset": {"tiny"}})
	b := body(t, resp)
	if resp.StatusCode != 422 || !strings.Contains(b, `id="problem-gnndrive-table2"`) || !strings.Contains(b, "memory limits:") {
		t.Fatalf("start below the floors: %d\n%s", resp.StatusCode, b)
	}
	if xs, _ := e.st.ListExperiments(t.Context()); len(xs) != 0 {
		t.Fatalf("a refused study created %d experiments", len(xs))
	}
	if resp := e.post("/reproduce/no-such-study", nil); resp.StatusCode != 404 {
		t.Fatalf("unknown study: %d", resp.StatusCode)
	}
}

// TestReproduceStartAndCompare: Start creates the study's experiment (its
// systems with their options, its limits as shares of the dataset's
// features) and the experiment page shows the paper's numbers beside ours
// once runs finish.
func TestReproduceStartAndCompare(t *testing.T) {
	// floors are the queue's own tests; here every limit may start
	e := newEnvWith(t, t.TempDir(), func(o *experiments.Options) {
		o.MinMemory = func(train.Config, dataset.Meta) int64 { return 0 }
	})
	studyDataset(t, e.dir)
	e.login()
	s, _ := studies.Lookup("gnndrive-table2")
	resp := e.post("/reproduce/"+s.ID, url.Values{"dataset": {"tiny8"}})
	if resp.StatusCode != 303 {
		t.Fatalf("start: %d %s", resp.StatusCode, body(t, resp))
	}
	var id int64
	if _, err := fmt.Sscanf(resp.Header.Get("Location"), "/experiments/%d", &id); err != nil {
		t.Fatalf("redirect to %q", resp.Header.Get("Location"))
	}
	runs := e.runs(id)
	if len(runs) != len(s.Systems) {
		t.Fatalf("%d runs for %d systems", len(runs), len(s.Systems))
	}
	systems := map[string]store.Run{}
	for _, r := range runs {
		systems[r.System] = r
	}
	for _, sys := range s.Systems {
		if _, ok := systems[sys]; !ok {
			t.Fatalf("no run of %s in %v", sys, systems)
		}
	}
	for _, r := range runs { // a study starts under its paper's testbed (DESIGN §13, "Studies")
		if !strings.Contains(string(r.Config), `"testbed":"gnndrive-icpp24"`) {
			t.Errorf("run %d (%s) from the Reproduce page: config names no testbed gnndrive-icpp24: %s", r.ID, r.System, r.Config)
		}
	}
	if !strings.Contains(string(systems["gnndrive:feature_buffer=device"].Config), `"feature_buffer":"device"`) {
		t.Fatalf("the GPU-layout run's config: %s", systems["gnndrive:feature_buffer=device"].Config)
	}
	// before any run finished: the paper's numbers, ours pending
	_, page := e.get(fmt.Sprintf("/experiments/%d", id))
	for _, want := range []string{`id="study-table"`, "241.1 s", "4115.7 s", "17.07×", "pending"} {
		if !strings.Contains(page, want) {
			t.Errorf("experiment page lacks %q", want)
		}
	}
	// GNNDrive-GPU 10 s and Ginex 26.4 s per epoch: 2.64×, the paper's
	e.play(systems["gnndrive:feature_buffer=device"], 1, 10, store.StatusDone)
	e.play(systems["ginex"], 1, 26.4, store.StatusDone)
	e.play(systems["pyg+"], 1, 0, store.StatusOOM)
	_, page = e.get(fmt.Sprintf("/experiments/%d", id))
	for _, want := range []string{"10.0 s", "26.4 s", "2.64×", "within ±30 % of the paper", "oom ×1"} {
		if !strings.Contains(page, want) {
			t.Errorf("experiment page after the runs lacks %q", want)
		}
	}
	// One single-epoch run a side: its epoch is cold, and one run is no
	// evidence: the verdict says so, with each side's n and epoch kind.
	for _, want := range []string{"not enough evidence: a verdict needs 3 quiet runs with warm epochs a side",
		"Ginex: n=1 (1 cold) · GNNDrive-GPU: n=1 (1 cold)", `Ran here on dataset <b id="study-dataset">tiny8</b> at <b id="study-limits">60%</b>`} {
		if !strings.Contains(page, want) {
			t.Errorf("experiment page lacks %q", want)
		}
	}
	// the same table as CSV; another experiment has none
	code, csvText := e.get(fmt.Sprintf("/experiments/%d/study.csv", id))
	if code != 200 || !strings.Contains(csvText, "gnndrive-table2,ratio,Ginex / GNNDrive-GPU,ginex / gnndrive:feature_buffer=device,60%,epoch_s,2.64×,2.64,,,") {
		t.Errorf("study.csv: %d\n%s", code, csvText)
	}
	other := e.create(`{"dataset":"tiny","system":"pyg+","epochs":1}`)
	if code, _ := e.get(fmt.Sprintf("/experiments/%d/study.csv", other.ID)); code != 404 {
		t.Errorf("study.csv of an ordinary experiment: %d", code)
	}
	// the Reproduce page links the study's experiment
	if _, page := e.get("/reproduce"); !strings.Contains(page, fmt.Sprintf(`href="/experiments/%d"`, id)) || !strings.Contains(page, "(ran on tiny8 at 60%, ") {
		t.Error("the Reproduce page does not link the study's experiment with the dataset and limits it ran")
	}
}

// studyDataset generates "tiny8" in dataDir: tiny with 8× the feature
// dimension (8 MiB of features), large enough for every study's limits.
func studyDataset(t testing.TB, dataDir string) {
	t.Helper()
	cfg, err := dataset.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.FeatureDim *= 8
	if _, err := dataset.GenerateWith(t.Context(), dataset.DatasetsDir(dataDir), "tiny8", cfg, dataset.GenOptions{NoIndptr: true}); err != nil {
		t.Fatal(err)
	}
}
