package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/experiments"
	"outcore/experiments/executors"
	"outcore/experiments/grid"
	"outcore/experiments/studies"
	"outcore/internal/units"
	"outcore/report"
	"outcore/store"
)

// expCmd is `outcore exp`.
func expCmd() *Command {
	return &Command{
		Name:  "exp",
		Args:  "<command> [flags]",
		Short: "create, list, show and export experiments",
		Long: withSystems(`Experiments are grids of training runs, kept in the data directory's store.

Runs are executed by the process that holds the data directory's queue:
'outcore serve', or 'outcore exp create --wait', which runs the queue
in-process until its experiment has finished (if a server holds the queue,
--wait only watches). Without --wait, created runs wait in the queue until
one of those picks them up.

A grid file:
  {"name": "limits", "dataset": "tiny", "model": "sage", "epochs": 1,
   "axes": {"system": [{{systems}}],
            "mem_limit": ["256MiB", "512MiB", "1GiB"], "repeat": 2}}
Axes: system, mem_limit ("512MiB", "25%" of the features, "none"),
feature_dim (runs on <dataset>-d<dim>, generated from the dataset's
generator config when missing), batch_size, model, fanout, repeat. Other
top-level keys are fields of the run configuration (see 'outcore train -h').`),
		Subcommands: []*Command{expCreateCmd(), expFrontierCmd(), expScaleCmd(), expEstimateCmd(), expListCmd(), expShowCmd(), expExportCmd(),
			expClaimsCmd(), expCancelCmd(), expRetryCmd(), expDeleteCmd()},
	}
}

// openStore opens the data directory's database.
func openStore(ctx context.Context, dirFlag string) (*store.Store, string, error) {
	dir := dataset.ResolveDataDir(dirFlag)
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		return nil, "", err
	}
	return st, dir, nil
}

// parseID parses a positional experiment or run id.
func parseID(s, what string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%s id %q is not a positive integer", what, s)
	}
	return id, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func expCreateCmd() *Command {
	var dataDir, file, study, studyDataset, studyCompute string
	var studyRepeats int
	var wait, drop bool
	var conc int
	fs := newFlagSet("exp create", &dataDir)
	fs.StringVar(&file, "file", "", "grid file (- for stdin)")
	fs.StringVar(&study, "study", "", "instead of --file: the grid of this study of the registry (experiments/studies: the reproduction studies of docs/REPRODUCTION.md and the examples; ids: "+studies.IDs()+")")
	fs.StringVar(&studyDataset, "study-dataset", "", "with --study: run it on this dataset instead of the study's own")
	fs.StringVar(&studyCompute, "study-compute", "", "with --study: every run in this compute mode (cpu, none, model:PROFILE; DESIGN §10)")
	fs.IntVar(&studyRepeats, "study-repeats", 0, "with --study: runs per cell (medians of 3 for docs/REPRODUCTION.md)")
	fs.BoolVar(&wait, "wait", false, "run the queue here until this experiment has finished, showing progress")
	fs.IntVar(&conc, "concurrency", 1, "with --wait: local runs at a time")
	fs.BoolVar(&drop, "drop-caches", false, "with --wait: drop the page cache before each run (root only; recorded per run)")
	var systemsFile string
	fs.StringVar(&systemsFile, "systems", "", systemsFlagHelp)
	sf := addExecutorFlags(fs, "executor of this experiment's runs: "+executorNames(" or ")+" (default local); a grid naming another executor is refused")
	return &Command{
		Name: "create", Args: "--file GRID.json | --study ID [--wait] [--executor " + executorNames("|") + "] [flags]", Short: "create an experiment and queue its runs", Flags: fs,
		Long: executorHelp(func(r executors.Registration) string { return r.CreateHelp }),
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			if (file == "") == (study == "") {
				return usagef("give one of --file and --study")
			}
			if studyDataset != "" && study == "" {
				return usagef("--study-dataset needs --study")
			}
			if (studyCompute != "" || studyRepeats != 0) && study == "" {
				return usagef("--study-compute and --study-repeats need --study")
			}
			executor, execOpts, err := sf.options()
			if err != nil {
				return err
			}
			_, offered, _ := sf.executors()
			var grid []byte
			switch {
			case study != "":
				st, ok := studies.Lookup(study)
				if !ok {
					return usagef("--study %q: no such study (have %s)", study, studies.IDs())
				}
				grid, err = st.GridIn(studyDataset, studyCompute, studyRepeats)
				file = "study " + study
				if err == nil {
					ds := studyDataset
					if ds == "" {
						ds = st.Dataset
					}
					err = ensurePresetDataset(ctx, s, dataDir, ds)
				}
			case file == "-":
				grid, err = io.ReadAll(os.Stdin)
			default:
				grid, err = os.ReadFile(file)
			}
			if err != nil {
				return fmt.Errorf("read grid: %w", err)
			}
			return createExperiment(ctx, s, createArgs{dataDir: dataDir, label: file, grid: grid, wait: wait, conc: conc, drop: drop,
				executor: executor, executors: offered, execOpts: execOpts, systems: systemsFile})
		},
	}
}

// createArgs are what `exp create` and `exp frontier` create an
// experiment with.
type createArgs struct {
	dataDir, label string
	grid           []byte
	wait, drop     bool
	conc           int
	executor       string
	executors      []string
	execOpts       map[string]any // each registered executor's options, from its flags
	systems        string         // --systems: the external systems' registry ("" = <data dir>/systems.json)
}

// createExperiment creates the experiment of a.grid and, with a.wait,
// runs the queue until it has finished.
func createExperiment(ctx context.Context, s Streams, a createArgs) error {
	dataDir, file, gridText, wait, conc, drop := a.dataDir, a.label, a.grid, a.wait, a.conc, a.drop
	executor, executors, execOpts := a.executor, a.executors, a.execOpts
	st, dir, err := openStore(ctx, dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	reg, err := loadSystems(dir, a.systems)
	if err != nil {
		return err
	}
	m, err := experiments.New(experiments.Options{DataDir: dir, Store: st, Concurrency: conc, DropCaches: drop,
		Executor: executor, Executors: executors, ExecutorOptions: execOpts, External: reg,
		Finished: func(ctx context.Context, id int64) error { return report.StoreRunDigest(ctx, st, id) },
		Logf:     func(f string, a ...any) { fmt.Fprintf(s.Err, "outcore exp: "+f+"\n", a...) }})
	if err != nil {
		return err
	}
	defer m.Close()
	lastID, err := st.LastEventID(ctx)
	if err != nil {
		return err
	}
	co := experiments.CreateOptions{}
	if len(executors) == 1 { // one named: it is the runs'; several: the grid picks among them
		co.Executor = executor
	}
	e, err := m.CreateWith(ctx, gridText, co)
	if err != nil {
		if errors.Is(err, grid.ErrInvalid) {
			return usagef("%s: %v", file, err)
		}
		return err
	}
	fmt.Fprintf(s.Out, "experiment %d created: %d runs queued\n", e.ID, e.Counts.Total)
	if !wait {
		serve := "outcore serve"
		if len(executors) > 0 && !(len(executors) == 1 && executors[0] == store.ExecutorLocal) {
			// A server runs only the executors it was started with.
			serve += " --executor " + strings.Join(executors, ",")
		}
		fmt.Fprintf(s.Out, "runs start when a queue runs: `%s`, or `outcore exp create --wait`\n", serve)
		return nil
	}
	return waitExperiment(ctx, m, e, lastID, s)
}

// waitExperiment runs the queue (or watches the process that runs it)
// until experiment e has finished, printing progress.
func waitExperiment(ctx context.Context, m *experiments.Manager, e store.Experiment, lastID int64, s Streams) error {
	st := m.Store()
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	// runErr is non-nil while a Run attempt is in flight. When another
	// process holds the queue, Run is tried again every second: that
	// process may be another --wait that leaves once its own experiment is
	// done.
	var runErr chan error
	startRun := func() {
		runErr = make(chan error, 1)
		go func() { runErr <- m.Run(runCtx) }()
	}
	startRun()
	watching := false
	events, unsub := m.SubscribeFrom(lastID)
	defer unsub()
	out := s.Out
	p := &progressPrinter{out: out, err: s.Err, st: st, exp: e.ID, total: e.Counts.Total, tty: isTerminal(s.Err)}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		check := false
		select {
		case err := <-runErr:
			runErr = nil
			if errors.Is(err, experiments.ErrQueueBusy) {
				if !watching {
					watching = true
					fmt.Fprintln(out, "another process runs the queue; watching")
				}
				continue
			}
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted: %w", ctx.Err())
			}
			check = true
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.ExperimentID == e.ID {
				p.event(ctx, ev)
				check = ev.Kind == store.EventStatus
			}
		case <-tick.C:
			check = true
			if runErr == nil {
				startRun()
			}
		case <-ctx.Done():
			if runErr != nil {
				// Run stops the children and records their runs interrupted.
				<-runErr
			}
			p.clear()
			return fmt.Errorf("interrupted: %w", ctx.Err())
		}
		if !check {
			continue
		}
		cur, err := st.Experiment(ctx, e.ID)
		if err != nil {
			return err
		}
		if cur.Counts.State() == "finished" {
			// a memory-frontier search goes on while a cell has a probe
			// to run (experiments.AdvanceFrontier)
			if n, err := m.AdvanceFrontier(ctx, e.ID, 0); err != nil {
				return err
			} else if n > 0 {
				continue
			}
			// the queue's end-of-run hook may have queued the probe
			if again, err := st.Experiment(ctx, e.ID); err != nil {
				return err
			} else if again.Counts.State() != "finished" {
				continue
			}
			p.clear()
			if runErr != nil {
				m.Drain()
				if err := <-runErr; err != nil && !errors.Is(err, experiments.ErrQueueBusy) {
					return err
				}
			}
			// Print the events already written.
			for drained := false; !drained && events != nil; {
				select {
				case ev, ok := <-events:
					if !ok {
						drained = true
					} else if ev.ExperimentID == e.ID {
						p.event(ctx, ev)
					}
				case <-time.After(300 * time.Millisecond):
					drained = true
				}
			}
			c := cur.Counts
			fmt.Fprintf(out, "experiment %d finished: %d done, %d oom, %d failed, %d cancelled, %d interrupted\n",
				e.ID, c.Done, c.OOM, c.Failed, c.Cancelled, c.Interrupted)
			if cells, err := m.FrontierCells(ctx, e.ID); err == nil {
				for _, fc := range cells {
					fmt.Fprintf(out, "frontier %s: %s\n", fc.System, experiments.FrontierText(fc))
				}
			}
			if c.Failed > 0 {
				return fmt.Errorf("%d of %d runs failed (outcore exp show %d)", c.Failed, c.Total, e.ID)
			}
			return nil
		}
	}
}

// progressPrinter prints an experiment's events as lines; progress records
// become a status line on a terminal's stderr.
type progressPrinter struct {
	out      io.Writer
	err      io.Writer // the status line on a terminal
	st       *store.Store
	exp      int64 // the experiment, whose run count grows while a frontier search adds probes
	total    int
	tty      bool
	finished int
	line     bool
}

// epochQuality is an epoch line's loss and validation accuracy, "n/a"
// where none exists: no model is trained under --compute none or model:
// (DESIGN §10), and an epoch that eval_every skips has no accuracy.
func epochQuality(rec metrics.EpochRecord) string {
	loss, acc := "n/a (no model trained: compute "+rec.Compute+")", "n/a"
	if rec.Compute == "" || rec.Compute == "cpu" {
		loss = fmt.Sprintf("%.4f", rec.TrainLoss)
		if rec.Evaluated {
			acc = fmt.Sprintf("%.4f", rec.ValAcc)
		} else {
			acc = "n/a (not evaluated)"
		}
	}
	return "loss " + loss + ", val_acc " + acc
}

func (p *progressPrinter) clear() {
	if p.line {
		fmt.Fprint(p.err, "\r\033[K")
		p.line = false
	}
}

func (p *progressPrinter) event(ctx context.Context, ev store.Event) {
	switch ev.Kind {
	case store.EventStatus:
		var d struct {
			Status  string `json:"status"`
			System  string `json:"system"`
			Limit   int64  `json:"mem_limit_bytes"`
			Repeat  int    `json:"repeat"`
			Attempt int    `json:"attempt"`
		}
		json.Unmarshal(ev.Data, &d)
		if d.Status == store.StatusRunning && strings.HasPrefix(ev.Msg, "starting") {
			return // the "running as pid" event follows
		}
		if store.Finished(d.Status) {
			p.finished++
		}
		if p.finished > p.total && p.st != nil {
			if e, err := p.st.Experiment(ctx, p.exp); err == nil {
				p.total = max(p.total, e.Counts.Total)
			}
		}
		limit := "none"
		if d.Limit > 0 {
			limit = units.Bytes(d.Limit)
		}
		p.clear()
		fmt.Fprintf(p.out, "[%d/%d] run %d %s mem_limit=%s repeat=%d: %s\n", p.finished, p.total, ev.RunID, d.System, limit, d.Repeat, ev.Msg)
	case store.EventEpoch:
		var rec metrics.EpochRecord
		json.Unmarshal(ev.Data, &rec)
		p.clear()
		warm := ""
		if rec.Warmup {
			warm = " (warm-up)"
		}
		fmt.Fprintf(p.out, "        run %d epoch %d: %.3f s%s, %s\n", ev.RunID, rec.Epoch, rec.EpochS, warm, epochQuality(rec))
	case store.EventLog:
		if ev.Level == "warn" || ev.Level == "error" {
			p.clear()
			fmt.Fprintf(p.out, "        run %d %s: %s\n", ev.RunID, ev.Level, ev.Msg)
		}
	case store.EventProgress:
		if !p.tty {
			return
		}
		var rec metrics.ProgressRecord
		json.Unmarshal(ev.Data, &rec)
		fmt.Fprintf(p.err, "\r\033[K  run %d epoch %d batch %d/%d %s", ev.RunID, rec.Epoch, rec.Batch, rec.Batches, rec.Phase)
		p.line = true
	}
}

func expListCmd() *Command {
	var dataDir string
	var asJSON bool
	fs := newFlagSet("exp list", &dataDir)
	fs.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return &Command{
		Name: "list", Aliases: []string{"ls"}, Args: "[flags]", Short: "list experiments: a header, then one per line, id first", Flags: fs,
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			st, _, err := openStore(ctx, dataDir)
			if err != nil {
				return err
			}
			defer st.Close()
			list, err := st.ListExperiments(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(s.Out, list)
			}
			tw := tabwriter.NewWriter(s.Out, 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tDATASET\tSTATE\tRUNS\tQUEUED\tRUNNING\tDONE\tOOM\tFAILED\tCANCELLED\tINTERRUPTED\tCREATED")
			for _, e := range list {
				c := e.Counts
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", e.ID, orDash(termSafe(e.Name, 60)), termSafe(e.Dataset, 40), c.State(),
					c.Total, c.Queued, c.Running, c.Done, c.OOM, c.Failed, c.Cancelled, c.Interrupted, e.CreatedAt.Format("2006-01-02 15:04:05"))
			}
			return tw.Flush()
		},
	}
}

// experimentCmd is a command about one experiment given by its ID; run
// gets the parsed id and the data directory flag's value.
func experimentCmd(name, args, short string, fs *flag.FlagSet, dataDir *string,
	run func(ctx context.Context, s Streams, dataDir string, id int64) error) *Command {
	return &Command{
		Name: name, Args: args, Short: short, Flags: fs, MinArgs: 1, MaxArgs: 1,
		Exec: func(ctx context.Context, s Streams, pos []string) error {
			id, err := parseID(pos[0], "experiment")
			if err != nil {
				return err
			}
			return run(ctx, s, *dataDir, id)
		},
	}
}

func expShowCmd() *Command {
	var dataDir string
	var asJSON bool
	fs := newFlagSet("exp show", &dataDir)
	fs.BoolVar(&asJSON, "json", false, "print JSON (experiment, runs, cells) instead of tables")
	return experimentCmd("show", "ID [flags]", "an experiment's runs and its comparison table", fs, &dataDir,
		func(ctx context.Context, s Streams, dataDir string, id int64) error {
			st, _, err := openStore(ctx, dataDir)
			if err != nil {
				return err
			}
			defer st.Close()
			e, err := st.Experiment(ctx, id)
			if err != nil {
				return err
			}
			runs, err := st.Runs(ctx, store.RunFilter{ExperimentID: id})
			if err != nil {
				return err
			}
			cells, err := st.Compare(ctx, id)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(s.Out, map[string]any{"experiment": e, "runs": runs, "cells": cells})
			}
			out := s.Out
			c := e.Counts
			fmt.Fprintf(out, "experiment %d %s\ndataset %s, created %s, %s: %d runs (%d queued, %d running, %d done, %d oom, %d failed, %d cancelled, %d interrupted)\ngrid %s\n\n",
				e.ID, orDash(termSafe(e.Name, 0)), termSafe(e.Dataset, 0), e.CreatedAt.Format(time.RFC3339), c.State(), c.Total, c.Queued, c.Running, c.Done, c.OOM,
				c.Failed, c.Cancelled, c.Interrupted, e.Grid)
			tw := tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tSEQ\tATT\tSYSTEM\tDATASET\tMODEL\tBATCH\tFANOUT\tLIMIT\tENFORCED\tCGROUP_LIMIT\tREP\tSTATUS\tEPOCHS\tMEAN_EPOCH_S\tBEST_VAL\tTEST\tPEAK_CGROUP\tERROR")
			for _, r := range runs {
				status := r.State() // "stalled": running, its child silent (the error column says why)
				if r.Superseded {
					status += " (retried)"
				}
				fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%v\t%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Seq, r.Attempt, r.System,
					r.Dataset, r.Model, r.BatchSize, r.Fanout, units.Limit(r.MemLimitBytes), r.LimitEnforced, cgroupLimitCell(r), r.Repeat, status, r.EpochsDone,
					fmtPtr(r.MeanEpochS, "%.3f"), fmtPtr(r.BestValAcc, "%.4f"), fmtPtr(r.TestAcc, "%.4f"), bytesPtr(r.PeakCgroupBytes),
					oneLine(cmp.Or(r.Error, r.Stall), 60))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(out)
			tw = tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "SYSTEM\tLIMIT\tDIM\tBATCH\tMODEL\tFANOUT\tDATASET\tCELL\tRUNS\tDONE\tOOM\tFAILED\tEPOCH_S_MEAN\tEPOCH_S_STD\tEPOCH_S_MIN\tEPOCH_S_MAX\tBEST_VAL\tTEST")
			for _, cl := range cells {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", cl.System, units.Limit(cl.MemLimitBytes),
					cl.FeatureDim, cl.BatchSize, cl.Model, cl.Fanout, termSafe(cl.Dataset, 0), orDash(termSafe(grid.CellWords(cl.Cell), 0)), cl.Runs, cl.Done, cl.OOM, cl.Failed,
					fmtPtr(cl.MeanEpochS, "%.3f"), fmtPtr(cl.StdEpochS, "%.3f"), fmtPtr(cl.MinEpochS, "%.3f"), fmtPtr(cl.MaxEpochS, "%.3f"),
					fmtPtr(cl.MeanBestValAcc, "%.4f"), fmtPtr(cl.MeanTestAcc, "%.4f"))
			}
			return tw.Flush()
		})
}

// figureList is the help's list of chart names with their titles.
func figureList() string {
	var b strings.Builder
	b.WriteString("figures of an experiment (ID):\n")
	for _, id := range report.ChartIDs {
		e, _ := report.ChartByID(id)
		fmt.Fprintf(&b, "  %-17s %s\n", id, e.Title)
	}
	b.WriteString("figures of one run (--run RUN):\n")
	for _, id := range report.RunChartIDs {
		e, _ := report.ChartByID(id)
		fmt.Fprintf(&b, "  %-17s %s\n", id, e.Title)
	}
	return b.String()
}

func expExportCmd() *Command {
	var (
		dataDir, what, out, figure, format, baseline, size, bundle string
		csv                                                        bool
		run                                                        int64
	)
	fs := newFlagSet("exp export", &dataDir)
	fs.BoolVar(&csv, "csv", false, "write the tidy CSV table chosen by --what")
	fs.StringVar(&what, "what", store.ExportRuns, "with --csv: rows of "+strings.Join(store.ExportKinds, ", ")+
		", or "+exportStudy+" (an experiment made for a reproduction study: the paper's points and ratios beside ours)")
	fs.StringVar(&figure, "figure", "", "write this figure (names below)")
	fs.StringVar(&format, "format", report.FigureSVG, "with --figure: "+strings.Join(report.ExportFormats, ", ")+" (csv: the figure's data)")
	fs.StringVar(&baseline, "baseline", "", "with --figure normalised: the variant the runtime is divided by (default: the first)")
	fs.Int64Var(&run, "run", 0, "with --figure: a figure of this run instead of an experiment")
	fs.StringVar(&size, "size", report.SizeWide, "with --figure: the figure's size, "+strings.Join(report.FigureSizes, " (two-column paper width) or ")+" (one column)")
	fs.StringVar(&out, "out", "", "write to FILE (- = stdout); default: stdout for --csv, for a figure the dashboard's file name (experiment-ID-NAME.FORMAT) in the current directory")
	fs.StringVar(&out, "o", "", "short for --out")
	fs.StringVar(&bundle, "bundle", "", "write the paper bundle (a zip: tidy CSVs, every figure as SVG and PDF, the grid, host facts, the version, a re-plot script) to FILE (- = stdout); --size sizes its figures")
	return &Command{
		Name: "export",
		Args: "ID --csv [--what runs|epochs|samples|study] [--out FILE]\n" +
			"       outcore exp export ID --bundle FILE.zip [--size wide|column]\n" +
			"       outcore exp export ID --figure NAME [--format svg|pdf|csv] [--baseline V] [--out FILE]\n" +
			"       outcore exp export --run RUN --figure NAME [--format svg|pdf|csv] [--out FILE]",
		Short: "tidy CSV tables (one row per observation) and the dashboard's figures (SVG, PDF)",
		Long: `Writes an experiment's tidy CSV tables (--csv: runs, epochs or samples, one row
per observation, with run_id), or one of the figures the dashboard shows and
exports (--figure), drawn the same way: SVG or PDF, or the figure's data as CSV.

` + figureList(),
		Flags: fs, MinArgs: 0, MaxArgs: 1,
		Exec: func(ctx context.Context, s Streams, pos []string) error {
			var id int64
			switch {
			case run > 0 && len(pos) == 0 && figure != "":
			case run > 0:
				return usagef("--run takes --figure and no experiment ID")
			case len(pos) == 0:
				return usagef("give an experiment ID (or --run RUN --figure NAME)")
			default:
				var err error
				if id, err = parseID(pos[0], "experiment"); err != nil {
					return err
				}
			}
			if bundle != "" {
				if csv || figure != "" || run > 0 {
					return usagef("--bundle excludes --csv, --figure and --run (the bundle holds them all)")
				}
				if err := report.CheckSize(size); err != nil {
					return usagef("--size: %v", err)
				}
				return exportBundle(ctx, s, dataDir, id, size, bundle)
			}
			if figure == "" {
				if !csv {
					return usagef("export needs --csv or --figure NAME (or --bundle FILE.zip)")
				}
				if what == exportStudy {
					return exportStudyCSV(ctx, s, dataDir, id, out)
				}
				if !slices.Contains(store.ExportKinds, what) {
					return usagef("--what %q, want one of %s or %s", what, strings.Join(store.ExportKinds, ", "), exportStudy)
				}
				return exportTable(ctx, s, dataDir, id, what, out)
			}
			if csv {
				return usagef("--csv and --figure exclude each other (--figure NAME --format csv writes a figure's data)")
			}
			known := report.ChartIDs
			if run > 0 {
				known = report.RunChartIDs
			}
			if err := report.CheckChart(figure, known); err != nil {
				return usagef("--figure: %v", err)
			}
			if err := report.CheckFormat(format); err != nil {
				return usagef("--format: %v", err)
			}
			if err := report.CheckSize(size); err != nil {
				return usagef("--size: %v", err)
			}
			return exportFigure(ctx, s, dataDir, id, run, figure, format, baseline, size, out)
		},
	}
}

// exportStudy is `exp export --csv --what study`: the study table
// (report.WriteStudyCSV, the dashboard's /experiments/ID/study.csv).
const exportStudy = "study"

// exportTable streams a tidy CSV table of the store.
func exportTable(ctx context.Context, s Streams, dataDir string, id int64, what, out string) error {
	st, _, err := openStore(ctx, dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Experiment(ctx, id); err != nil {
		return err
	}
	w := s.Out
	var f *os.File
	if out != "" && out != "-" {
		if f, err = os.Create(out); err != nil {
			return err
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	err = st.ExportCSV(ctx, bw, id, what)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// exportBundle writes experiment id's paper bundle (report.WriteBundle) to
// file ("-" = stdout), through a temporary file so a failed export leaves
// no half zip behind.
func exportBundle(ctx context.Context, s Streams, dataDir string, id int64, size, file string) error {
	st, dir, err := openStore(ctx, dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	opts := report.BundleOptions{Version: experiments.Version(), DataDir: dir, Size: size}
	if file == "-" {
		return report.WriteBundle(ctx, s.Out, st, id, opts)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".bundle-*.zip")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := report.WriteBundle(ctx, tmp, st, id, opts); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return err
	}
	if st, err := os.Stat(file); err == nil {
		fmt.Fprintf(s.Err, "wrote %s (%d bytes)\n", file, st.Size())
	}
	return nil
}

// exportFigure writes one of the dashboard's charts (of experiment id, or
// of run when run > 0) as a figure or its data.
func exportFigure(ctx context.Context, s Streams, dataDir string, id, run int64, name, format, baseline, size, out string) error {
	st, _, err := openStore(ctx, dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	var ch report.Chart
	var meta report.FigureMeta
	file := report.FileName("experiment", id, name, format)
	if run > 0 {
		charts, err := report.LoadRunCharts(ctx, st, run)
		if err != nil {
			return err
		}
		r, err := st.Run(ctx, run)
		if err != nil {
			return err
		}
		meta = report.MetaOf(r.ExperimentID, []store.Run{r})
		meta.Run = run
		for _, c := range charts {
			if c.ID == name {
				ch = c
			}
		}
		file = report.FileName("run", run, name, format)
	} else {
		cmp, err := report.LoadComparison(ctx, st, nil, id)
		if err != nil {
			return err
		}
		if baseline != "" && !slices.Contains(cmp.Variants(), baseline) {
			return usagef("--baseline %q is not a variant of experiment %d (have %s)", baseline, id, strings.Join(cmp.Variants(), ", "))
		}
		ch, _ = cmp.Chart(name, baseline)
		meta = cmp.Meta()
	}
	return writeChart(s, ch, format, size, meta, out, file)
}

// writeChart draws ch as format (or writes its data as CSV) to out ("-":
// stdout; "": file, in the current directory) and says what it wrote.
func writeChart(s Streams, ch report.Chart, format, size string, meta report.FigureMeta, out, file string) error {
	var buf bytes.Buffer
	if err := report.WriteChartWith(&buf, ch, format, report.FigureOptions{Size: size, Meta: meta}); err != nil {
		return err
	}
	if out == "-" {
		_, err := s.Out.Write(buf.Bytes())
		return err
	}
	if out == "" {
		out = file
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "wrote %s (%s, %d bytes)\n", out, ch.Title, buf.Len())
	return nil
}

// runOrExperimentCmd is cancel or retry: `ID` acts on an experiment,
// `--run RUN` on one run; act gets the manager.
func runOrExperimentCmd(name, short string, act func(ctx context.Context, s Streams, m *experiments.Manager, id int64, isRun bool) error) *Command {
	var dataDir string
	var run int64
	fs := newFlagSet("exp "+name, &dataDir)
	fs.Int64Var(&run, "run", 0, "act on this one run instead of an experiment")
	return &Command{
		Name: name, Args: "ID | --run RUN [flags]", Short: short, Flags: fs, MinArgs: 0, MaxArgs: 1,
		Exec: func(ctx context.Context, s Streams, pos []string) error {
			var id int64
			switch {
			case run > 0 && len(pos) == 0:
				id = run
			case run == 0 && len(pos) == 1:
				var err error
				if id, err = parseID(pos[0], "experiment"); err != nil {
					return err
				}
			default:
				return usagef("give an experiment ID or --run RUN")
			}
			return withManager(ctx, dataDir, func(m *experiments.Manager) error { return act(ctx, s, m, id, run > 0) })
		},
	}
}

// withManager runs fn with an experiment manager of the data directory
// (its queue not running).
func withManager(ctx context.Context, dataDir string, fn func(*experiments.Manager) error) error {
	st, dir, err := openStore(ctx, dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := experiments.New(experiments.Options{DataDir: dir, Store: st})
	if err != nil {
		return err
	}
	defer m.Close()
	return fn(m)
}

func expCancelCmd() *Command {
	return runOrExperimentCmd("cancel", "cancel an experiment's queued and running runs, or one run",
		func(ctx context.Context, s Streams, m *experiments.Manager, id int64, isRun bool) error {
			if isRun {
				if err := m.CancelRun(ctx, id); err != nil {
					return err
				}
				fmt.Fprintf(s.Out, "run %d cancelled\n", id)
				return nil
			}
			n, err := m.CancelExperiment(ctx, id)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "experiment %d: %d runs cancelled (running ones stop within seconds)\n", id, n)
			return nil
		})
}

func expRetryCmd() *Command {
	var dataDir string
	var run int64
	var wait bool
	var conc int
	fs := newFlagSet("exp retry", &dataDir)
	fs.Int64Var(&run, "run", 0, "act on this one run instead of an experiment")
	fs.BoolVar(&wait, "wait", false, "with an experiment ID: run the queue here until the experiment has finished, as exp create --wait (a campaign script resumes a study killed mid-way so: its done runs kept)")
	fs.IntVar(&conc, "concurrency", 1, "with --wait: local runs at a time")
	return &Command{
		Name: "retry", Args: "ID [--wait] | --run RUN [flags]", Short: "requeue an experiment's failed, cancelled and interrupted runs, or one finished run (any outcome)", Flags: fs, MinArgs: 0, MaxArgs: 1,
		Exec: func(ctx context.Context, s Streams, pos []string) error {
			switch {
			case run > 0 && len(pos) == 0:
				if wait {
					return usagef("--wait takes an experiment ID, not --run")
				}
				return withManager(ctx, dataDir, func(m *experiments.Manager) error {
					nr, err := m.RetryRun(ctx, run)
					if err != nil {
						return err
					}
					fmt.Fprintf(s.Out, "run %d queued as run %d (attempt %d)\n", run, nr.ID, nr.Attempt)
					return nil
				})
			case run == 0 && len(pos) == 1:
			default:
				return usagef("give an experiment ID or --run RUN")
			}
			id, err := parseID(pos[0], "experiment")
			if err != nil {
				return err
			}
			if !wait {
				return withManager(ctx, dataDir, func(m *experiments.Manager) error {
					runs, err := m.RetryExperiment(ctx, id)
					if err != nil {
						return err
					}
					fmt.Fprintf(s.Out, "experiment %d: %d runs queued again\n", id, len(runs))
					return nil
				})
			}
			return retryWait(ctx, s, dataDir, id, conc)
		},
	}
}

// retryWait requeues experiment id's failed, cancelled and interrupted
// runs and runs the queue here until it has finished; a run a killed
// queue process left running ends interrupted when this one starts, and
// is retried in a second pass.
func retryWait(ctx context.Context, s Streams, dataDir string, id int64, conc int) error {
	st, dir, err := openStore(ctx, dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := experiments.New(experiments.Options{DataDir: dir, Store: st, Concurrency: conc,
		Finished: func(ctx context.Context, id int64) error { return report.StoreRunDigest(ctx, st, id) },
		Logf:     func(f string, a ...any) { fmt.Fprintf(s.Err, "outcore exp: "+f+"\n", a...) }})
	if err != nil {
		return err
	}
	defer m.Close()
	for pass := 0; pass < 2; pass++ {
		lastID, err := st.LastEventID(ctx)
		if err != nil {
			return err
		}
		runs, err := m.RetryExperiment(ctx, id)
		if err != nil {
			return err
		}
		e, err := st.Experiment(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.Out, "experiment %d: %d runs queued again, %d of %d done\n", id, len(runs), e.Counts.Done, e.Counts.Total)
		if pass > 0 && len(runs) == 0 {
			return nil
		}
		if err := waitExperiment(ctx, m, e, lastID, s); err != nil {
			return err
		}
	}
	return nil
}

func expDeleteCmd() *Command {
	var dataDir string
	c := experimentCmd("delete", "ID [flags]", "delete an experiment with its runs and data", newFlagSet("exp delete", &dataDir), &dataDir,
		func(ctx context.Context, s Streams, dataDir string, id int64) error {
			return withManager(ctx, dataDir, func(m *experiments.Manager) error {
				if err := m.DeleteExperiment(ctx, id); err != nil {
					return err
				}
				fmt.Fprintf(s.Out, "experiment %d deleted\n", id)
				return nil
			})
		})
	c.Aliases = []string{"rm"}
	return c
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtPtr(v *float64, f string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(f, *v)
}

// cgroupLimitCell is exp show's CGROUP_LIMIT, the limit the run's cgroup
// had in force (store.Run.EnforcedLimit), so that a PEAK_CGROUP above
// LIMIT reads against the limit that bound it; "-" where none was.
func cgroupLimitCell(r store.Run) string {
	if lim := r.EnforcedLimit(); lim > 0 {
		return units.Bytes(lim)
	}
	return "-"
}

func bytesPtr(v *int64) string {
	if v == nil {
		return "-"
	}
	return units.Bytes(*v)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	if s == "" {
		return "-"
	}
	return s
}
