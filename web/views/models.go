// Package views holds the dashboard's templ components and the plain view
// models they render. Handlers in package web fill the models from the
// store; components do no I/O and no formatting decisions beyond layout.
package views

// Page is what every full page needs besides its own content.
type Page struct {
	Title string
	Nav   string // "experiments", "new", "datasets": the highlighted tab
	CSRF  string // token for forms and for htmx requests (meta tag)
	// Stream is the page's live event stream URL ("" = no stream), with
	// the resume point already in it.
	Stream string
	// Storage is where the measurement of this host's storage for the I/O
	// floor stands (shown while it runs).
	Storage StorageState
}

// StorageState is the measurement of this host's storage for the I/O
// floor (DESIGN §11), as the dashboard shows it.
type StorageState struct {
	State       string // "", "measuring", "ready", "off", "failed"
	Step, Steps int
	What        string // the step in progress
	Note        string // when done: which profile runs use, or why none
	Filled      int    // earlier runs' epochs whose floor was filled in
}

// Counts are an experiment's runs by status. Cancelled (by a person) and
// interrupted (a server stop) are kept apart from failed.
type Counts struct {
	Total, Queued, Running, Done, Failed, OOM, Cancelled, Interrupted int
	// Dropped are the cancelled runs that never started (in Cancelled, not
	// finished); Refused the grid's cells that could not start (not runs).
	Dropped, Refused int
}

// Percent of the total for a count, for bar widths.
func (c Counts) Percent(n int) float64 {
	if c.Total == 0 {
		return 0
	}
	return 100 * float64(n) / float64(c.Total)
}

// Finished counts runs with an outcome; a run cancelled before it
// started did not finish (it is dropped).
func (c Counts) Finished() int {
	return c.Done + c.Failed + c.OOM + c.Cancelled - c.Dropped + c.Interrupted
}

// Requeueable counts the runs "requeue" starts again: failed, cancelled and interrupted.
func (c Counts) Requeueable() int { return c.Failed + c.Cancelled + c.Interrupted }

// ExperimentRow is one line of the experiment list.
type ExperimentRow struct {
	ID       int64
	Name     string
	Dataset  string
	Variants string
	State    string // empty, queued, running, finished
	Counts   Counts
	Created  string
	// StartedMS and EndedMS bound the runs' wall time in unix ms (0 = not
	// yet); the page ticks the duration while EndedMS is 0.
	StartedMS, EndedMS int64
	Tags               []string
	Notes              string
}

// ListView is the experiment list with its filter bar.
type ListView struct {
	Rows     []ExperimentRow
	Examples []Example
	Filter   string // the query as typed
	Sort     string
	Problem  string // why the filter cannot be applied, in words
	Total    int    // experiments before filtering
	Keys     string // the filter's keys, for the hint
}

// Example is a ready-to-start grid file.
type Example struct {
	File    string
	Name    string
	Dataset string
	Runs    int
	Summary string
	Problem string // why it cannot start, if so
	// Refused is how many of Runs cannot start (below their variant's
	// floor): Start skips them and shows them as refused.
	Refused int
	// Estimate is the expected duration of the runs that start, in words.
	Estimate string
	// Generate offers to make the example's missing dataset from the
	// preset of its name first ("medium (1 GiB of features, ~5s)").
	Generate string
}

// ExampleStart is the page that confirms an example's start: how many
// runs, which cells are refused and why, how long it should take.
type ExampleStart struct {
	Example
	Reasons []string // one per refused cell kind
}

// FormOption is one choice of a select or checkbox group.
type FormOption struct {
	Value, Label string
	Selected     bool
	Note         string
}

// ExperimentForm is the new-experiment form as typed, with its errors.
type ExperimentForm struct {
	// SkipInfeasible: the "skip the cells that cannot start" box.
	SkipInfeasible bool
	Name           string
	DatasetMode    string // "existing" or "generate"
	Dataset        string
	Datasets       []FormOption
	Preset         string
	Presets        []FormOption
	NewDataset     string
	Variants       []FormOption // Selected = checked
	Testbeds       []FormOption // the testbed select (Selected = chosen)
	IDs            []FormOption // the node numberings, checkboxes (Selected = ticked; none: the dataset's own)
	MemLimits      string
	Dims           string
	Batches        string
	Model          string
	Models         []FormOption
	Fanouts        string
	Compute        string // compute modes, comma-separated
	Profiles       string // the accelerator profiles model:PROFILE may name
	Frontier       bool   // a memory-frontier search
	Epochs         string
	Repeats        string
	RunOrder       string // "", grid, interleave or random
	// OptionAxes are the variants' options the form offers as axes.
	OptionAxes []OptionAxis
	// ExternalOptions are the registered external systems' declared
	// options, one input each.
	ExternalOptions []ExternalSystemOptions
	Errors          map[string]string // field name -> message; "" key = whole form
	Preview         Preview
}

// OptionAxis is a variant option offered as an axis: its form field
// ("axis.options.KEY"), key, help, the variants that declare it and the
// values given (comma-separated).
type OptionAxis struct {
	Field, Key, Help string
	Variants         []string
	Value            string
}

// ExternalSystemOptions are one external system's option inputs.
type ExternalSystemOptions struct {
	System  string // "external:NAME"
	Help    string
	Options []ExternalOption
}

// ExternalOption is the input of one declared option: its form field
// ("ext.NAME.KEY"), its id and error key ("ext-NAME-KEY"), its type and
// range as the hint, its default as the placeholder, the values given.
type ExternalOption struct {
	Field, ID, Key, Help, Hint, Placeholder, Value string
}

// Err returns the error message of a field ("" = none).
func (f ExperimentForm) Err(field string) string { return f.Errors[field] }

// Preview is the live count of runs the grid makes.
type Preview struct {
	Runs    int
	Factors string // "3 variants × 2 limits × 2 repeats"
	Problem string // why the grid is not valid yet ("" = valid)
	// Cells is the variant × memory limit matrix with the cells a variant
	// cannot run marked (nil when the limits or dataset are not known yet).
	Cells *CellMatrix
	// Estimate is the grid's expected duration from past runs of similar
	// cells, in words ("" = no past run to go by).
	Estimate string
	// Refused is how many runs cannot start (below their variant's floor);
	// Skip is whether the form skips them (records them as refused).
	Refused int
	Skip    bool
	// Suggested are the limits the form offers for the chosen dataset and
	// variants (shares of its features above their floors), when the
	// field holds others.
	Suggested string
	// For names the form the preview answers (dataset, batch sizes,
	// fanouts), and Seq the browser's number of the request it answers
	// (0 for the page's first render): app.js drops an answer older than
	// the last request it sent, so the preview is the form on screen.
	For string
	Seq uint64
}

// CellMatrix is a grid's variants × memory limits.
type CellMatrix struct {
	Limits  []string // "64MiB (25%)"
	Rows    []CellRow
	Refused int // cells marked Impossible
}

// CellRow is one variant's cells.
type CellRow struct {
	Variant string
	Cells   []Cell
}

// Cell is one variant at one memory limit.
type Cell struct {
	Impossible bool   // below the variant's least memory (MinMemory)
	Title      string // why, or the estimate
	Text       string // "✕" or an estimated duration
}

// RunRow is one run in an experiment's queue table.
type RunRow struct {
	ID                 int64
	ExperimentID       int64
	Seq                int
	Attempt            int
	System             string
	Cell               string // the run's values on its grid's path axes: "options.window=4"
	MemLimit           string
	Dim                string
	Batch              string
	Model              string
	Fanout             string
	Repeat             int
	Status             string
	Progress           Progress
	EpochTime          string // mean steady epoch time or "–"
	BestVal            string
	StartedMS, EndedMS int64
	Error              string // how it ended, or why it is stalled (the status cell's title)
	CanCancel          bool
	CanRetry           bool
}

// Progress is how far a run is.
type Progress struct {
	Percent float64
	Label   string // "epoch 2/5 · batch 40/120"
	Status  string // colours the bar
}

// ExperimentView is the experiment page.
type ExperimentView struct {
	// Unsaved is a refused edit (its values go back into the edit form
	// only; the heading, notes and tags show what is stored).
	Unsaved Unsaved
	// Refused are the grid's cells skipped at creation because they
	// cannot start, each with its reason.
	Refused   []RefusedRow
	ID        int64
	Name      string
	Dataset   string
	State     string
	Counts    Counts
	Created   string
	StartedMS int64
	EndedMS   int64
	Grid      string // the grid as JSON, indented
	Runs      []RunRow
	Variants  []string
	Baseline  string
	Charts    []ChartSlot
	Accuracy  []AccuracyRow
	// Frontier is a memory-frontier search's result per cell (empty for
	// other experiments): "pyg+" → "20 MiB (…)".
	Frontier   []KV
	Notes      string
	Tags       []string
	TagsText   string // "fig9, paper" for the form
	RunFilter  string // the queue's filter as typed ("" = every run)
	RunSort    string // the queue's order (report.RunSortKeys; "" = grid order)
	RunProblem string // why it cannot be applied
	Shown      int    // runs the queue shows (all, or those the filter keeps)
	MetaError  string // why the name, notes or tags were refused
	TimeLeft   string // the remaining runs' estimated duration ("" = none)
	CanCancel  bool
	CanRequeue bool // failed, cancelled or interrupted runs to start again
	CanDelete  bool
	ChartsURL  string
	RunsURL    string // the runs view's data (report.Parallel)
	ExportBase string // "/experiments/7/export"
	// Study is the paper-beside-ours table when the experiment was made
	// for a reproduction study (studies.ByExperiment), else nil.
	Study *StudyTableView
}

// CompareView is a comparison across experiments.
type CompareView struct {
	Experiments []CompareExp
	RunFilter   string   // the cells picked, as a run filter query
	Problem     string   // why there is nothing to compare, in words
	MixedURL    string   // with a Problem of different data: the link that compares anyway
	Caveats     []string // what makes the comparison unsafe (different data asked for, hosts, busy hosts)
	Charts      []ChartSlot
	ChartsURL   string
	Changes     []ChangeRow
	Variants    []string
	// Scale links the scale figures (epoch time and device reads against
	// the dataset's size at a memory share) when the experiments ran on
	// two or more datasets.
	Scale []ScaleLink
}

// ScaleLink is the scale figures at one memory share.
type ScaleLink struct {
	Share   string // "25%", "none"
	Figures []ScaleFigure
}

// ScaleFigure is one scale figure's files.
type ScaleFigure struct {
	Name     string // "epoch", "read"
	SVG, CSV string
}

// CompareExp is one experiment of a comparison.
type CompareExp struct {
	ID      int64
	Name    string
	Dataset string
	Runs    int
}

// ChangeRow is one cell measured in two experiments.
type ChangeRow struct {
	Variant, Cell, Color string
	FromExp, ToExp       string
	From, To, Change     string
	// Epochs is the epoch kind both sides are over ("warm", "cold"), or,
	// when Unlike, the kinds each measured ("#3 cold, #5 warm").
	Epochs string
	Unlike bool // measured only in different epoch kinds: not compared
	Slower bool // slower beyond the spread
}

// ChartSlot is where one chart goes on a page.
type ChartSlot struct {
	ID    string
	Title string
	Note  string
	Wide  bool
	// Hidden: the page starts without the card (a chart against a grid
	// axis the experiment does not vary); app.js shows a card once its
	// chart has something to draw and hides it when not.
	Hidden bool
	// Exports links: CSV of the chart's data, SVG and PDF figures.
	CSV, SVG, PDF string
}

// AccuracyRow is one line of the accuracy table.
type AccuracyRow struct {
	Variant, Cell  string
	Color          string
	N              int
	Val, Test, Eps string // "0.812 ± 0.004"
	Status         string
}

// RunView is the run page.
type RunView struct {
	ID           int64
	ExperimentID int64
	Title        string // "gnndrive · 512 MiB · repeat 1"
	Status       string // as shown: "stalled" for a running run with a Stall
	Stall        string // why a running run writes no records ("" when it does)
	Progress     Progress
	Facts        []KV // config and how it ran
	Config       string
	Summary      []KV
	Epochs       []EpochRow
	Logs         []LogLine
	StderrTail   string
	Error        string
	Cause        string // what an out-of-memory run was doing when it was killed
	PeakNote     string // why the peaks look as they do, when they need a word
	BusyHost     string // why the run was measured on a busy host ("" when not)
	Deviations   []string
	Devices      []KV
	StartedMS    int64
	EndedMS      int64
	ChartsURL    string
	Charts       []ChartSlot
	CanCancel    bool
	CanRetry     bool
	ExportBase   string
}

// KV is one labelled value.
type KV struct{ K, V string }

// EpochRow is one line of a run's per-epoch table.
type EpochRow struct {
	RunID                                     int64
	Epoch                                     int
	Warmup                                    bool
	EpochS, SampleS, ExtractS, TrainS, StallS string // wall-clock stages (ExtractS: load) since metrics version 3
	StageTitle                                string // what the stage cells are
	Batches                                   string
	HitRatio, ReadMiB, Amplification          string
	FeatMiB, TopoMiB                          string // "–" for epochs before metrics version 2
	AmpTitle                                  string // what Amplification means for this epoch
	Loss, TrainAcc, ValAcc, TestAcc, WallS    string
	IOFloor, IOEff, IOTitle                   string // "–" when the host's storage was not measured
	// Host is the epoch's other processes' CPU and steal ("–" when not
	// recorded); Busy says the epoch was measured on a busy host or a
	// slow disk, HostTitle why and the rest of its host pressure.
	Host, HostTitle string
	Busy            bool
}

// LogLine is one line of a run's log.
type LogLine struct {
	ID    int64 // event id, unique on the page
	T     string
	Level string
	Msg   string
}

// DatasetRow is one dataset in the data directory.
type DatasetRow struct {
	Name, Nodes, Edges, Dim, Classes, Features, Split, Source, Created string
	Problem                                                            string // why it cannot be opened, if so
}

// Job is a dataset generation or import running in the server.
type Job struct {
	ID       int64
	Kind     string // "generate" or "import"
	Name     string
	State    string // running, done, failed
	Percent  float64
	Message  string
	Link     string // what the job made, e.g. the experiment it created
	Started  string
	Finished bool
}

// DatasetForms are the generate and import forms with their errors.
type DatasetForms struct {
	GenName, GenPreset, GenSeed string
	Presets                     []FormOption
	ImpKind, ImpPath, ImpName   string
	ImportKinds                 []FormOption
	ImportRoot                  string // where import paths must lie
	Errors                      map[string]string
}

// Err returns the error message of a field ("" = none).
func (f DatasetForms) Err(field string) string { return f.Errors[field] }

// DatasetsView is the datasets page.
type DatasetsView struct {
	Datasets []DatasetRow
	Jobs     []Job
	Forms    DatasetForms
	DataDir  string
}

// ReproduceView is the Reproduce page: the registered studies.
type ReproduceView struct {
	// Map is the figure map (studies.FigureMap): per paper, every figure
	// and table of its evaluation with its status.
	Map      []FigureMapPaper
	Studies  []StudyCard
	Datasets []string // datasets of the data directory a study may run on
	// Problem is why the last start was refused (with the study it was for).
	Problem, ProblemStudy string
}

// FigureMapPaper is one paper on the Reproduce page's figure map.
type FigureMapPaper struct {
	Name, File string
	Anchor     string // the card's id, "map-gnndrive"
	Counts     string // "17 figures and tables: 3 with a study, …"
	Figures    []FigureRow
}

// FigureRow is one figure or table of a paper on the figure map.
type FigureRow struct {
	ID, Section, Plots string
	// Key is its status as figures.json writes it ("needs-hardware"),
	// Status in words, Badge the badge class it is drawn with.
	Key, Status, Badge string
	Studies            []FigureStudy
	// Detail is why it needs other hardware and what would run it, or
	// what its study would need.
	Detail, Note string
	// Measured is the result docs/REPRODUCTION.md records (its verdict in
	// words, the badge class, what was measured, the section), empty
	// where none is.
	Measured, MeasuredBadge, MeasuredText, MeasuredWhere string
}

// FigureStudy is a study of a figure on the map: its card on the page (a
// reproduction study) or its example on the experiment list, the latest
// experiment made for it and, where report.CompareStudy gives one, its
// verdict.
type FigureStudy struct {
	ID, Href string
	Latest   int64 // the latest experiment made for it, 0 for none
	// Verdict is the latest experiment's ratios summed up ("holds"),
	// VerdictBadge the badge class it is drawn with and VerdictWhy the
	// words after it ("2 of 2 ratios within the paper's range").
	Verdict, VerdictBadge, VerdictWhy string
}

// StudyCard is one study on the Reproduce page.
type StudyCard struct {
	ID, Paper, Figure, Title string
	PaperSetting, OurSetting string
	Dataset                  string // the study's own dataset
	Testbed                  string // the testbed it runs under (studies.Study.Testbed)
	Systems                  []string
	MemLimits                string
	Runs                     int
	Ratios                   []string // the paper's ratios in words
	Differ                   []string
	Experiments              []StudyExperiment // experiments already made for it
	// HaveDataset: the study's own dataset is in the data directory;
	// Generate offers to make it from its preset otherwise ("medium (1GiB
	// of features, ~6s)").
	HaveDataset bool
	Generate    string
	// Small is the small-scale form on SmallDataset ("" = none fits):
	// its limits, run count and estimated duration.
	SmallDataset, SmallLimits, SmallEstimate string
	SmallRuns, SmallRefused                  int
}

// StudyExperiment links an experiment made for a study.
type StudyExperiment struct {
	ID      int64
	Dataset string
	Limits  string // the memory limits it ran at ("50%, 75%")
	State   string
}

// StudyTableView is a study's paper-beside-ours table on its experiment's
// page.
type StudyTableView struct {
	Dataset                  string // the dataset the experiment ran on
	Limits                   string // the limits it ran at ("50%, 75%")
	MinEvidence              int    // quiet warm runs a side a verdict needs
	CSV                      string // the table as CSV
	ID, Paper, Figure, Title string
	PaperSetting, OurSetting string
	Metric                   string
	Rows                     []StudyRowView
	Ratios                   []StudyRatioView
	Differ                   []string
}

// StudyRowView is one system at one limit.
type StudyRowView struct {
	Label, System, MemLimit string
	Paper, Ours             string // "241.1 s", "–"
	Runs                    string // "2 of 2 done", "oom ×1"
}

// StudyRatioView is a ratio of the paper beside ours.
type StudyRatioView struct {
	Label, Paper, Ours string
	Verdict            string // "within the paper's range", "outside", "pending", "not enough evidence"
	// Evidence is each side's n and epoch kinds: "Ginex: n=1 (1 cold) · GNNDrive: n=3 (3 quiet warm)".
	Evidence string
}

// RefusedRow is a grid cell that was not run: it cannot start.
type RefusedRow struct {
	Seq             int
	System, Limit   string
	Dataset, Reason string
	Repeat          int
}

// Unsaved holds what a refused edit of an experiment's name, notes and
// tags typed: the edit form shows it again with the reason, while the
// page shows what is stored.
type Unsaved struct {
	Name, Notes string
	Set         bool
}

// EditName is the name field's value: the refused edit's, else the stored name.
func (e ExperimentView) EditName() string {
	if e.Unsaved.Set {
		return e.Unsaved.Name
	}
	return e.Name
}

// EditNotes is the notes field's value: the refused edit's, else the stored notes.
func (e ExperimentView) EditNotes() string {
	if e.Unsaved.Set {
		return e.Unsaved.Notes
	}
	return e.Notes
}

// RunsListView is the list of runs across experiments.
type RunsListView struct {
	Filter, Keys, Problem string
	Rows                  []RunsListRow
	Total                 int // runs the filter selects (Rows holds the newest, at most 500)
}

// RunsListRow is one run with its experiment.
type RunsListRow struct {
	RunRow
	Experiment, Dataset string
}

// hasOptionAxis reports whether any option axis has values.
func hasOptionAxis(os []OptionAxis) bool {
	for _, o := range os {
		if o.Value != "" {
			return true
		}
	}
	return false
}
