package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"outcore/engine/dataset"
	"outcore/internal/units"
)

// dataCmd is `outcore data`.
func dataCmd() *Command {
	return &Command{
		Name:        "data",
		Args:        "<command> [flags]",
		Short:       "generate, import, inspect and verify datasets",
		Subcommands: []*Command{dataGenCmd(), dataImportCmd(), dataInfoCmd(), dataVerifyCmd(), dataStatsCmd(), dataDigestCmd(), dataListCmd()},
	}
}

// datasetErr marks the dataset package's errors about what was asked for
// (a bad name or configuration) as usage errors.
func datasetErr(err error) error {
	if errors.Is(err, dataset.ErrConfig) || errors.Is(err, dataset.ErrBadName) {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return err
}

func progressWriter() io.Writer {
	if term.IsTerminal(int(os.Stderr.Fd())) {
		return os.Stderr
	}
	return nil
}

func dataGenCmd() *Command {
	var dataDir, preset, name, like string
	var force, quiet bool
	flags := func(c *dataset.GenConfig) *flag.FlagSet {
		fs := newFlagSet("data gen", &dataDir)
		fs.StringVar(&preset, "preset", "tiny", "preset: "+strings.Join(dataset.PresetNames(), ", "))
		fs.StringVar(&like, "like", "", "regenerate the generated dataset this meta.json describes (its preset, generator config and name; flags still override)")
		fs.StringVar(&name, "name", "", "dataset name (default: the preset name)")
		fs.BoolVar(&force, "force", false, "replace an existing dataset of that name")
		fs.BoolVar(&quiet, "quiet", false, "no progress output")
		fs.Int64Var(&c.Nodes, "nodes", c.Nodes, "node count")
		fs.Float64Var(&c.AvgDegree, "avg-degree", c.AvgDegree, "mean in-degree")
		fs.IntVar(&c.FeatureDim, "dim", c.FeatureDim, "feature dimension")
		fs.IntVar(&c.Classes, "classes", c.Classes, "number of classes (planted communities)")
		fs.Float64Var(&c.Homophily, "homophily", c.Homophily, "share of in-neighbours from the node's own class")
		fs.Float64Var(&c.TrainFrac, "train", c.TrainFrac, "fraction of nodes in the train split")
		fs.Float64Var(&c.ValFrac, "val", c.ValFrac, "fraction of nodes in the validation split")
		fs.Float64Var(&c.TestFrac, "test", c.TestFrac, "fraction of nodes in the test split")
		fs.BoolVar(&c.LabelSplitOnly, "label-split-only", c.LabelSplitOnly, "label only nodes in a split (others -1)")
		fs.Uint64Var(&c.Seed, "seed", c.Seed, "random seed")
		fs.Float64Var(&c.DegreeExponent, "degree-exponent", c.DegreeExponent, "in-degree tail index a, P(deg>k)~k^-a (>1)")
		fs.Int64Var(&c.MinDegree, "min-degree", c.MinDegree, "minimum in-degree")
		fs.Int64Var(&c.MaxDegree, "max-degree", c.MaxDegree, "maximum in-degree (0 = auto)")
		fs.Float64Var(&c.Popularity, "popularity", c.Popularity, "Zipf exponent of neighbour popularity (out-degree skew; 0 = uniform)")
		fs.Float64Var(&c.Separation, "separation", c.Separation, "expected distance between class centroids")
		fs.Float64Var(&c.Noise, "noise", c.Noise, "feature noise standard deviation")
		fs.Float64Var(&c.CommunitySizeExponent, "community-exponent", c.CommunitySizeExponent, "structure: Zipf exponent of community (class) sizes (0 = equal sizes)")
		fs.BoolVar(&c.IDLocality, "id-locality", c.IDLocality, "structure: number nodes community by community, popular first (as crawl or time order)")
		fs.Float64Var(&c.LocalShare, "local-share", c.LocalShare, "structure: share of in-neighbours drawn near the node in its community (gives clustering; ≤ homophily)")
		fs.Int64Var(&c.LocalWindow, "local-window", c.LocalWindow, "structure: least half-width of that neighbourhood (0 = auto)")
		fs.Float64Var(&c.LocalDensity, "local-density", c.LocalDensity, "structure: share of the neighbourhood the local draws fill (0 = 0.5; denser = more clustering)")
		fs.BoolVar(&c.StructuredGenerator, "structured", c.StructuredGenerator, "structure: the structured generator even with no other structure option, whose streams follow the community positions: with --id-locality=false and --id-locality, the same graph numbered two ways (the ids axis's twins)")
		fs.IntVar(&c.Workers, "workers", c.Workers, "generator goroutines (0 = all cores)")
		return fs
	}
	var presets strings.Builder
	for _, p := range dataset.PresetNames() {
		fmt.Fprintf(&presets, "  %-12s %s\n", p, dataset.PresetDoc(p))
	}
	var cfg dataset.GenConfig
	cmd := &Command{
		Name:    "gen",
		Aliases: []string{"generate"},
		Args:    "[--preset P] [--name N] [flags]",
		Short:   "generate a synthetic dataset",
		Long: "Generates a synthetic dataset from a preset; each flag below overrides the preset.\n\npresets:\n" +
			presets.String(),
		Flags: flags(&dataset.GenConfig{}),
	}
	cmd.Parse = func(args []string) ([]string, error) {
		var pos []string
		var err error
		cfg, _, pos, err = parseOver(args, flags, func() (dataset.GenConfig, error) {
			if like != "" {
				return genLike(like, &preset, &name)
			}
			c, err := dataset.Preset(preset)
			if err != nil {
				return c, fmt.Errorf("%w: %v", ErrUsage, err)
			}
			return c, nil
		})
		return pos, err
	}
	cmd.Exec = func(ctx context.Context, s Streams, _ []string) error {
		if like != "" { // the second pass reset the preset and name to the flags'
			if _, err := genLike(like, &preset, &name); err != nil {
				return err
			}
		}
		if name == "" {
			name = preset
		}
		var progress io.Writer
		if !quiet {
			progress = progressWriter()
		}
		root := dataset.DatasetsDir(dataset.ResolveDataDir(dataDir))
		began := time.Now()
		d, err := dataset.GenerateWith(ctx, root, name, cfg, dataset.GenOptions{
			Progress: progress, Force: force, Preset: preset, NoIndptr: true,
		})
		if err != nil {
			return datasetErr(err)
		}
		el := time.Since(began).Seconds()
		m := d.Meta
		fmt.Fprintf(s.Out, "generated %s in %s: %d nodes, %d edges, %d dims, %d classes, %.1f MB features in %.2f s (%.0f MB/s)\n",
			m.Name, d.Dir, m.Nodes, m.Edges, m.FeatureDim, m.Classes, float64(m.FeatureBytes())/1e6, el, float64(m.FeatureBytes())/1e6/el)
		return nil
	}
	return cmd
}

// datasetCmd is a command about one named dataset (info, verify): its flag
// set has --data-dir and --json, and run gets the dataset's directory.
func datasetCmd(name, args, short string, extra func(fs *flag.FlagSet),
	run func(s Streams, dir, dsName string, asJSON bool) error) *Command {
	var dataDir string
	var asJSON bool
	fs := newFlagSet("data "+name, &dataDir)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if extra != nil {
		extra(fs)
	}
	return &Command{
		Name: name, Args: args, Short: short, Flags: fs, MinArgs: 1, MaxArgs: 1,
		Exec: func(ctx context.Context, s Streams, pos []string) error {
			dir, err := dataset.DirByName(dataset.ResolveDataDir(dataDir), pos[0])
			if err != nil {
				return datasetErr(err)
			}
			return run(s, dir, pos[0], asJSON)
		},
	}
}

func dataInfoCmd() *Command {
	return datasetCmd("info", "NAME [--json]", "show a dataset's meta.json", nil,
		func(s Streams, dir, _ string, asJSON bool) error {
			// info reads meta.json only (instant at any size); verify checks files.
			m, err := dataset.ReadMeta(dir)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(s.Out, m)
			}
			printMeta(s.Out, dir, m)
			return nil
		})
}

func printMeta(w io.Writer, dir string, m dataset.Meta) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "name\t%s\n", m.Name)
	fmt.Fprintf(tw, "dir\t%s\n", dir)
	fmt.Fprintf(tw, "nodes\t%d\n", m.Nodes)
	fmt.Fprintf(tw, "edges\t%d (mean in-degree %.2f)\n", m.Edges, float64(m.Edges)/math.Max(float64(m.Nodes), 1))
	if m.Undirected {
		fmt.Fprintf(tw, "undirected\tyes: every edge is stored in both directions\n")
	} else {
		fmt.Fprintf(tw, "undirected\tno: directed in-neighbour lists\n")
	}
	fmt.Fprintf(tw, "features\t%d × %d float32 = %s\n", m.Nodes, m.FeatureDim, sizeText.Format(m.FeatureBytes()))
	fmt.Fprintf(tw, "classes\t%d\n", m.Classes)
	if len(m.ClassNames) > 0 {
		fmt.Fprintf(tw, "class names\t%s\n", strings.Join(m.ClassNames, ", "))
	}
	fmt.Fprintf(tw, "labeled\t%d\n", m.Labeled)
	fmt.Fprintf(tw, "split\ttrain %d / val %d / test %d\n", m.Train, m.Val, m.Test)
	if m.EdgeHomophily != nil {
		fmt.Fprintf(tw, "edge homophily\t%.4f\n", *m.EdgeHomophily)
	}
	var total int64
	for _, f := range dataset.DataFiles {
		total += m.Files[f]
	}
	fmt.Fprintf(tw, "size on disk\t%s\n", sizeText.Format(total))
	s := m.Source
	fmt.Fprintf(tw, "source\t%s", s.Kind)
	if s.Preset != "" {
		fmt.Fprintf(tw, " (preset %s)", s.Preset)
	}
	if s.Path != "" {
		fmt.Fprintf(tw, " from %s", s.Path)
	}
	fmt.Fprintln(tw)
	if g := s.Generator; g != nil {
		fmt.Fprintf(tw, "generator\tseed %d, avg degree %g, homophily %g, degree exponent %g, popularity %g, max degree %d, separation %g, noise %g\n",
			g.Seed, g.AvgDegree, g.Homophily, g.DegreeExponent, g.Popularity, g.MaxDegree, g.Separation, g.Noise)
		if g.Structured() {
			fmt.Fprintf(tw, "structure	community size exponent %g, id locality %v, local share %g, local window %d, local density %g\n",
				g.CommunitySizeExponent, g.IDLocality, g.LocalShare, g.LocalWindow, g.LocalDensity)
		}
	}
	if s.Split != "" {
		fmt.Fprintf(tw, "split source\t%s\n", s.Split)
	}
	if s.SkippedEdges > 0 || s.DuplicateEdges > 0 || s.SelfLoops > 0 {
		fmt.Fprintf(tw, "input edges dropped\t%d naming unknown nodes, %d duplicates, %d self-loops\n", s.SkippedEdges, s.DuplicateEdges, s.SelfLoops)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(tw, "note\t%s\n", n)
	}
	fmt.Fprintf(tw, "created\t%s\n", m.Created.Format(time.RFC3339))
	tw.Flush()
}

func dataVerifyCmd() *Command {
	var features bool
	return datasetCmd("verify", "NAME [--features] [--json]", "check every file of a dataset",
		func(fs *flag.FlagSet) {
			fs.BoolVar(&features, "features", false, "also scan features.bin for NaN/Inf (reads the whole file)")
		},
		func(s Streams, dir, name string, asJSON bool) error {
			began := time.Now()
			r, err := dataset.Verify(dir, dataset.VerifyOptions{Features: features})
			if err != nil {
				return fmt.Errorf("verify %s: %w", name, err)
			}
			if asJSON {
				type out struct {
					*dataset.Report
					EdgeHomophily *float64 `json:"edge_homophily"`
				}
				var h *float64
				if !math.IsNaN(r.EdgeHomophily) {
					h = &r.EdgeHomophily
				}
				return writeJSON(s.Out, out{r, h})
			}
			w := s.Out
			fmt.Fprintf(w, "%s: OK (%.2f s)\n", name, time.Since(began).Seconds())
			fmt.Fprintf(w, "  files       sizes match meta.json; indptr monotone, ends at %d; indices, labels, split ids in range\n", r.Meta.Edges)
			fmt.Fprintf(w, "  splits      disjoint, no duplicates, all labeled (train %d / val %d / test %d)\n", r.Meta.Train, r.Meta.Val, r.Meta.Test)
			fmt.Fprintf(w, "  in-degree   min %d, mean %.2f, max %d, %d nodes with none\n", r.MinInDegree, r.MeanInDegree, r.MaxInDegree, r.ZeroInDegree)
			fmt.Fprintf(w, "  out-degree  max %d\n", r.MaxOutDegree)
			fmt.Fprintf(w, "  self-loops  %d\n", r.SelfLoops)
			if !math.IsNaN(r.EdgeHomophily) {
				fmt.Fprintf(w, "  homophily   %.4f (share of labeled edges joining same-class nodes)\n", r.EdgeHomophily)
			}
			if r.Meta.SortedNeighbors {
				fmt.Fprintln(w, "  neighbours  sorted, no duplicates")
			}
			if r.SymmetryChecked {
				fmt.Fprintln(w, "  undirected  every edge stored in both directions")
			}
			if r.FeaturesChecked {
				fmt.Fprintln(w, "  features    all finite")
			} else {
				fmt.Fprintln(w, "  features    not scanned (use --features)")
			}
			return nil
		})
}

func dataListCmd() *Command {
	var dataDir string
	return &Command{
		Name: "list", Aliases: []string{"ls"}, Args: "[--data-dir DIR]", Short: "list datasets",
		Flags: newFlagSet("data list", &dataDir),
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			dd := dataset.ResolveDataDir(dataDir)
			es, err := dataset.ListEntries(dd)
			if err != nil {
				return err
			}
			if left := dataset.Leftovers(dd); len(left) > 0 {
				defer fmt.Fprintf(s.Err, "note: %d leftover temporary director(ies) from interrupted writes (safe to delete when no generator/importer runs):\n  %s\n",
					len(left), strings.Join(left, "\n  "))
			}
			if len(es) == 0 {
				fmt.Fprintf(s.Out, "no datasets in %s\n", dataset.DatasetsDir(dd))
				return nil
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tNODES\tEDGES\tDIM\tCLASSES\tFEATURES\tSOURCE\tCREATED")
			for _, e := range es {
				if e.Err != nil {
					fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\tbroken: %v\t-\n", e.Name, e.Err)
					continue
				}
				m := e.Meta
				src := m.Source.Kind
				if m.Source.Preset != "" {
					src += ":" + m.Source.Preset
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", m.Name, m.Nodes, m.Edges, m.FeatureDim, m.Classes,
					sizeText.Format(m.FeatureBytes()), src, m.Created.Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		},
	}
}

func dataImportCmd() *Command {
	return &Command{
		Name:  "import",
		Args:  "linqs|ogb|npy ... --name N [flags]",
		Short: "import a dataset (LINQS, OGB raw files, NumPy arrays)",
		Subcommands: []*Command{
			importCmd("linqs", "DIR --name N [--split planetoid|random|none] [flags]",
				"import a LINQS dataset (*.content, *.cites), e.g. Cora", nil),
			importCmd("ogb", "DIR --name N [--undirected] [--split NAME|random|none] [flags]",
				"import an OGB node-property dataset from its raw/ and split/ files", nil),
			importCmd("npy", "--name N --features X.npy [--labels Y.npy] (--edges E.npy | --indptr P.npy --indices I.npy) [--train T.npy --val V.npy --test S.npy] [flags]",
				"import NumPy arrays", &dataset.NPYSources{}),
		},
	}
}

// importCmd is `outcore data import <format>`; npy (src non-nil) reads
// named files instead of a source directory.
func importCmd(format, args, short string, src *dataset.NPYSources) *Command {
	var dataDir, name string
	var opt dataset.ImportOptions
	fs := newFlagSet("data import "+format, &dataDir)
	fs.StringVar(&name, "name", "", "dataset name (required)")
	fs.BoolVar(&opt.Force, "force", false, "replace an existing dataset of that name")
	fs.StringVar(&opt.Split, "split", "", "split: the source's own (default), random, none; ogb: a split/ subdirectory name")
	fs.Float64Var(&opt.TrainFrac, "train-frac", 0, "random split: train fraction of labeled nodes (default 0.6)")
	fs.Float64Var(&opt.ValFrac, "val-frac", 0, "random split: validation fraction (default 0.2)")
	fs.Float64Var(&opt.TestFrac, "test-frac", 0, "random split: test fraction (default 0.2)")
	fs.Uint64Var(&opt.Seed, "seed", 1, "random split seed")
	fs.BoolVar(&opt.KeepSelfLoops, "keep-self-loops", false, "keep self-loops (dropped and counted by default)")
	fs.BoolVar(&opt.AllowNonFinite, "allow-nonfinite", false, "import NaN/Inf features (refused by default, naming the first row and column; data verify --features rejects them)")
	fs.Int64Var(&opt.SortBudget, "sort-budget", 0, "edges held in memory by the external sort (default 4Mi = 64 MiB)")
	if format != "linqs" {
		fs.BoolVar(&opt.Undirected, "undirected", false, "store both directions of every edge (e.g. ogbn-products, ogbn-arxiv as usually trained)")
	}
	nargs := 1
	if src != nil {
		nargs = 0
		fs.StringVar(&src.Features, "features", "", "features .npy, shape (N, D), float32/float64 (required)")
		fs.StringVar(&src.Labels, "labels", "", "labels .npy, shape (N,), ints (-1 unlabeled) or floats (NaN unlabeled)")
		fs.StringVar(&src.Edges, "edges", "", "edge list .npy, shape (2, E) [sources; destinations] or (E, 2)")
		fs.StringVar(&src.Indptr, "indptr", "", "CSC indptr .npy, shape (N+1,)")
		fs.StringVar(&src.Indices, "indices", "", "CSC indices .npy, shape (E,)")
		fs.StringVar(&src.Train, "train", "", "train split .npy: node ids or a boolean mask")
		fs.StringVar(&src.Val, "val", "", "validation split .npy")
		fs.StringVar(&src.Test, "test", "", "test split .npy")
		fs.IntVar(&src.Classes, "classes", 0, "class count (default: max label + 1)")
	}
	return &Command{
		Name: format, Args: args, Short: short, Flags: fs, MinArgs: nargs, MaxArgs: nargs,
		Exec: func(ctx context.Context, s Streams, pos []string) error {
			if name == "" {
				return usagef("--name is required")
			}
			opt.Progress = progressWriter()
			root := dataset.DatasetsDir(dataset.ResolveDataDir(dataDir))
			began := time.Now()
			var d *dataset.Dataset
			var err error
			switch format {
			case "linqs":
				d, err = dataset.ImportLINQS(ctx, root, name, pos[0], opt)
			case "ogb":
				d, err = dataset.ImportOGB(ctx, root, name, pos[0], opt)
			case "npy":
				d, err = dataset.ImportNPY(ctx, root, name, *src, opt)
			}
			if err != nil {
				return datasetErr(err)
			}
			m := d.Meta
			w := s.Out
			fmt.Fprintf(w, "imported %s (%s) into %s in %.2f s\n", m.Name, format, d.Dir, time.Since(began).Seconds())
			fmt.Fprintf(w, "  %d nodes, %d edges stored", m.Nodes, m.Edges)
			if m.Undirected {
				fmt.Fprint(w, " (undirected: both directions)")
			}
			fmt.Fprintf(w, ", %d features, %d classes, split %d/%d/%d (%s)\n", m.FeatureDim, m.Classes, m.Train, m.Val, m.Test, m.Source.Split)
			ss := m.Source
			fmt.Fprintf(w, "  input edges dropped: %d naming unknown nodes, %d duplicates, %d self-loops\n", ss.SkippedEdges, ss.DuplicateEdges, ss.SelfLoops)
			if m.EdgeHomophily != nil {
				fmt.Fprintf(w, "  edge homophily %.4f\n", *m.EdgeHomophily)
			}
			return nil
		},
	}
}

// sizeText writes a dataset's sizes for people ("1 GiB", "240.5 MiB").
var sizeText = units.ByteFormat{Space: true}
