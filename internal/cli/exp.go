package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/experiments"
	"outcore/store"
)

const expUsage = `usage: outcore exp <subcommand> [flags]

subcommands:
  create  --file GRID.json [--wait]        create an experiment and queue its runs
  list                                     list experiments: a header, then one per line, id first
  show    ID                               an experiment's runs and its comparison table
  export  ID --csv [--what runs|epochs|samples] [-o FILE]
                                           tidy CSV (one row per observation, with run_id)
  cancel  ID | --run RUN                   cancel an experiment's queued and running runs, or one run
  retry   ID | --run RUN                   requeue an experiment's failed, cancelled and interrupted
                                           runs, or one finished run (any outcome)
  delete  ID                               delete an experiment with its runs and data

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
top-level keys are fields of the run configuration (see 'outcore train -h').

Every subcommand takes --data-dir (default: $OUTCORE_DATA, else
$XDG_DATA_HOME/outcore, else ~/.local/share/outcore).`

// Exp runs `outcore exp`.
func Exp(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, withSystems(expUsage))
		return fmt.Errorf("%w: exp needs a subcommand", ErrUsage)
	}
	var err error
	switch args[0] {
	case "create":
		err = expCreate(ctx, args[1:], os.Stdout)
	case "list", "ls":
		err = expList(ctx, args[1:], os.Stdout)
	case "show":
		err = expShow(ctx, args[1:], os.Stdout)
	case "export":
		err = expExport(ctx, args[1:], os.Stdout)
	case "cancel":
		err = expCancel(ctx, args[1:], os.Stdout)
	case "retry":
		err = expRetry(ctx, args[1:], os.Stdout)
	case "delete", "rm":
		err = expDelete(ctx, args[1:], os.Stdout)
	case "-h", "--help", "help":
		fmt.Fprintln(os.Stdout, withSystems(expUsage))
		return nil
	default:
		fmt.Fprintln(os.Stderr, withSystems(expUsage))
		return fmt.Errorf("%w: unknown exp subcommand %q", ErrUsage, args[0])
	}
	return helpOK(err)
}

// expFlags is a flag set with --data-dir.
func expFlags(name, usage string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("exp "+name, flag.ContinueOnError)
	dir := fs.String("data-dir", "", "data directory (default $OUTCORE_DATA, else $XDG_DATA_HOME/outcore, else ~/.local/share/outcore)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: outcore exp %s\n\nflags:\n", usage)
		fs.PrintDefaults()
	}
	return fs, dir
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
		return 0, fmt.Errorf("%w: %s id %q is not a positive integer", ErrUsage, what, s)
	}
	return id, nil
}

func expCreate(ctx context.Context, args []string, out io.Writer) error {
	fs, dirFlag := expFlags("create", "create --file GRID.json [--wait] [flags]")
	file := fs.String("file", "", "grid file (- for stdin)")
	wait := fs.Bool("wait", false, "run the queue here until this experiment has finished, showing progress")
	conc := fs.Int("concurrency", 1, "with --wait: runs at a time")
	drop := fs.Bool("drop-caches", false, "with --wait: drop the page cache before each run (root only; recorded per run)")
	if _, err := parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	if *file == "" {
		fs.Usage()
		return fmt.Errorf("%w: --file is required", ErrUsage)
	}
	var grid []byte
	var err error
	if *file == "-" {
		grid, err = io.ReadAll(os.Stdin)
	} else {
		grid, err = os.ReadFile(*file)
	}
	if err != nil {
		return fmt.Errorf("read grid: %w", err)
	}
	st, dir, err := openStore(ctx, *dirFlag)
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := experiments.New(experiments.Options{DataDir: dir, Store: st, Concurrency: *conc, DropCaches: *drop,
		Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, "outcore exp: "+f+"\n", a...) }})
	if err != nil {
		return err
	}
	defer m.Close()
	lastID, err := st.LastEventID(ctx)
	if err != nil {
		return err
	}
	e, err := m.Create(ctx, grid)
	if err != nil {
		if errors.Is(err, experiments.ErrInvalid) {
			return fmt.Errorf("%w: %s: %v", ErrUsage, *file, err)
		}
		return err
	}
	fmt.Fprintf(out, "experiment %d created: %d runs queued\n", e.ID, e.Counts.Total)
	if !*wait {
		fmt.Fprintln(out, "runs start when a queue runs: `outcore serve`, or `outcore exp create --wait`")
		return nil
	}
	return waitExperiment(ctx, m, e, lastID, out)
}

// waitExperiment runs the queue (or watches the process that runs it)
// until experiment e has finished, printing progress.
func waitExperiment(ctx context.Context, m *experiments.Manager, e store.Experiment, lastID int64, out io.Writer) error {
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
	p := &progressPrinter{out: out, st: st, total: e.Counts.Total, tty: term.IsTerminal(int(os.Stderr.Fd()))}
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
	st       *store.Store
	total    int
	tty      bool
	finished int
	line     bool
}

func (p *progressPrinter) clear() {
	if p.line {
		fmt.Fprint(os.Stderr, "\r\033[K")
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
		limit := "none"
		if d.Limit > 0 {
			limit = experiments.FormatBytes(d.Limit)
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
		fmt.Fprintf(p.out, "        run %d epoch %d: %.3f s%s, loss %.4f, val_acc %.4f\n", ev.RunID, rec.Epoch, rec.EpochS, warm, rec.TrainLoss, rec.ValAcc)
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
		fmt.Fprintf(os.Stderr, "\r\033[K  run %d epoch %d batch %d/%d %s", ev.RunID, rec.Epoch, rec.Batch, rec.Batches, rec.Phase)
		p.line = true
	}
}

func expList(ctx context.Context, args []string, out io.Writer) error {
	fs, dirFlag := expFlags("list", "list [flags]")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if _, err := parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	st, _, err := openStore(ctx, *dirFlag)
	if err != nil {
		return err
	}
	defer st.Close()
	list, err := st.ListExperiments(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(out, list)
	}
	tw := tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tDATASET\tSTATE\tRUNS\tQUEUED\tRUNNING\tDONE\tOOM\tFAILED\tCANCELLED\tINTERRUPTED\tCREATED")
	for _, e := range list {
		c := e.Counts
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", e.ID, orDash(e.Name), e.Dataset, c.State(),
			c.Total, c.Queued, c.Running, c.Done, c.OOM, c.Failed, c.Cancelled, c.Interrupted, e.CreatedAt.Format("2006-01-02 15:04:05"))
	}
	return tw.Flush()
}

func expShow(ctx context.Context, args []string, out io.Writer) error {
	fs, dirFlag := expFlags("show", "show ID [flags]")
	asJSON := fs.Bool("json", false, "print JSON (experiment, runs, cells) instead of tables")
	pos, err := parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	id, err := parseID(pos[0], "experiment")
	if err != nil {
		return err
	}
	st, _, err := openStore(ctx, *dirFlag)
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
	if *asJSON {
		return writeJSON(out, map[string]any{"experiment": e, "runs": runs, "cells": cells})
	}
	c := e.Counts
	fmt.Fprintf(out, "experiment %d %s\ndataset %s, created %s, %s: %d runs (%d queued, %d running, %d done, %d oom, %d failed, %d cancelled, %d interrupted)\ngrid %s\n\n",
		e.ID, orDash(e.Name), e.Dataset, e.CreatedAt.Format(time.RFC3339), c.State(), c.Total, c.Queued, c.Running, c.Done, c.OOM,
		c.Failed, c.Cancelled, c.Interrupted, e.Grid)
	tw := tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSEQ\tATT\tSYSTEM\tDATASET\tMODEL\tBATCH\tFANOUT\tLIMIT\tENFORCED\tREP\tSTATUS\tEPOCHS\tMEAN_EPOCH_S\tBEST_VAL\tTEST\tPEAK_CGROUP\tERROR")
	for _, r := range runs {
		status := r.Status
		if r.Superseded {
			status += " (retried)"
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%v\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Seq, r.Attempt, r.System,
			r.Dataset, r.Model, r.BatchSize, r.Fanout, limitText(r.MemLimitBytes), r.LimitEnforced, r.Repeat, status, r.EpochsDone,
			fmtPtr(r.MeanEpochS, "%.3f"), fmtPtr(r.BestValAcc, "%.4f"), fmtPtr(r.TestAcc, "%.4f"), bytesPtr(r.PeakCgroupBytes),
			oneLine(r.Error, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "SYSTEM\tLIMIT\tDIM\tBATCH\tMODEL\tFANOUT\tRUNS\tDONE\tOOM\tFAILED\tEPOCH_S_MEAN\tEPOCH_S_STD\tEPOCH_S_MIN\tEPOCH_S_MAX\tBEST_VAL\tTEST")
	for _, cl := range cells {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", cl.System, limitText(cl.MemLimitBytes),
			cl.FeatureDim, cl.BatchSize, cl.Model, cl.Fanout, cl.Runs, cl.Done, cl.OOM, cl.Failed,
			fmtPtr(cl.MeanEpochS, "%.3f"), fmtPtr(cl.StdEpochS, "%.3f"), fmtPtr(cl.MinEpochS, "%.3f"), fmtPtr(cl.MaxEpochS, "%.3f"),
			fmtPtr(cl.MeanBestValAcc, "%.4f"), fmtPtr(cl.MeanTestAcc, "%.4f"))
	}
	return tw.Flush()
}

func expExport(ctx context.Context, args []string, out io.Writer) error {
	fs, dirFlag := expFlags("export", "export ID --csv [--what runs|epochs|samples] [-o FILE]")
	csv := fs.Bool("csv", false, "write CSV (the only format)")
	what := fs.String("what", store.ExportRuns, "rows: runs, epochs or samples")
	outFile := fs.String("o", "", "write to FILE instead of stdout")
	pos, err := parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if !*csv {
		return fmt.Errorf("%w: export needs --csv (the only format)", ErrUsage)
	}
	id, err := parseID(pos[0], "experiment")
	if err != nil {
		return err
	}
	okWhat := false
	for _, k := range store.ExportKinds {
		okWhat = okWhat || k == *what
	}
	if !okWhat {
		return fmt.Errorf("%w: --what %q, want one of %s", ErrUsage, *what, strings.Join(store.ExportKinds, ", "))
	}
	st, _, err := openStore(ctx, *dirFlag)
	if err != nil {
		return err
	}
	defer st.Close()
	w := out
	var f *os.File
	if *outFile != "" {
		if f, err = os.Create(*outFile); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	err = st.ExportCSV(ctx, bw, id, *what)
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

// idOrRun parses `ID` or `--run RUN` of cancel and retry.
func idOrRun(sub string, args []string) (dirFlag string, id int64, isRun bool, err error) {
	fs, dir := expFlags(sub, sub+" ID | --run RUN [flags]")
	run := fs.Int64("run", 0, "act on this one run instead of an experiment")
	pos, err := parseArgs(fs, args, 0, 1)
	if err != nil {
		return "", 0, false, err
	}
	switch {
	case *run > 0 && len(pos) == 0:
		return *dir, *run, true, nil
	case *run == 0 && len(pos) == 1:
		id, err := parseID(pos[0], "experiment")
		return *dir, id, false, err
	}
	fs.Usage()
	return "", 0, false, fmt.Errorf("%w: give an experiment ID or --run RUN", ErrUsage)
}

func newManager(ctx context.Context, dirFlag string) (*experiments.Manager, *store.Store, error) {
	st, dir, err := openStore(ctx, dirFlag)
	if err != nil {
		return nil, nil, err
	}
	m, err := experiments.New(experiments.Options{DataDir: dir, Store: st})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return m, st, nil
}

func expCancel(ctx context.Context, args []string, out io.Writer) error {
	dir, id, isRun, err := idOrRun("cancel", args)
	if err != nil {
		return err
	}
	m, st, err := newManager(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	defer m.Close()
	if isRun {
		if err := m.CancelRun(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(out, "run %d cancelled\n", id)
		return nil
	}
	n, err := m.CancelExperiment(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "experiment %d: %d runs cancelled (running ones stop within seconds)\n", id, n)
	return nil
}

func expRetry(ctx context.Context, args []string, out io.Writer) error {
	dir, id, isRun, err := idOrRun("retry", args)
	if err != nil {
		return err
	}
	m, st, err := newManager(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	defer m.Close()
	if isRun {
		nr, err := m.RetryRun(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "run %d queued as run %d (attempt %d)\n", id, nr.ID, nr.Attempt)
		return nil
	}
	runs, err := m.RetryExperiment(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "experiment %d: %d runs queued again\n", id, len(runs))
	return nil
}

func expDelete(ctx context.Context, args []string, out io.Writer) error {
	fs, dirFlag := expFlags("delete", "delete ID [flags]")
	pos, err := parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	id, err := parseID(pos[0], "experiment")
	if err != nil {
		return err
	}
	m, st, err := newManager(ctx, *dirFlag)
	if err != nil {
		return err
	}
	defer st.Close()
	defer m.Close()
	if err := m.DeleteExperiment(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(out, "experiment %d deleted\n", id)
	return nil
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

func limitText(b int64) string {
	if b <= 0 {
		return "none"
	}
	return experiments.FormatBytes(b)
}

func fmtPtr(v *float64, f string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(f, *v)
}

func bytesPtr(v *int64) string {
	if v == nil {
		return "-"
	}
	return experiments.FormatBytes(*v)
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
