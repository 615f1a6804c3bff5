package external

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// python3 returns the interpreter's path, or skips the test with the
// reason.
func python3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Python writer and the example are not run")
	}
	return p
}

// repoFile is a file of the repository by its path from the root.
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// parseAll parses every line of b with ParseLine.
func parseAll(t *testing.T, b []byte) []Record {
	t.Helper()
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, MaxLineBytes+1)
	for n := 1; sc.Scan(); n++ {
		r, err := ParseLine(sc.Bytes())
		if err != nil {
			t.Fatalf("line %d %q refused: %v", n, sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

const pyWriter = `
import os, sys
sys.path.insert(0, sys.argv[1])
import outcore_record
w = outcore_record.Writer(fd=3) if sys.argv[2] == "fd" else outcore_record.Writer()
for i in range(3):
    w.epoch(i, epoch_s=0.5 + i, stages={"sample": 0.1, "forward_s": 0.2}, wall={"train": 0.4},
            bytes_read=1 << 20, tiers={"cpu": {"lookups": 10, "hits": 3}}, train_loss=1.25,
            train_acc=0.5, val_acc=0.4, test_acc=0.39, counters={"reads": 7}, extra={"lr": 0.01})
w.log("warn", "no GPU here")
try:
    w.epoch(3, epoch_s=float("nan"))
    print("NaN written")
except ValueError:
    pass
try:
    w.epoch(3, epoch_s=1, bogus=1)
    print("unknown field written")
except TypeError:
    pass
w.summary(epochs=3, best_epoch=2, best_val_acc=0.4, test_acc=0.39, total_s=5)
w.close()
`

// TestPythonWriter: scripts/outcore_record.py writes lines ParseLine
// accepts, to $OUTCORE_RECORDS and to a descriptor the parent opened.
func TestPythonWriter(t *testing.T) {
	py := python3(t)
	scripts := filepath.Dir(repoFile(t, "scripts/outcore_record.py"))
	for _, mode := range []string{"env", "fd"} {
		dir := t.TempDir()
		records := filepath.Join(dir, "records.jsonl")
		cmd := exec.Command(py, "-B", "-c", pyWriter, scripts, mode)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "OUTCORE_RECORDS=" + records}
		if mode == "fd" {
			f, err := os.Create(records)
			if err != nil {
				t.Fatal(err)
			}
			cmd.ExtraFiles = []*os.File{f} // fd 3 in the child
			cmd.Env = cmd.Env[:1]
			defer f.Close()
		}
		out, err := cmd.CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Fatalf("%s: %v: %s", mode, err, out)
		}
		b, err := os.ReadFile(records)
		if err != nil {
			t.Fatal(err)
		}
		recs := parseAll(t, b)
		var types []string
		for _, r := range recs {
			types = append(types, r.Type)
			if e := r.Epoch; e != nil && (e.EpochS != 0.5+float64(e.Epoch) || e.Stages["forward_s"] != 0.2 || e.SampleS != 0.1 ||
				e.BytesRead != 1<<20 || e.Tiers["cpu"].Lookups != 10 || e.ValAcc != 0.4 || string(e.Extra["lr"]) != "0.01") {
				t.Errorf("%s: epoch %+v", mode, e)
			}
			if s := r.Summary; s != nil && (s.Epochs != 3 || s.BestEpoch != 2 || s.TestAcc != 0.39) {
				t.Errorf("%s: summary %+v", mode, s)
			}
		}
		if got := strings.Join(types, ","); got != "epoch,epoch,epoch,log,summary" {
			t.Errorf("%s: lines %s", mode, got)
		}
	}
}
