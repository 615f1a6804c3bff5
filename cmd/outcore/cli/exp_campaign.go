package cli

// The measurement campaign's commands (scripts/reproduce-testbed.sh):
// `exp estimate` plans studies and says how long they would take from the
// store's past runs; `exp claims` writes the claims table of
// docs/REPRODUCTION.md from study experiments' tables.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"outcore/experiments/grid"
	"outcore/experiments/studies"
	"outcore/report"
	"outcore/store"
)

// maxCampaignArgs bounds the ids `exp estimate` and `exp claims` take.
const maxCampaignArgs = 1000

func expEstimateCmd() *Command {
	var dataDir, file, studyDataset, studyCompute string
	var repeats int
	var budget time.Duration
	var fitting bool
	fs := newFlagSet("exp estimate", &dataDir)
	fs.StringVar(&file, "file", "", "instead of study ids: estimate this grid file (as exp create --file would queue it)")
	fs.StringVar(&studyDataset, "study-dataset", "", "plan each study on this dataset instead of its own")
	fs.StringVar(&studyCompute, "study-compute", "", "plan every run in this compute mode (default: the study's testbed's)")
	fs.IntVar(&repeats, "study-repeats", 3, "runs per cell")
	fs.DurationVar(&budget, "budget", 0, "pick, in the order given, the studies whose estimates fit one after another in this time (e.g. 90m; 0 = no budget)")
	fs.BoolVar(&fitting, "fitting", false, "print only the ids of the studies that fit --budget, one a line (for scripts)")
	return &Command{
		Name: "estimate", Args: "[STUDY_ID...] | --file GRID.json [flags]", Short: "how long studies would take: runs planned × past runs' median epoch time",
		Long: `Plans each study as 'exp create --study ID --study-repeats N' would (cells
below their variant's floor are refused and not counted) and estimates
each run from the data directory's done runs: the median mean epoch time
of the runs of the same cell (variant, dataset, compute mode, testbed,
memory limit), else of the same variant and dataset, times the run's
epochs (under a testbed that decides them, the median epochs those runs
did): a lower bound, start-up, preparation and evaluation not counted.
A run like none is unknown, and so is its study's total. Without
ids: every reproduction study (those with a paper block).`,
		Flags: fs, MaxArgs: maxCampaignArgs,
		Exec: func(ctx context.Context, s Streams, ids []string) error {
			if repeats < 1 {
				return usagef("--study-repeats %d, want at least 1", repeats)
			}
			if fitting && budget <= 0 {
				return usagef("--fitting needs --budget")
			}
			if file != "" && len(ids) > 0 {
				return usagef("give study ids or --file, not both")
			}
			if len(ids) == 0 && file == "" {
				for _, st := range studies.Papers() {
					ids = append(ids, st.ID)
				}
			}
			var list []studies.Study
			for _, id := range ids {
				st, ok := studies.Lookup(id)
				if !ok {
					return usagef("study %q: no such study (have %s)", id, studies.IDs())
				}
				list = append(list, st)
			}
			st, dir, err := openStore(ctx, dataDir)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.Runs(ctx, store.RunFilter{Statuses: []string{store.StatusDone}})
			if err != nil {
				return err
			}
			past := report.PastRunsOf(runs, func(r store.Run) string { return configTestbed(r.Config) })
			var es []report.StudyEstimate
			for _, sd := range list {
				b, err := sd.GridIn(studyDataset, studyCompute, repeats)
				es = append(es, estimateGrid(sd.ID, b, err, dir, past))
			}
			if file != "" {
				b, err := os.ReadFile(file)
				if err != nil {
					return fmt.Errorf("read grid: %w", err)
				}
				es = append(es, estimateGrid(file, b, nil, dir, past))
			}
			fit := report.FitBudget(es, budget)
			if fitting {
				for _, id := range fit {
					fmt.Fprintln(s.Out, id)
				}
				return nil
			}
			return writeEstimates(s, es, fit, budget)
		},
	}
}

// estimateGrid plans grid b (named name; err: why it could not be made)
// in the data directory dir, as exp create would, and estimates its runs
// from past.
func estimateGrid(name string, b []byte, err error, dir string, past []report.PastRun) report.StudyEstimate {
	fail := func(err error) report.StudyEstimate {
		return report.StudyEstimate{Study: name, Err: oneLine(err.Error(), 120)}
	}
	if err != nil {
		return fail(err)
	}
	g, err := grid.ParseGrid(b)
	if g == nil {
		return fail(err)
	}
	ps := grid.ProblemList(grid.ProblemsOf(err))
	specs, _, more, refused := grid.Plan(g, grid.World{DataDir: dir, MinMem: grid.VariantMinMemory}, len(ps) == 0)
	if err := append(ps, more...).Err(); err != nil {
		return fail(err)
	}
	planned := make([]report.PlannedRun, len(specs))
	for i, sp := range specs {
		planned[i] = report.PlannedRun{System: sp.System, Dataset: sp.Dataset, Compute: sp.Compute, Testbed: sp.Config.Testbed,
			MemLimitBytes: sp.MemLimitBytes, Epochs: sp.Config.Epochs}
	}
	return report.EstimateStudy(name, planned, len(refused), past)
}

// configTestbed is the testbed a run's configuration names ("" when none).
func configTestbed(cfg []byte) string {
	var c struct {
		Testbed string `json:"testbed"`
	}
	_ = json.Unmarshal(cfg, &c)
	return c.Testbed
}

// writeEstimates prints the estimates as a table with their total (of
// the studies picked when a budget is given).
func writeEstimates(s Streams, es []report.StudyEstimate, fit []string, budget time.Duration) error {
	tw := tabwriter.NewWriter(s.Out, 0, 2, 2, ' ', 0)
	head := "STUDY\tRUNS\tREFUSED\tESTIMATE\tUNKNOWN RUNS"
	if budget > 0 {
		head += "\tFITS"
	}
	fmt.Fprintln(tw, head)
	var total float64
	var runs, unknown int
	picked := map[string]bool{}
	for _, id := range fit {
		picked[id] = true
	}
	for _, e := range es {
		est := report.Duration(e.Seconds)
		switch {
		case e.Err != "":
			est = "cannot plan: " + e.Err
		case !e.Known() && e.Seconds == 0:
			est = "unknown"
		case !e.Known():
			est = "≥ " + est + " (unknown)"
		}
		line := fmt.Sprintf("%s\t%d\t%d\t%s\t%d", e.Study, e.Runs, e.Refused, est, e.Unknown)
		if budget > 0 {
			line += "\t" + map[bool]string{true: "yes", false: "no"}[picked[e.Study]]
		}
		fmt.Fprintln(tw, line)
		if budget > 0 && !picked[e.Study] {
			continue
		}
		total += e.Seconds
		runs += e.Runs
		unknown += e.Unknown
		if e.Err != "" {
			unknown++
		}
	}
	word := "total"
	if budget > 0 {
		word = "total picked (budget " + budget.String() + ")"
	}
	tot := report.Duration(total)
	if unknown > 0 {
		tot = "≥ " + tot + fmt.Sprintf(" (%d runs or studies unknown)", unknown)
	}
	fmt.Fprintf(tw, "%s\t%d\t\t%s\t\n", word, runs, tot)
	return tw.Flush()
}

func expClaimsCmd() *Command {
	var dataDir, out, column string
	fs := newFlagSet("exp claims", &dataDir)
	fs.StringVar(&out, "out", "", "write the markdown to FILE (default: stdout)")
	fs.StringVar(&column, "column", "paper's testbed, emulated", "the name of the measured column")
	return &Command{
		Name: "claims", Args: "EXP_ID... [flags]", Short: "the claims table (paper | ours | within ±30 %) of study experiments, as markdown",
		Long: `Reads the study table of each experiment given (each made for a reproduction
study: exp create --study) and writes, per claim (each paper ratio of the
study), the paper's number beside ours — the ratio of the sides' medians,
over their quiet warm runs when each side has ` + fmt.Sprint(report.MinEvidence) + ` of them —, each side's
evidence (n, quiet warm, cold, busy) and whether it holds within ±30 % of
the paper's number (or between its range's ends); then the count of
claims that hold. Experiments on more than one dataset or testbed (a study
on medium and on papers-reach) add a table with a row per claim and a
column per dataset and testbed. Markdown for docs/REPRODUCTION.md.`,
		Flags: fs, MinArgs: 1, MaxArgs: maxCampaignArgs,
		Exec: func(ctx context.Context, s Streams, pos []string) error {
			var ids []int64
			for _, p := range pos {
				id, err := parseID(p, "experiment")
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			st, dir, err := openStore(ctx, dataDir)
			if err != nil {
				return err
			}
			defer st.Close()
			var tables []report.StudyTable
			var exps []store.Experiment
			for _, id := range ids {
				e, err := st.Experiment(ctx, id)
				if err != nil {
					return err
				}
				t, ok, err := report.LoadStudyTable(ctx, st, nil, dir, e)
				if err != nil {
					return fmt.Errorf("experiment %d: %w", id, err)
				}
				if !ok {
					return fmt.Errorf("experiment %d (%q) was not made for a reproduction study (exp create --study ID)", id, e.Name)
				}
				tables = append(tables, t)
				exps = append(exps, e)
			}
			var b strings.Builder
			cs := report.Claims(tables, exps)
			if err := report.WriteClaimsMarkdown(&b, column, cs); err != nil {
				return err
			}
			// Experiments on more than one dataset or testbed: each claim's
			// results side by side, a column per condition.
			if len(report.ClaimConditions(cs)) > 1 {
				b.WriteString("\nSide by side, a column per dataset and testbed:\n\n")
				if err := report.WriteClaimsSideBySide(&b, cs); err != nil {
					return err
				}
			}
			if out == "" || out == "-" {
				_, err := fmt.Fprint(s.Out, b.String())
				return err
			}
			return os.WriteFile(out, []byte(b.String()), 0o644)
		},
	}
}

// exportStudyCSV writes the study table of experiment id (report.
// WriteStudyCSV) to out ("" or "-" = stdout).
func exportStudyCSV(ctx context.Context, s Streams, dataDir string, id int64, out string) error {
	st, dir, err := openStore(ctx, dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	e, err := st.Experiment(ctx, id)
	if err != nil {
		return err
	}
	t, ok, err := report.LoadStudyTable(ctx, st, nil, dir, e)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("experiment %d (%q) was not made for a reproduction study: it has no study table", id, e.Name)
	}
	var b strings.Builder
	if err := report.WriteStudyCSV(&b, t); err != nil {
		return err
	}
	if out == "" || out == "-" {
		_, err := fmt.Fprint(s.Out, b.String())
		return err
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}
