// Package studies is the one registry of ready-made experiments: the
// reproduction studies of docs/REPRODUCTION.md and the papers'
// micro-experiments (the dashboard's examples). Each is a study file in
// files/, embedded in the binary, its name the study's ID:
//
//	{"grid":  {...a grid file (grid.ParseGrid)...},
//	 "paper": {...optional: which paper's figure or table, its numbers...}}
//
// A study with a paper block reproduces the shape of a paper's figure or
// table: the grid (unnamed: its experiment is named "ID: paper figure",
// ByExperiment reads the ID back) lists its systems and its memory limits
// as shares of the feature bytes ("60%"); the block gives the paper's
// setting and ours, the metric compared, the paper's points and ratios
// (with a metric of their own where the paper's ratio compares something
// else, RatioMetrics), and why our numbers differ — "$key" there is a
// common reason of reasons.json. A study without one is an example: a
// named grid `outcore serve` writes into the data directory's examples/
// (web.WriteExample), where the experiment list offers it with a Start
// button.
//
// Readers: the Reproduce page (web/reproduce.go, Papers), the examples
// (cmd/outcore/cli's serve, Examples), `outcore exp create --study ID`
// (Lookup, GridIn: any study, on another dataset, in a compute mode,
// repeated) and report.CompareStudy, which sets an experiment's runs
// beside the paper's numbers. A study at small scale (SmallScale,
// scale.go) raises its limits to what its variants start in on a small
// dataset. Parse names the file and the field of anything wrong.
//
// figures.json is the figure map (figures.go, FigureMap): every figure
// and table of the five papers' evaluations with its status — the
// studies that reproduce it, the hardware it needs, what its study would
// need, or not an experiment — and the measured result
// docs/REPRODUCTION.md records; every study it names must reproduce that
// figure and every study's figure must be on it (CheckFigures). The
// Reproduce page draws it, and FigureMapMarkdown writes the doc's copy.
//
// The package reads grids with the grid language (experiments/grid) and
// imports nothing of the runner.
package studies
