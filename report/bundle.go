package report

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"outcore/engine/metrics"
	"outcore/internal/units"
	"outcore/store"
)

// A paper bundle is one zip of everything a paper's figures of an
// experiment need (DESIGN §6): the tidy CSVs of runs, epochs and samples,
// each chart's data as CSV and its figure as SVG and PDF, the grid file,
// the facts of the hosts that ran it, the outcore version, and a short
// Python script that re-plots every figure from the chart CSVs.

// BundleSource is what a bundle reads: the store's experiment, runs,
// epochs and its CSV export; *store.Store implements it.
type BundleSource interface {
	Source
	ExportCSV(ctx context.Context, w io.Writer, experimentID int64, what string) error
}

// BundleOptions are what a bundle says about where it was made.
type BundleOptions struct {
	Version string // the exporting outcore's version
	DataDir string // where disk-baseline.json (fio's JSON output) may lie; "" = none
	Size    string // figure size preset (FigureSizes)
	Now     time.Time
}

//go:embed replot.py
var replotScript []byte

// BundleFileName is a bundle's file name: "experiment-3-bundle.zip".
func BundleFileName(id int64) string { return fmt.Sprintf("experiment-%d-bundle.zip", id) }

// WriteBundle writes experiment id's paper bundle as a zip to w.
func WriteBundle(ctx context.Context, w io.Writer, src BundleSource, id int64, opts BundleOptions) error {
	if err := CheckSize(opts.Size); err != nil {
		return err
	}
	e, err := src.Experiment(ctx, id)
	if err != nil {
		return err
	}
	runs, err := src.Runs(ctx, store.RunFilter{ExperimentID: id})
	if err != nil {
		return err
	}
	cmp, err := LoadComparison(ctx, src, nil, id)
	if err != nil {
		return err
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	zw := zip.NewWriter(w)
	add := func(name string, write func(io.Writer) error) error {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: opts.Now})
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 64<<10)
		if err := write(bw); err != nil {
			return fmt.Errorf("bundle %s: %w", name, err)
		}
		return bw.Flush()
	}
	var files []string
	for _, what := range store.ExportKinds {
		name := what + ".csv"
		if err := add(name, func(w io.Writer) error { return src.ExportCSV(ctx, w, id, what) }); err != nil {
			return err
		}
		files = append(files, name)
	}
	meta := cmp.Meta()
	if meta.Version == "" {
		meta.Version = opts.Version
	}
	var empty []string
	for _, chartID := range ChartIDs {
		ch, _ := cmp.Chart(chartID, "")
		if err := add("charts/"+chartID+".csv", func(w io.Writer) error { return WriteChartCSV(w, ch) }); err != nil {
			return err
		}
		files = append(files, "charts/"+chartID+".csv")
		if err := add("charts/"+chartID+".json", func(w io.Writer) error { return writeChartStyle(w, ch) }); err != nil {
			return err
		}
		files = append(files, "charts/"+chartID+".json")
		if ch.Empty != "" {
			empty = append(empty, fmt.Sprintf("- %s: %s", chartID, ch.Empty))
			continue
		}
		for _, format := range []string{FigureSVG, FigurePDF} {
			name := "figures/" + chartID + "." + format
			if err := add(name, func(w io.Writer) error {
				return RenderFigureWith(ch, format, w, FigureOptions{Size: opts.Size, Meta: meta})
			}); err != nil {
				return err
			}
			files = append(files, name)
		}
	}
	grid := e.Grid
	var pretty bytes.Buffer
	if json.Indent(&pretty, e.Grid, "", "  ") == nil {
		grid = pretty.Bytes()
	}
	if err := add("grid.json", func(w io.Writer) error { _, err := w.Write(append(grid, '\n')); return err }); err != nil {
		return err
	}
	host := hostReport(runs, opts)
	if err := add("host.json", func(w io.Writer) error {
		b, err := json.MarshalIndent(host, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	if len(host.DiskBaseline) > 0 {
		files = append(files, "disk-baseline.json")
		if err := add("disk-baseline.json", func(w io.Writer) error { _, err := w.Write(host.DiskBaseline); return err }); err != nil {
			return err
		}
	}
	if err := add("VERSION", func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "exported by outcore %s\nruns recorded by outcore %s\n", orNone(opts.Version), strings.Join(host.RunVersions, ", "))
		return err
	}); err != nil {
		return err
	}
	if err := add("replot.py", func(w io.Writer) error { _, err := w.Write(replotScript); return err }); err != nil {
		return err
	}
	files = append(files, "grid.json", "host.json", "VERSION", "replot.py")
	if err := add("README.md", func(w io.Writer) error { return bundleReadme(w, e, runs, host, files, empty, opts) }); err != nil {
		return err
	}
	return zw.Close()
}

// HostReport is host.json: the hosts the runs ran on, as the runs
// recorded them, and the cgroup versions their limits were enforced with.
type HostReport struct {
	Hosts          []metrics.HostFacts `json:"hosts"`
	CgroupVersions []string            `json:"cgroup_versions"`
	// CPU and CgroupHere are read on the exporting machine when it is the
	// host every run ran on ("" otherwise: not recorded with the runs).
	CPU         string   `json:"cpu,omitempty"`
	RunVersions []string `json:"outcore_versions"`
	// DiskBaseline is the data directory's disk-baseline.json (fio's
	// --output-format=json of the data disk), when someone measured it.
	DiskBaseline json.RawMessage `json:"disk_baseline,omitempty"`
	DiskSummary  string          `json:"disk_baseline_summary,omitempty"`
}

func hostReport(runs []store.Run, opts BundleOptions) HostReport {
	var h HostReport
	seen := map[string]bool{}
	for _, r := range runs {
		var hf metrics.HostFacts
		if json.Unmarshal(r.Host, &hf) == nil && hf.Hostname != "" {
			key := hf.Hostname + "|" + hf.Kernel + "|" + hf.DiskModel + "|" + hf.GEMM + "|" + hf.Reclaim
			if !seen[key] {
				seen[key] = true
				h.Hosts = append(h.Hosts, hf)
			}
		}
		if v := cgroupVersion(r.LimitNote); v != "" && !contains(h.CgroupVersions, v) {
			h.CgroupVersions = append(h.CgroupVersions, v)
		}
		if r.OutcoreVersion != "" && !contains(h.RunVersions, r.OutcoreVersion) {
			h.RunVersions = append(h.RunVersions, r.OutcoreVersion)
		}
	}
	sort.Strings(h.CgroupVersions)
	sort.Strings(h.RunVersions)
	if name, _ := os.Hostname(); len(h.Hosts) == 1 && h.Hosts[0].Hostname == name {
		h.CPU = cpuModel()
	}
	if opts.DataDir != "" {
		if b, err := os.ReadFile(filepath.Join(opts.DataDir, "disk-baseline.json")); err == nil && json.Valid(b) {
			h.DiskBaseline = b
			h.DiskSummary = fioSummary(b)
		}
	}
	return h
}

// cgroupVersion finds "cgroup v1"/"cgroup v2" in a run's limit note.
func cgroupVersion(note string) string {
	for _, v := range []string{"cgroup v1", "cgroup v2"} {
		if strings.Contains(note, v) {
			return v
		}
	}
	return ""
}

// cpuModel is this machine's CPU model name (/proc/cpuinfo).
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// fioSummary reads fio's JSON output: each job's read IOPS and bandwidth.
func fioSummary(b []byte) string {
	var out struct {
		Jobs []struct {
			Name string `json:"jobname"`
			Read struct {
				IOPS float64 `json:"iops"`
				BW   float64 `json:"bw"` // KiB/s
			} `json:"read"`
		} `json:"jobs"`
	}
	if json.Unmarshal(b, &out) != nil {
		return ""
	}
	var parts []string
	for _, j := range out.Jobs {
		parts = append(parts, fmt.Sprintf("%s: %.0f read IOPS, %.0f MB/s", j.Name, j.Read.IOPS, j.Read.BW*1024/1e6))
	}
	return strings.Join(parts, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// bundleReadme says what the bundle holds.
func bundleReadme(w io.Writer, e store.Experiment, runs []store.Run, h HostReport, files, empty []string, opts BundleOptions) error {
	var b strings.Builder
	name := e.Name
	if name == "" {
		name = fmt.Sprintf("experiment %d", e.ID)
	}
	fmt.Fprintf(&b, "# %s — outcore paper bundle\n\n", readmeSafe(name))
	fmt.Fprintf(&b, "Experiment %d on dataset `%s`, %d runs (every attempt), exported %s by outcore %s.\n\n",
		e.ID, readmeSafe(e.Dataset), len(runs), opts.Now.UTC().Format(time.RFC3339), orNone(opts.Version))
	b.WriteString("## Files\n\n")
	b.WriteString("- `runs.csv`, `epochs.csv`, `samples.csv`: tidy tables, one row per run, epoch or one-second sample, each row with its run's grid cell (system, mem_limit_bytes, feature_dim, batch_size, model, fanout, repeat, attempt, status). Superseded attempts are included: keep the rows whose run is not superseded (runs.csv) to count each cell once.\n")
	b.WriteString("- `charts/<chart>.csv`: the data of each figure, one row per point: `x` in real units (`x_unit`; empty for a category without units such as \"variant · grid point\"), the grid point, `y_mean`, `y_sd` (sample standard deviation over repeated runs), `y_min`, `y_max`, `n`, `status` (ok, partial, oom, failed, cancelled, interrupted, pending) and the run ids behind it. In `stages.csv`, the rows with `role` stack add up to the bar; `parent` names the stage a nested stage is part of (forward and backward inside train), and the `marker` row is the epoch time.\n")
	b.WriteString("- `figures/<chart>.svg` and `.pdf`: the figures as the dashboard exports them.\n")
	b.WriteString("- `grid.json`: the grid file as submitted (`outcore exp create grid.json` runs it again).\n")
	b.WriteString("- `host.json`: the hosts the runs ran on as the runs recorded them, the cgroup versions, and the disk's fio baseline when `disk-baseline.json` (fio's `--output-format=json`) lay in the data directory.\n")
	b.WriteString("- `VERSION`: the outcore versions that recorded the runs and exported the bundle.\n")
	b.WriteString("- `replot.py`: re-plots every figure from `charts/*.csv` and `charts/*.json` (titles, axis labels with units, the dashboard's colours and markers) into editable PDFs (`python3 replot.py [OUTDIR]`). It needs Python 3 and matplotlib (`pip install matplotlib`, or your distribution's `python3-matplotlib`); nothing else in the bundle does.\n")
	b.WriteString("- The PDFs in `figures/` name the standard Helvetica font instead of embedding one (a few KiB each); for a venue that requires embedded fonts, embed them with Ghostscript (`gs -o out.pdf -sDEVICE=pdfwrite -dEmbedAllFonts=true in.pdf`) or use `replot.py`, whose matplotlib output embeds its font.\n\n")
	b.WriteString("## Statistics\n\n")
	b.WriteString("Each run's steady (non-warm-up) epochs are averaged; a figure's point is the mean over the repeated runs of its grid cell, with ± one sample standard deviation and n. Cells where every run ran out of memory are marked OOM; cancelled cells are not failures.\n\n")
	b.WriteString("## Hosts\n\n")
	if len(h.Hosts) == 0 {
		b.WriteString("No run recorded its host.\n")
	}
	for _, hf := range h.Hosts {
		fmt.Fprintf(&b, "- %s: %d cores, %s memory, kernel %s, disk %s, GPU %s, GEMM %s, %s\n",
			readmeSafe(hf.Hostname), hf.Cores, units.ByteFormat{Unit: units.GiB, Space: true, Decimals: 1}.Format(hf.MemBytes), readmeSafe(hf.Kernel),
			readmeSafe(orNone(hf.DiskModel)), readmeSafe(orNone(hf.GPU)), readmeSafe(orNone(hf.GEMM)), readmeSafe(hf.GoVersion))
		if hf.Reclaim != "" {
			fmt.Fprintf(&b, "  - proactive reclaim: %s\n", readmeSafe(hf.Reclaim))
		}
	}
	if h.CPU != "" {
		fmt.Fprintf(&b, "- CPU: %s\n", readmeSafe(h.CPU))
	}
	if len(h.CgroupVersions) > 0 {
		fmt.Fprintf(&b, "- memory limits enforced with %s\n", strings.Join(h.CgroupVersions, ", "))
	}
	if h.DiskSummary != "" {
		fmt.Fprintf(&b, "- disk baseline (fio): %s\n", h.DiskSummary)
	} else {
		b.WriteString("- disk baseline: not measured (put fio's JSON output in the data directory as disk-baseline.json)\n")
	}
	if len(empty) > 0 {
		b.WriteString("\n## Charts without a figure\n\n")
		b.WriteString(strings.Join(empty, "\n") + "\n")
	}
	b.WriteString("\n## Contents\n\n")
	for _, f := range files {
		fmt.Fprintf(&b, "- `%s`\n", f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// readmeSafe is text the runs or a person stored (an experiment's name,
// host facts) made safe for the bundle's README, which people read with
// cat: control characters (escape sequences), invisible formatting
// characters (bidi overrides) and invalid UTF-8 are written as \u{…} or
// \x.. escapes, as `outcore exp list` prints them. Older databases hold
// names from before they were checked.
func readmeSafe(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, "\\u{%x}", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// chartStyle is a bundle's charts/<id>.json: what replot.py needs besides
// the CSV to draw the figure as the dashboard does (titles, axis labels
// with their units, each series' colour and marker).
type chartStyle struct {
	ID     string        `json:"id"`
	Title  string        `json:"title"`
	XLabel string        `json:"x_label"`
	YLabel string        `json:"y_label"`
	XUnit  string        `json:"x_unit,omitempty"`
	XType  string        `json:"x_type"`
	YType  string        `json:"y_type"`
	Kind   string        `json:"kind"`
	Note   string        `json:"note"`
	Series []seriesStyle `json:"series"`
}

type seriesStyle struct {
	Name   string `json:"name"`
	Color  string `json:"color"`
	Marker string `json:"marker"`
	Role   string `json:"role,omitempty"`
	Parent string `json:"parent,omitempty"`
	Dash   int    `json:"dash,omitempty"`
}

func writeChartStyle(w io.Writer, ch Chart) error {
	st := chartStyle{ID: ch.ID, Title: ch.Title, XLabel: ch.XLabel, YLabel: ch.YLabel, XUnit: ch.XUnit,
		XType: ch.XType, YType: ch.YType, Kind: ch.Kind, Note: ch.Note}
	for _, s := range ch.Series {
		st.Series = append(st.Series, seriesStyle{Name: s.Name, Color: s.Color, Marker: s.Marker, Role: s.Role, Parent: s.Parent, Dash: s.Dash})
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
