// Package report turns an experiment's runs into what people read: the
// comparison views of DESIGN §6 as chart models, the accuracy table, run
// digests (digest.go), tidy CSV (csv.go) and publication figures in SVG or
// PDF drawn with gonum/plot (figure.go).
//
// An experiment's comparison is built in layers, one file each:
//   - compare_model.go: the model — RunData, the grid axes, Comparison
//     (runs in variant then grid order, the axes that vary, categories);
//   - compare_aggregate.go: a cell's runs turned into one Point (mean ± sd,
//     OOM / failed / cancelled counts) and the run metrics charts plot;
//   - compare_build.go: the chart shapes — a line over one axis (versus,
//     overAxis), grouped bars per grid point (perCell), stacked bars;
//   - chart_table.go: every chart in one table — id, title, paper
//     reference, caption, scope, pages, width, axis, builder — from which
//     ChartIDs, RunChartIDs, ScaleChartIDs and the lookups by id derive
//     (docs/ARCHITECTURE.md, "Adding a chart");
//   - chart_catalogue.go: Comparison.Chart and the experiment charts with
//     their own logic (normalised, tier hits, time to accuracy, ...);
//   - compare_accuracy.go: the accuracy chart and table (DiskGNN Table 3).
//
// A single run's charts are in runcharts.go. An experiment made for a
// reproduction study is set beside the paper's numbers in studies.go
// (CompareStudy); the studies themselves are the registry's study files
// (experiments/studies).
//
// It reads the experiment store through Source (load.go) and writes to any
// io.Writer; it knows nothing of HTTP. The dashboard (web/) serves its
// charts as JSON, CSV and figures, and `outcore exp export --figure`
// (cmd/outcore/cli) writes the same files from a terminal.
package report
