package external

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"outcore/engine/dataset"
)

// TestTinySGDExample runs the worked example, examples/external/tiny_sgd.py
// as examples/external/systems.json registers it, on a generated tiny
// dataset with the argv and environment a run gets (Argv, Env), and
// checks its records with ParseLine: one epoch line per epoch in order,
// bytes read, accuracy above chance, a summary that agrees.
func TestTinySGDExample(t *testing.T) {
	python3(t)
	// The example runs through its #! line (/usr/bin/env python3) on
	// Env's fixed PATH, not the test's.
	found := false
	for _, d := range filepath.SplitList(strings.TrimPrefix(EnvBase[0], "PATH=")) {
		if _, err := os.Stat(filepath.Join(d, "python3")); err == nil {
			found = true
		}
	}
	if !found {
		t.Skipf("no python3 on the PATH external programs get (%s)", EnvBase[0])
	}
	regPath := repoFile(t, "examples/external/systems.json")
	data, err := os.ReadFile(regPath)
	if err != nil {
		t.Fatal(err)
	}
	// Parse and the file checks of Load (the mode check is TestLoadFiles':
	// a checkout's file mode follows the umask).
	reg, err := Parse(data, filepath.Dir(regPath))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := reg.Lookup("tiny-sgd")
	if !ok {
		t.Fatalf("the example registry has %v", reg.Names())
	}
	if err := s.checkFiles(); err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	cfg, err := dataset.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.GenerateWith(context.Background(), root, "tiny", cfg, dataset.GenOptions{Preset: "tiny", NoIndptr: true})
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	files := RunFiles{Dataset: ds.Dir, Records: filepath.Join(scratch, "records.jsonl"), Scratch: scratch, RunID: 1}
	const epochs = 3
	argv, err := Argv(s, map[string]any{"epochs": float64(epochs), "train_limit": float64(1200)}, files)
	if err != nil {
		t.Fatal(err)
	}
	env, err := Env(s, files)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = s.Workdir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, out)
	}
	b, err := os.ReadFile(files.Records)
	if err != nil {
		t.Fatal(err)
	}
	recs := parseAll(t, b)
	chance := 1 / float64(ds.Meta.Classes)
	var seen int
	for _, r := range recs {
		switch {
		case r.Epoch != nil:
			e := r.Epoch
			if e.Epoch != seen {
				t.Errorf("epoch %d where %d was next", e.Epoch, seen)
			}
			seen++
			if e.EpochS <= 0 || e.BytesRead <= 0 || e.RowsFromDevice <= 0 || e.BytesNeeded < e.RowsFromDevice*ds.Meta.RowBytes() ||
				e.Batches != 1200 || !e.Evaluated || e.TrainS <= 0 {
				t.Errorf("epoch %+v", e)
			}
			t.Logf("epoch %d: %.2fs, loss %.3f, train %.3f, val %.3f, %d bytes read", e.Epoch, e.EpochS, e.TrainLoss, e.TrainAcc, e.ValAcc, e.BytesRead)
			if e.Epoch == epochs-1 && e.ValAcc < 2*chance {
				t.Errorf("val accuracy %.3f after %d epochs, chance is %.3f", e.ValAcc, epochs, chance)
			}
		case r.Summary != nil:
			if r.Summary.Epochs != epochs || r.Summary.BestEpoch < 0 || r.Summary.BestValAcc < 2*chance {
				t.Errorf("summary %+v", r.Summary)
			}
		}
	}
	if seen != epochs || recs[len(recs)-1].Summary == nil {
		t.Errorf("%d epoch lines of %d, last line %+v", seen, epochs, recs[len(recs)-1])
	}
}

// TestPyGExampleCompiles: the PyTorch Geometric example is not run here
// (it needs torch), but it compiles, and its registry file parses with
// the program it names.
func TestPyGExampleCompiles(t *testing.T) {
	py := python3(t)
	for _, f := range []string{"examples/external/pyg_mmap.py", "examples/external/tiny_sgd.py", "scripts/outcore_record.py"} {
		src := repoFile(t, f)
		cmd := exec.Command(py, "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)",
			src, filepath.Join(t.TempDir(), "out.pyc"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not compile: %v\n%s", f, err, out)
		}
	}
	regPath := repoFile(t, "examples/external/pyg-systems.json")
	data, err := os.ReadFile(regPath)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := Parse(data, filepath.Dir(regPath))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := reg.Lookup("pyg-mmap")
	if !ok {
		t.Fatalf("pyg-systems.json registers %v", reg.Names())
	}
	if err := s.checkFiles(); err != nil {
		t.Fatal(err)
	}
	argv, err := Argv(s, map[string]any{"fanouts": "15,10,5", "device": "cpu"}, RunFiles{Dataset: "/d", Records: "/r", Scratch: "/s"})
	if err != nil {
		t.Fatal(err)
	}
	if argv[1] != "--batch=1000" || argv[4] != "--fanouts=15,10,5" {
		t.Errorf("argv %q", argv)
	}
}
