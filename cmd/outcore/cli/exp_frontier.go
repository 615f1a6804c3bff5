package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"outcore/experiments/grid"
)

// expFrontierCmd is `outcore exp frontier`: a memory-frontier search
// (DESIGN §12) as an experiment: per variant, the least memory limit at
// which it finishes an epoch, by bisection between its floor and 100 %.
func expFrontierCmd() *Command {
	var dataDir, dataset, systems, file, compute, maxLimit string
	var tol, cellS float64
	var probes, epochs, conc, trainNodes int
	var wait, drop bool
	fs := newFlagSet("exp frontier", &dataDir)
	fs.StringVar(&dataset, "dataset", "", "dataset (required unless --file names one)")
	fs.StringVar(&systems, "system", "", "variants, comma-separated (required unless --file has them)")
	fs.StringVar(&file, "file", "", "a grid file to start from (its settings and axes; no mem_limit axis)")
	fs.StringVar(&compute, "compute", "", "compute mode of the runs: cpu, none or model:PROFILE (DESIGN §10)")
	fs.Float64Var(&tol, "tolerance", 0, "stop when the gap between the least limit that finished and the largest that did not is at most this share of it (default 0.05; never below 1 MiB)")
	fs.IntVar(&probes, "max-probes", 0, "most runs per variant (default 12)")
	fs.StringVar(&maxLimit, "max-limit", "", `top of the search, the first probe: a limit such as "100%" (the default) or "256MiB"; raised to a variant's floor`)
	fs.Float64Var(&cellS, "max-cell-seconds", 0, "wall-time budget of one variant's search: no probe starts after its probes took this long (0: none); the frontier so far is kept, marked as stopped by the budget")
	fs.IntVar(&trainNodes, "train-max-nodes", 0, "train each probe on at most this many training nodes, a fixed random subset (0 = all; bounded probes, recorded as a deviation)")
	fs.IntVar(&epochs, "epochs", 1, "epochs per probe (a probe succeeds when one finishes)")
	fs.BoolVar(&wait, "wait", false, "run the queue here until the search has finished, then print each variant's frontier")
	fs.IntVar(&conc, "concurrency", 1, "with --wait: local runs at a time")
	fs.BoolVar(&drop, "drop-caches", false, "with --wait: drop the page cache before each run (root only)")
	return &Command{
		Name: "frontier", Args: "--dataset D --system a,b [--tolerance 0.05] [--max-probes 12] [--max-cell-seconds S] [--wait]",
		Short: "find each variant's least memory limit that finishes an epoch (bisection, real runs under cgroups)",
		Long: "Creates an experiment whose runs are probes: one per variant at 100 % of the feature bytes, then at\n" +
			"the variant's computed floor, then bisecting between the largest limit that failed and the least\n" +
			"that finished an epoch (the top is doubled, at most 3 times, while nothing finishes). Its epoch-vs-mem\n" +
			"chart draws epoch time against limit down to the frontier:\n" +
			"  outcore exp export ID --figure epoch-vs-mem --format svg --out frontier.svg",
		Flags: fs,
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			g := map[string]any{}
			if file != "" {
				b, err := os.ReadFile(file)
				if err != nil {
					return fmt.Errorf("read grid: %w", err)
				}
				if err := json.Unmarshal(b, &g); err != nil {
					return usagef("%s: %v", file, err)
				}
			}
			if dataset != "" {
				g["dataset"] = dataset
			}
			if systems != "" {
				axes, _ := g["axes"].(map[string]any)
				if axes == nil {
					axes = map[string]any{}
				}
				var list []string
				for _, v := range strings.Split(systems, ",") {
					if v = strings.TrimSpace(v); v != "" {
						list = append(list, v)
					}
				}
				axes["system"] = list
				delete(g, "system")
				g["axes"] = axes
			}
			if g["dataset"] == nil {
				return usagef("--dataset is required")
			}
			if _, ok := g["epochs"]; !ok || file == "" {
				g["epochs"] = epochs
			}
			if compute != "" {
				g["compute"] = compute
			}
			if trainNodes != 0 {
				g["train_max_nodes"] = trainNodes
			}
			if _, ok := g["name"]; !ok {
				g["name"] = frontierName(axesSystems(g))
			}
			g["frontier"] = map[string]any{"tolerance": tol, "max_probes": probes, "max_limit": maxLimit, "max_cell_s": cellS}
			grid, err := json.Marshal(g)
			if err != nil {
				return err
			}
			return createExperiment(ctx, s, createArgs{dataDir: dataDir, label: "frontier", grid: grid, wait: wait, conc: conc, drop: drop})
		},
	}
}

// axesSystems is the grid's system axis as strings (nil when it has none).
func axesSystems(g map[string]any) []string {
	axes, _ := g["axes"].(map[string]any)
	var out []string
	switch l := axes["system"].(type) {
	case []string:
		out = l
	case []any:
		for _, v := range l {
			out = append(out, fmt.Sprint(v))
		}
	}
	return out
}

// frontierName names a search by its variants, as many as fit in a
// grid's name (grid.MaxNameLen); the rest are counted ("and 3 more").
func frontierName(systems []string) string {
	name := "memory frontier of " + strings.Join(systems, ", ")
	if utf8.RuneCountInString(name) <= grid.MaxNameLen {
		return name
	}
	for n := len(systems) - 1; n >= 0; n-- {
		name = fmt.Sprintf("memory frontier of %s and %d more", strings.Join(systems[:n], ", "), len(systems)-n)
		if n == 0 {
			name = fmt.Sprintf("memory frontier of %d variant%s", len(systems), map[bool]string{true: "s"}[len(systems) != 1])
		}
		if utf8.RuneCountInString(name) <= grid.MaxNameLen {
			return name
		}
	}
	return name
}
