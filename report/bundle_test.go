package report

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBundle writes an experiment's paper bundle and reads it back: the
// tidy CSVs hold the store's rows, every chart has its CSV and, with data,
// an SVG that parses and a PDF whose text says "±", and the grid, host
// facts, version, README and re-plot script are there.
func TestBundle(t *testing.T) {
	st, e, runs := openStore(t)
	ctx := context.Background()
	dataDir := t.TempDir()
	fio := `{"jobs":[{"jobname":"randread-4k","read":{"iops":85000,"bw":340000}}]}`
	os.WriteFile(filepath.Join(dataDir, "disk-baseline.json"), []byte(fio), 0o644)
	var buf bytes.Buffer
	if err := WriteBundle(ctx, &buf, st, e.ID, BundleOptions{Version: "devel+test", DataDir: dataDir, Now: time.Unix(1.7e9, 0)}); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	read := func(name string) [][]string {
		recs, err := csv.NewReader(bytes.NewReader(files[name])).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return recs
	}
	if n := len(read("runs.csv")) - 1; n != len(runs) {
		t.Errorf("runs.csv has %d rows, the store %d runs", n, len(runs))
	}
	epochs := 0
	for _, r := range runs {
		eps, _ := st.Epochs(ctx, r.ID)
		epochs += len(eps)
	}
	if n := len(read("epochs.csv")) - 1; n != epochs {
		t.Errorf("epochs.csv has %d rows, the store %d epochs", n, epochs)
	}
	for _, id := range ChartIDs {
		if _, ok := files["charts/"+id+".csv"]; !ok {
			t.Errorf("no charts/%s.csv", id)
		}
	}
	for _, id := range []string{"epoch-vs-mem", "stages", "accuracy", "time-to-accuracy"} {
		svg, pdf := files["figures/"+id+".svg"], files["figures/"+id+".pdf"]
		dec := xml.NewDecoder(bytes.NewReader(svg))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("figures/%s.svg: %v", id, err)
			}
		}
		txt, err := PDFText(pdf)
		if err != nil || !strings.Contains(txt, "±") || !strings.Contains(txt, "experiment "+strconv.FormatInt(e.ID, 10)) {
			t.Errorf("figures/%s.pdf: %v, text %q", id, err, txt)
		}
	}
	for _, id := range ChartIDs {
		var st struct {
			Title  string
			YLabel string `json:"y_label"`
			Series []struct{ Name, Color string }
		}
		if err := json.Unmarshal(files["charts/"+id+".json"], &st); err != nil || st.YLabel == "" {
			t.Errorf("charts/%s.json: %v %+v", id, err, st)
		}
	}
	if readme := string(files["README.md"]); !strings.Contains(readme, "matplotlib") || !strings.Contains(readme, "Helvetica") {
		t.Errorf("README does not say replot.py needs matplotlib or which font the PDFs use")
	}
	for _, name := range []string{"grid.json", "host.json", "VERSION", "README.md", "replot.py", "disk-baseline.json"} {
		if len(files[name]) == 0 {
			t.Errorf("bundle lacks %s", name)
		}
	}
	if !strings.Contains(string(files["README.md"]), "randread-4k: 85000 read IOPS") || !strings.Contains(string(files["VERSION"]), "devel+test") {
		t.Errorf("README or VERSION:\n%s\n%s", files["README.md"], files["VERSION"])
	}
	// The script is Python that compiles; with matplotlib it re-plots the figures.
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not installed: replot.py not checked")
		return
	}
	dir := t.TempDir()
	for name, b := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	if out, err := exec.Command(py, "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())", filepath.Join(dir, "replot.py")).CombinedOutput(); err != nil {
		t.Fatalf("replot.py does not parse: %v\n%s", err, out)
	}
	if exec.Command(py, "-c", "import matplotlib").Run() != nil {
		t.Log("matplotlib not installed: replot.py parsed, not run")
		return
	}
	out, err := exec.Command(py, filepath.Join(dir, "replot.py"), filepath.Join(dir, "out")).CombinedOutput()
	if err != nil {
		t.Fatalf("replot.py: %v\n%s", err, out)
	}
	if pdfs, _ := filepath.Glob(filepath.Join(dir, "out", "*.pdf")); len(pdfs) < 5 {
		t.Errorf("replot.py made %d figures:\n%s", len(pdfs), out)
	}
	// The re-plotted figure has the dashboard's title, axis labels and colours.
	probe := `
import importlib.util, json, os, sys
import matplotlib, matplotlib.pyplot as plt
spec = importlib.util.spec_from_file_location("replot", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
m.OUT = sys.argv[3]
seen = {}
orig = plt.Figure.savefig
def save(self, path, *a, **k):
    ax = self.axes[0]
    cols = [matplotlib.colors.to_hex(l.get_color()) for l in ax.get_lines()] + [matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches]
    seen.update(title=ax.get_title(), x=ax.get_xlabel(), y=ax.get_ylabel(), colors=sorted(set(cols)))
    return orig(self, path, *a, **k)
plt.Figure.savefig = save
m.plot(sys.argv[2])
print(json.dumps(seen))
`
	got, err := exec.Command(py, "-c", probe, filepath.Join(dir, "replot.py"), filepath.Join(dir, "charts", "epoch-vs-mem.csv"), filepath.Join(dir, "probe")).Output()
	if err != nil {
		t.Fatalf("replot probe: %v", err)
	}
	var fig struct {
		Title, X, Y string
		Colors      []string
	}
	if err := json.Unmarshal(got, &fig); err != nil {
		t.Fatalf("replot probe: %v: %s", err, got)
	}
	cmp, err := LoadComparison(ctx, st, nil, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := cmp.Chart("epoch-vs-mem", "")
	if fig.Title != want.Title || fig.Y != want.YLabel || !strings.HasPrefix(fig.X, want.XLabel) {
		t.Errorf("re-plotted labels %+v, want title %q, y %q, x %q", fig, want.Title, want.YLabel, want.XLabel)
	}
	for _, s := range want.Series {
		if !slices.Contains(fig.Colors, strings.ToLower(s.Color)) {
			t.Errorf("re-plotted colours %v lack %s's %s", fig.Colors, s.Name, s.Color)
		}
	}
}
