package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"outcore/engine/dataset"
)

// ensurePresetDataset generates the preset dataset name in the data dir
// when it is absent, so that `exp create --study` starts every study on a
// fresh install (the Reproduce page does the same through its jobs). A
// name that is not a preset (`default`, an imported dataset) is left to
// the grid's plan, which names what is missing. Progress goes to s.Err:
// the generator's own status line on a terminal, a line every few seconds
// otherwise.
func ensurePresetDataset(ctx context.Context, s Streams, dataDir, name string) error {
	cfg, err := dataset.Preset(name)
	if err != nil {
		return nil
	}
	root := dataset.DatasetsDir(dataset.ResolveDataDir(dataDir))
	if _, err := dataset.ReadMeta(filepath.Join(root, name)); err == nil || !errors.Is(err, dataset.ErrNotFound) {
		return nil // present, or present but unreadable: the plan says which
	}
	fb := cfg.Nodes * int64(cfg.FeatureDim) * 4
	fmt.Fprintf(s.Err, "outcore exp: dataset %s is absent: generating preset %s (%d nodes, %.1f GiB of features) in %s\n",
		name, name, cfg.Nodes, float64(fb)/(1<<30), root)
	var progress io.Writer = &lineProgress{w: s.Err, every: 10 * time.Second}
	if isTerminal(s.Err) {
		progress = s.Err
	}
	began := time.Now()
	if _, err := dataset.GenerateWith(ctx, root, name, cfg, dataset.GenOptions{Progress: progress, Preset: name, NoIndptr: true}); err != nil {
		return fmt.Errorf("generate the study's dataset %s: %w", name, datasetErr(err))
	}
	fmt.Fprintf(s.Err, "outcore exp: generated %s in %.1f s\n", name, time.Since(began).Seconds())
	return nil
}

// lineProgress turns the generator's carriage-return status line into a
// plain line at most every `every` (a log or a pipe, not a terminal).
type lineProgress struct {
	w     io.Writer
	every time.Duration
	last  time.Time
}

func (l *lineProgress) Write(p []byte) (int, error) {
	line := strings.TrimSpace(strings.TrimLeft(string(p), "\r"))
	if line == "" || time.Since(l.last) < l.every {
		return len(p), nil
	}
	l.last = time.Now()
	if _, err := fmt.Fprintln(l.w, "outcore exp: "+line); err != nil {
		return 0, err
	}
	return len(p), nil
}
