package web

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"outcore/experiments/grid"
	"outcore/web/views"
)

// Ready-to-start experiments are grid files in <datadir>/examples/: the
// experiment list offers each with a Start button (POST /experiments with
// example=<file>), which queues its runs. `outcore serve` writes one on
// first start; a researcher may drop more there.

// ExamplesDir is the folder of ready-to-start grid files.
func ExamplesDir(dataDir string) string { return filepath.Join(dataDir, "examples") }

// listExamples reads the ready-to-start grids, by file name.
func listExamples(dataDir string) []views.Example {
	des, err := os.ReadDir(ExamplesDir(dataDir))
	if err != nil {
		return nil
	}
	var out []views.Example
	for _, de := range des {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".json") || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		ex := views.Example{File: de.Name(), Name: strings.TrimSuffix(de.Name(), ".json")}
		b, err := readExample(dataDir, de.Name())
		if err == nil {
			var g *grid.Grid
			if g, err = grid.ParseGrid(b); err == nil {
				if g.Name != "" {
					ex.Name = g.Name
				}
				ex.Dataset = g.Dataset
				ex.Runs = g.Count()
				ex.Summary = gridSummary(g)
			}
		}
		if err != nil {
			ex.Problem = err.Error()
		}
		out = append(out, ex)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}

// gridSummary describes a grid's axes in one line.
func gridSummary(g *grid.Grid) string {
	var parts []string
	if len(g.Axes.System) > 0 {
		parts = append(parts, strings.Join(g.Axes.System, ", "))
	}
	if len(g.Axes.MemLimit) > 0 {
		parts = append(parts, "limits "+strings.Join(g.Axes.MemLimit, ", "))
	}
	if len(g.Axes.FeatureDim) > 0 {
		parts = append(parts, fmt.Sprintf("dims %v", g.Axes.FeatureDim))
	}
	if len(g.Axes.BatchSize) > 0 {
		parts = append(parts, fmt.Sprintf("batch sizes %v", g.Axes.BatchSize))
	}
	parts = append(parts, fmt.Sprintf("%d repeat(s)", max(1, g.Axes.Repeat)))
	return strings.Join(parts, " · ")
}

// readExample reads one grid file by its plain file name.
func readExample(dataDir, file string) ([]byte, error) {
	if file == "" || file != filepath.Base(file) || !strings.HasSuffix(file, ".json") || strings.HasPrefix(file, ".") {
		return nil, fmt.Errorf("example %q: not a grid file name", file)
	}
	p := filepath.Join(ExamplesDir(dataDir), file)
	st, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("example %q: no such grid file", file)
		}
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("example %q: not a regular file", file)
	}
	if st.Size() > 1<<20 {
		return nil, fmt.Errorf("example %q: larger than 1 MiB", file)
	}
	return os.ReadFile(p)
}

// WriteExample stores a ready-to-start grid file (mode 0644) unless one of
// that name exists; it reports whether it wrote.
func WriteExample(dataDir, file string, grid []byte) (bool, error) {
	dir := ExamplesDir(dataDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("examples folder: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("write example %s: %w", file, err)
	}
	if _, err := f.Write(grid); err != nil {
		f.Close()
		return false, fmt.Errorf("write example %s: %w", file, err)
	}
	return true, f.Close()
}
