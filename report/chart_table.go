package report

import (
	"fmt"
	"slices"

	"outcore/store"
)

// The chart table: every chart the product draws, one entry each — the
// experiment page's comparison charts (also the compare page's, the paper
// bundle's and `exp export ID --figure`'s), the run page's, and the scale
// figures. It is the one place to change to add a chart (docs/ARCHITECTURE.md,
// "Adding a chart"): the id lists (ChartIDs, RunChartIDs, ScaleChartIDs),
// Comparison.Chart, RunCharts, ScaleChart, the pages' chart cards, the
// export choices and help, and the bundle all read it, and
// internal/lint's TestOneHomeForChartIDs fails where code spells an id
// anywhere else.

// ChartScope is what a chart is drawn from, which says its builder's input.
type ChartScope string

const (
	// ScopeExperiment: an experiment's (or a comparison across
	// experiments') runs, a Comparison; ChartIDs.
	ScopeExperiment ChartScope = "experiment"
	// ScopeRun: one run's epochs and resource samples; RunChartIDs.
	ScopeRun ChartScope = "run"
	// ScopeScale: experiments on datasets of different sizes at one
	// memory share (ScaleChart); ScaleChartIDs.
	ScopeScale ChartScope = "scale"
)

// Page is a dashboard page that shows a chart.
type Page string

const (
	PageExperiment Page = "experiment" // a card on /experiments/:id
	PageCompare    Page = "compare"    // a card (or, for a scale figure, a link) on /compare
	PageRun        Page = "run"        // a card on /runs/:id
)

// Pages are the pages a chart may name.
var Pages = []Page{PageExperiment, PageCompare, PageRun}

// ChartInput is what a builder draws from; a builder reads the fields of
// its scope: Cmp and Baseline (experiment), Run, Epochs and Samples (run),
// Sets and Share (scale).
type ChartInput struct {
	Cmp      *Comparison
	Baseline string // the variant the normalised runtime divides by ("" = the first)
	Run      store.Run
	Epochs   []store.Epoch
	Samples  []store.Sample
	Sets     []ScaleSet
	Share    float64
}

// ChartEntry is one chart: its id (in URLs, file names and --figure), its
// title, the paper figure or table it follows, how the pages lay it out,
// and its builder.
type ChartEntry struct {
	ID    string
	Title string // the chart's title (normalised names its baseline, a scale figure its share)
	// Paper is the figure or table of the papers the chart follows
	// ("DiskGNN Table 1"), "" for one of outcore's own; the chart's Note
	// ends with "After <Paper>."
	Paper string
	// Caption says what the chart plots in a phrase (help texts, lists);
	// the chart's Note says it in full, with n and the spread.
	Caption string
	Scope   ChartScope
	// Pages show the chart as a card (the scale figures as links); a chart
	// of no page is still in its scope's charts.json, exports and bundle
	// (the accuracy chart: the experiment page shows it as a table).
	Pages []Page
	// Wide charts span the page's width; the others take a column.
	Wide bool
	// Axis is the grid axis along the chart's x ("mem_limit", "dim",
	// "batch_size"), "" for a chart not drawn against one: where that axis
	// has a single value the chart has nothing to draw and its card is hidden.
	Axis string
	// Legend is what a figure's caption adds for this chart (figure.go).
	Legend string
	// Build draws the chart from in; e is the entry itself, whose ID and
	// Title the chart takes.
	Build func(e ChartEntry, in ChartInput) (Chart, error)
}

// On reports whether page shows the chart.
func (e ChartEntry) On(page Page) bool { return slices.Contains(e.Pages, page) }

// cmpBuild is a builder of an experiment's chart.
func cmpBuild(f func(c *Comparison, e ChartEntry, baseline string) Chart) func(ChartEntry, ChartInput) (Chart, error) {
	return func(e ChartEntry, in ChartInput) (Chart, error) { return f(in.Cmp, e, in.Baseline), nil }
}

// runBuild is a builder of a run's chart.
func runBuild(f func(e ChartEntry, run store.Run, epochs []store.Epoch, samples []store.Sample) Chart) func(ChartEntry, ChartInput) (Chart, error) {
	return func(e ChartEntry, in ChartInput) (Chart, error) { return f(e, in.Run, in.Epochs, in.Samples), nil }
}

const (
	stagesLegend    = "; wall-clock stages add up to the epoch, bar mark = epoch time"
	stageTimeLegend = "; seconds summed over workers, nested stages drawn inside their parent, bar mark = epoch time"
)

var (
	cmpPages = []Page{PageExperiment, PageCompare}
	runPages = []Page{PageRun}
)

// chartTable is every chart, each scope's in page order.
var chartTable = []ChartEntry{
	// An experiment's comparison charts (the experiment and compare pages).
	{ID: "epoch-vs-mem", Title: "Epoch time vs memory limit", Paper: "GNNDrive Fig. 9, DiskGNN Fig. 9", Caption: "mean epoch time against the memory limit",
		Scope: ScopeExperiment, Pages: cmpPages, Axis: "mem_limit", Build: cmpBuild(versusChart)},
	{ID: "epoch-vs-dim", Title: "Epoch time vs feature dimension", Paper: "GNNDrive Fig. 8", Caption: "mean epoch time against the feature dimension",
		Scope: ScopeExperiment, Pages: cmpPages, Axis: "dim", Build: cmpBuild(versusChart)},
	{ID: "epoch-vs-batch", Title: "Epoch time vs batch size", Paper: "GNNDrive Fig. 10", Caption: "mean epoch time against the batch size",
		Scope: ScopeExperiment, Pages: cmpPages, Axis: "batch_size", Build: cmpBuild(versusChart)},
	{ID: "normalised", Title: "Runtime normalised to a baseline variant", Paper: "DiskGNN Fig. 8", Caption: "epoch time over the baseline variant's at each grid point",
		Scope: ScopeExperiment, Pages: cmpPages, Build: cmpBuild((*Comparison).normalised)},
	{ID: "stages", Title: "Stage breakdown per epoch (wall clock)", Paper: "Ginex Fig. 14 and GIDS Fig. 5", Caption: "wall-clock seconds of an epoch by what the trainer did",
		Scope: ScopeExperiment, Pages: cmpPages, Wide: true, Legend: stagesLegend, Build: cmpBuild((*Comparison).stages)},
	{ID: "stage-time", Title: "Time in each stage (summed over workers)", Caption: "seconds in each stage's calls per epoch, summed over workers",
		Scope: ScopeExperiment, Pages: cmpPages, Wide: true, Legend: stageTimeLegend, Build: cmpBuild((*Comparison).stageTime)},
	{ID: "hit-vs-mem", Title: "Cache hit ratio vs memory limit", Paper: "Ginex Fig. 5 and GIDS Fig. 11", Caption: "feature lookups served from memory against the memory limit",
		Scope: ScopeExperiment, Pages: cmpPages, Build: cmpBuild((*Comparison).hitVsMem)},
	{ID: "tier-hits", Title: "Hit ratio per cache tier", Caption: "each cache tier's hit ratio per grid point",
		Scope: ScopeExperiment, Pages: cmpPages, Build: cmpBuild((*Comparison).tierHits)},
	{ID: "disk-read", Title: "Disk read per epoch", Paper: "DiskGNN Table 1", Caption: "MiB read from the SSD per epoch",
		Scope: ScopeExperiment, Pages: cmpPages, Build: cmpBuild((*Comparison).diskRead)},
	{ID: "disk-read-kind", Title: "Disk read per epoch by file kind", Paper: "DiskGNN Table 1", Caption: "MiB read from the SSD per epoch by file kind",
		Scope: ScopeExperiment, Pages: cmpPages, Build: cmpBuild((*Comparison).diskReadKind)},
	{ID: "amplification", Title: "Read amplification", Paper: "DiskGNN Fig. 10", Caption: "feature bytes read per byte of the rows read",
		Scope: ScopeExperiment, Pages: cmpPages, Build: cmpBuild((*Comparison).amplification)},
	{ID: "io-efficiency", Title: "I/O efficiency", Paper: "the roofline of data loading", Caption: "the I/O floor over the epoch time",
		Scope: ScopeExperiment, Pages: cmpPages, Build: cmpBuild((*Comparison).ioEfficiency)},
	{ID: "worker-time", Title: "Sampler and extractor time: busy and waiting", Caption: "busy and waiting worker-seconds of sampling and extracting",
		Scope: ScopeExperiment, Pages: cmpPages, Build: cmpBuild((*Comparison).workerTime)},
	{ID: "memory", Title: "Memory by part: host, GPU and outside the budgets", Caption: "host peak, GPU tiers and model step at the run's peak",
		Scope: ScopeExperiment, Pages: cmpPages, Build: cmpBuild((*Comparison).memoryPeaks)},
	{ID: "time-to-accuracy", Title: "Time to accuracy", Paper: "GNNDrive Fig. 14", Caption: "validation accuracy against wall-clock time",
		Scope: ScopeExperiment, Pages: cmpPages, Wide: true, Build: cmpBuild((*Comparison).timeToAccuracy)},
	{ID: "accuracy", Title: "Test accuracy at the best validation epoch", Paper: "DiskGNN Table 3", Caption: "test accuracy at the best validation epoch",
		Scope: ScopeExperiment, Build: cmpBuild((*Comparison).accuracy)}, // the pages' accuracy table

	// One run's charts (the run page).
	{ID: "run-stages", Title: "Stage breakdown per epoch (wall clock)", Caption: "wall-clock seconds of each epoch by what the trainer did",
		Scope: ScopeRun, Pages: runPages, Legend: stagesLegend, Build: runBuild(runStages)},
	{ID: "run-stage-time", Title: "Time in each stage (summed over workers)", Caption: "seconds in each stage's calls in each epoch",
		Scope: ScopeRun, Pages: runPages, Legend: stageTimeLegend, Build: runBuild(runStageTime)},
	{ID: "run-accuracy", Title: "Accuracy and loss per epoch", Caption: "training loss and accuracies after each epoch",
		Scope: ScopeRun, Pages: runPages, Build: runBuild(runAccuracy)},
	{ID: "run-reads", Title: "Disk read per epoch by file kind", Caption: "MiB each epoch read from the SSD by file kind",
		Scope: ScopeRun, Pages: runPages, Build: runBuild(runReads)},
	{ID: "run-workers", Title: "Samplers and extractors: busy and waiting", Caption: "each epoch's busy and waiting worker-seconds",
		Scope: ScopeRun, Pages: runPages, Build: runBuild(runWorkers)},
	{ID: "run-util", Title: "CPU, GPU and iowait", Paper: "GNNDrive Fig. 3 and 11", Caption: "per-second CPU, GPU utilisation and iowait",
		Scope: ScopeRun, Pages: runPages, Build: runBuild(runUtil)},
	{ID: "run-memory", Title: "Memory", Caption: "per-second RSS, cgroup usage and GPU memory beside the budget",
		Scope: ScopeRun, Pages: runPages, Build: runBuild(runMemory)},
	{ID: "run-disk", Title: "Disk read and GPU PCIe", Caption: "per-second SSD read rate and PCIe throughput",
		Scope: ScopeRun, Pages: runPages, Build: runBuild(runDisk)},

	// The scale figures across experiments (links on the compare page).
	{ID: "scale-epoch", Title: "Epoch time vs dataset size", Caption: "epoch time",
		Scope: ScopeScale, Pages: []Page{PageCompare}, Build: scaleBuild("epoch time (s)", "s", "epoch time", mean("epoch_s", 1))},
	{ID: "scale-read", Title: "Disk read per epoch vs dataset size", Caption: "MiB read from the device per epoch",
		Scope: ScopeScale, Pages: []Page{PageCompare}, Build: scaleBuild("MiB read from the SSD per epoch", "MiB", "bytes read from the block device", mean("bytes_read", 1.0/(1<<20)))},
}

// The id lists, each scope's charts in table order.
var (
	// ChartIDs lists the experiment page's charts in page order.
	ChartIDs []string
	// RunChartIDs lists the run page's charts in page order.
	RunChartIDs []string
	// ScaleChartIDs are the scale figures: mean epoch time, and MiB read
	// from the device per epoch, against the dataset's feature bytes.
	ScaleChartIDs []string
)

func init() { deriveChartLists() }

// deriveChartLists sets the id lists from the table.
func deriveChartLists() {
	ChartIDs, RunChartIDs, ScaleChartIDs = chartIDsOf(ScopeExperiment), chartIDsOf(ScopeRun), chartIDsOf(ScopeScale)
}

func chartIDsOf(s ChartScope) []string {
	var out []string
	for _, e := range chartTable {
		if e.Scope == s {
			out = append(out, e.ID)
		}
	}
	return out
}

// ChartTable is every chart, a copy of the table.
func ChartTable() []ChartEntry { return slices.Clone(chartTable) }

// ChartByID is the chart of that id, of any scope.
func ChartByID(id string) (ChartEntry, bool) {
	for _, e := range chartTable {
		if e.ID == id {
			return e, true
		}
	}
	return ChartEntry{}, false
}

// chartOf is the chart of that id in scope s.
func chartOf(s ChartScope, id string) (ChartEntry, bool) {
	e, ok := ChartByID(id)
	return e, ok && e.Scope == s
}

// ChartsOn are the charts page shows, in page order.
func ChartsOn(page Page) []ChartEntry {
	var out []ChartEntry
	for _, e := range chartTable {
		if e.On(page) {
			out = append(out, e)
		}
	}
	return out
}

// ChartAxis is the grid axis along a chart's x (ChartEntry.Axis), "" for
// a chart not drawn against one or an unknown id.
func ChartAxis(id string) string {
	e, _ := ChartByID(id)
	return e.Axis
}

// RegisterChart adds e at the end of its scope's charts and returns what
// takes it out again: for tests that add a chart in the one place and see
// it everywhere. It panics on an entry without an id, title, scope or
// builder, or with an id the table has. Not safe beside readers of the
// table: call it before them.
func RegisterChart(e ChartEntry) (remove func()) {
	if e.ID == "" || e.Title == "" || e.Build == nil || !slices.Contains([]ChartScope{ScopeExperiment, ScopeRun, ScopeScale}, e.Scope) {
		panic(fmt.Sprintf("report: chart %q: want an id, a title, a scope and a builder", e.ID))
	}
	if _, dup := ChartByID(e.ID); dup {
		panic(fmt.Sprintf("report: chart %q is in the table already", e.ID))
	}
	chartTable = append(chartTable, e)
	deriveChartLists()
	return func() {
		chartTable = slices.DeleteFunc(chartTable, func(x ChartEntry) bool { return x.ID == e.ID })
		deriveChartLists()
	}
}
