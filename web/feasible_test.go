package web

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/internal/units"
)

// TestFormMatrixAgreesWithTheSubmit is the regression of a cell the
// form's matrix marked feasible and the submit refused: the preview's
// floor had no data directory, so the first-batch probe was skipped. A
// limit between gnndrive's floor from the dataset's shape alone and its
// floor with the first batch sampled is marked in the matrix with the
// reason the submit then gives. (pyg+'s floor on tiny is train.StartFloor's,
// whatever its batch.)
func TestFormMatrixAgreesWithTheSubmit(t *testing.T) {
	e := newEnv(t)
	e.login()
	v := validForm()
	v["variants"] = []string{"gnndrive"}
	cfg := train.DefaultConfig()
	cfg.Dataset, cfg.DataDir, cfg.System, cfg.Batch, cfg.Fanout, cfg.Layers = "tiny", e.dir, "gnndrive", 512, []int{5, 5}, 2
	probed, err := train.ProbeShape(cfg)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := dataset.ReadMeta(e.dir + "/datasets/tiny")
	if err != nil {
		t.Fatal(err)
	}
	pv, _ := train.LookupVariant("gnndrive")
	shapeOnly := probed
	shapeOnly.FirstBatchInputs, shapeOnly.FirstBatchBytes, shapeOnly.FirstBatchHopEntries = 0, 0, 0
	lo, hi := max(pv.MinMemory(shapeOnly, cfg), train.ConservativeMinMemory(meta)), train.MinMemoryFor(cfg, meta)
	if hi <= lo {
		t.Fatalf("floor with the first batch %d, without %d: nothing to tell apart", hi, lo)
	}
	limit := lo + (hi-lo)/2
	v.Set("mem_limits", fmt.Sprint(limit))
	resp := e.post("/experiments/preview", v)
	body, _ := io.ReadAll(resp.Body)
	preview := string(body)
	reason := fmt.Sprintf("%s is below the %s that gnndrive needs to start on tiny", units.Bytes(limit), units.Bytes(hi))
	if !strings.Contains(preview, `data-impossible`) || !strings.Contains(preview, reason) {
		t.Fatalf("the matrix does not mark the %d-byte cell with %q:\n%s", limit, reason, preview)
	}
	resp = e.post("/experiments", v)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), fmt.Sprintf("below the %s that gnndrive needs to start on tiny", units.Bytes(hi))) {
		t.Fatalf("submit: %d", resp.StatusCode)
	}
	// skipping them: the experiment is made, its cells listed as refused
	v.Set("mem_limits", fmt.Sprintf("%d, 128MiB", limit))
	v.Set("skip_infeasible", "1")
	resp = e.post("/experiments/preview", v)
	body, _ = io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "Runs the 2 runs that can start, skips 2") {
		t.Fatalf("preview with skip: %s", body)
	}
	resp = e.post("/experiments", v)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit with skip: %d", resp.StatusCode)
	}
	xs, _ := e.st.ListExperiments(t.Context())
	if len(xs) != 1 || xs[0].Counts.Total != 2 || xs[0].Counts.Refused != 2 {
		t.Fatalf("experiments %+v", xs)
	}
}

// TestPreviewSuggestsLimitsForTheDataset: the preview says which limits
// the form offers for the chosen dataset and variants (shares above their
// floors) when the field holds others.
func TestPreviewSuggestsLimitsForTheDataset(t *testing.T) {
	e := newEnv(t)
	e.login()
	v := validForm()
	resp := e.post("/experiments/preview", v)
	body, _ := io.ReadAll(resp.Body)
	in := FormInput{Variants: v["variants"], Batches: v.Get("batches"), Fanouts: v.Get("fanouts"), Model: "sage"}
	meta, err := dataset.ReadMeta(e.dir + "/datasets/tiny")
	if err != nil {
		t.Fatal(err)
	}
	want := defaultLimits(in, meta, e.dir)
	if !strings.Contains(string(body), `id="preview-suggested"`) || !strings.Contains(string(body), "<code>"+want+"</code>") {
		t.Fatalf("no suggestion %q in the preview:\n%s", want, body)
	}
	v.Set("mem_limits", want)
	resp = e.post("/experiments/preview", v)
	body, _ = io.ReadAll(resp.Body)
	if strings.Contains(string(body), `id="preview-suggested"`) {
		t.Error("a suggestion while the field holds it")
	}
}
