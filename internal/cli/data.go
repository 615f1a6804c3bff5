package cli

import (
	"context"
	"encoding/json"
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
)

const dataUsage = `usage: outcore data <subcommand> [flags]

subcommands:
  gen     --preset P --name N [overrides]   generate a synthetic dataset
  import  linqs|npy|ogb SRC --name N        import a dataset
  info    NAME                              show a dataset's meta.json
  verify  NAME [--features]                 check every file of a dataset
  list                                      list datasets

Every subcommand takes --data-dir (default: $OUTCORE_DATA, else
$XDG_DATA_HOME/outcore, else ~/.local/share/outcore).
Run 'outcore data <subcommand> -h' for its flags.`

// Data runs `outcore data`.
func Data(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, dataUsage)
		return fmt.Errorf("%w: data needs a subcommand", ErrUsage)
	}
	switch args[0] {
	case "gen", "generate":
		return dataGen(ctx, args[1:])
	case "import":
		return dataImport(ctx, args[1:])
	case "info":
		return dataInfo(args[1:])
	case "verify":
		return dataVerify(args[1:])
	case "list", "ls":
		return dataList(args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(os.Stdout, dataUsage)
		return nil
	}
	fmt.Fprintln(os.Stderr, dataUsage)
	return fmt.Errorf("%w: unknown data subcommand %q", ErrUsage, args[0])
}

// parseArgs parses flags that may appear before, between or after
// positional arguments (`import linqs DIR --name cora`) and checks the
// positional count.
func parseArgs(fs *flag.FlagSet, args []string, minPos, maxPos int) ([]string, error) {
	fs.SetOutput(os.Stderr)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, flag.ErrHelp
			}
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			pos = append(pos, args[1:]...)
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) < minPos || len(pos) > maxPos {
		fs.Usage()
		return nil, fmt.Errorf("%w: %s takes %d to %d arguments, got %d (%s)", ErrUsage, fs.Name(), minPos, maxPos, len(pos), strings.Join(pos, " "))
	}
	return pos, nil
}

// helpOK turns -h into a successful exit.
func helpOK(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func progressWriter() io.Writer {
	if term.IsTerminal(int(os.Stderr.Fd())) {
		return os.Stderr
	}
	return nil
}

func dataGen(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("data gen", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "data directory")
	preset := fs.String("preset", "tiny", "preset: "+strings.Join(dataset.PresetNames(), ", "))
	name := fs.String("name", "", "dataset name (default: the preset name)")
	force := fs.Bool("force", false, "replace an existing dataset of that name")
	quiet := fs.Bool("quiet", false, "no progress output")
	var o dataset.GenConfig
	fs.Int64Var(&o.Nodes, "nodes", 0, "node count")
	fs.Float64Var(&o.AvgDegree, "avg-degree", 0, "mean in-degree")
	fs.IntVar(&o.FeatureDim, "dim", 0, "feature dimension")
	fs.IntVar(&o.Classes, "classes", 0, "number of classes (planted communities)")
	fs.Float64Var(&o.Homophily, "homophily", 0, "share of in-neighbours from the node's own class")
	fs.Float64Var(&o.TrainFrac, "train", 0, "fraction of nodes in the train split")
	fs.Float64Var(&o.ValFrac, "val", 0, "fraction of nodes in the validation split")
	fs.Float64Var(&o.TestFrac, "test", 0, "fraction of nodes in the test split")
	fs.BoolVar(&o.LabelSplitOnly, "label-split-only", false, "label only nodes in a split (others -1)")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed")
	fs.Float64Var(&o.DegreeExponent, "degree-exponent", 0, "in-degree tail index a, P(deg>k)~k^-a (>1)")
	fs.Int64Var(&o.MinDegree, "min-degree", 0, "minimum in-degree")
	fs.Int64Var(&o.MaxDegree, "max-degree", 0, "maximum in-degree (0 = auto)")
	fs.Float64Var(&o.Popularity, "popularity", 0, "Zipf exponent of neighbour popularity (out-degree skew; 0 = uniform)")
	fs.Float64Var(&o.Separation, "separation", 0, "expected distance between class centroids")
	fs.Float64Var(&o.Noise, "noise", 0, "feature noise standard deviation")
	fs.IntVar(&o.Workers, "workers", 0, "generator goroutines (0 = all cores)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: outcore data gen [--preset P] [--name N] [flags]\n\npresets:")
		for _, p := range dataset.PresetNames() {
			fmt.Fprintf(fs.Output(), "  %-12s %s\n", p, dataset.PresetDoc(p))
		}
		fmt.Fprintln(fs.Output(), "\nflags (each overrides the preset):")
		fs.PrintDefaults()
	}
	if _, err := parseArgs(fs, args, 0, 0); err != nil {
		return helpOK(err)
	}
	cfg, err := dataset.Preset(*preset)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "nodes":
			cfg.Nodes = o.Nodes
		case "avg-degree":
			cfg.AvgDegree = o.AvgDegree
		case "dim":
			cfg.FeatureDim = o.FeatureDim
		case "classes":
			cfg.Classes = o.Classes
		case "homophily":
			cfg.Homophily = o.Homophily
		case "train":
			cfg.TrainFrac = o.TrainFrac
		case "val":
			cfg.ValFrac = o.ValFrac
		case "test":
			cfg.TestFrac = o.TestFrac
		case "label-split-only":
			cfg.LabelSplitOnly = o.LabelSplitOnly
		case "seed":
			cfg.Seed = o.Seed
		case "degree-exponent":
			cfg.DegreeExponent = o.DegreeExponent
		case "min-degree":
			cfg.MinDegree = o.MinDegree
		case "max-degree":
			cfg.MaxDegree = o.MaxDegree
		case "popularity":
			cfg.Popularity = o.Popularity
		case "separation":
			cfg.Separation = o.Separation
		case "noise":
			cfg.Noise = o.Noise
		case "workers":
			cfg.Workers = o.Workers
		}
	})
	if *name == "" {
		*name = *preset
	}
	var progress io.Writer
	if !*quiet {
		progress = progressWriter()
	}
	root := dataset.DatasetsDir(dataset.ResolveDataDir(*dataDir))
	began := time.Now()
	d, err := dataset.GenerateWith(ctx, root, *name, cfg, dataset.GenOptions{
		Progress: progress, Force: *force, Preset: *preset, NoIndptr: true,
	})
	if err != nil {
		if errors.Is(err, dataset.ErrConfig) || errors.Is(err, dataset.ErrBadName) {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		return err
	}
	el := time.Since(began).Seconds()
	m := d.Meta
	fmt.Printf("generated %s in %s: %d nodes, %d edges, %d dims, %d classes, %.1f MB features in %.2f s (%.0f MB/s)\n",
		m.Name, d.Dir, m.Nodes, m.Edges, m.FeatureDim, m.Classes, float64(m.FeatureBytes())/1e6, el, float64(m.FeatureBytes())/1e6/el)
	return nil
}

func dataInfo(args []string) error {
	fs := flag.NewFlagSet("data info", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "data directory")
	asJSON := fs.Bool("json", false, "print meta.json as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: outcore data info NAME [--json] [--data-dir DIR]")
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args, 1, 1)
	if err != nil {
		return helpOK(err)
	}
	// info reads meta.json only (instant at any size); verify checks files.
	dir, err := dataset.DirByName(dataset.ResolveDataDir(*dataDir), pos[0])
	if err != nil {
		return err
	}
	m, err := dataset.ReadMeta(dir)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}
	printMeta(os.Stdout, dir, m)
	return nil
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
	fmt.Fprintf(tw, "features\t%d × %d float32 = %s\n", m.Nodes, m.FeatureDim, human(m.FeatureBytes()))
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
	fmt.Fprintf(tw, "size on disk\t%s\n", human(total))
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

func human(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func dataVerify(args []string) error {
	fs := flag.NewFlagSet("data verify", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "data directory")
	features := fs.Bool("features", false, "also scan features.bin for NaN/Inf (reads the whole file)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: outcore data verify NAME [--features] [--json] [--data-dir DIR]")
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args, 1, 1)
	if err != nil {
		return helpOK(err)
	}
	dir, err := dataset.DirByName(dataset.ResolveDataDir(*dataDir), pos[0])
	if err != nil {
		if errors.Is(err, dataset.ErrBadName) {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		return err
	}
	began := time.Now()
	r, err := dataset.Verify(dir, dataset.VerifyOptions{Features: *features})
	if err != nil {
		return fmt.Errorf("verify %s: %w", pos[0], err)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		type out struct {
			*dataset.Report
			EdgeHomophily *float64 `json:"edge_homophily"`
		}
		var h *float64
		if !math.IsNaN(r.EdgeHomophily) {
			h = &r.EdgeHomophily
		}
		return enc.Encode(out{r, h})
	}
	fmt.Printf("%s: OK (%.2f s)\n", pos[0], time.Since(began).Seconds())
	fmt.Printf("  files       sizes match meta.json; indptr monotone, ends at %d; indices, labels, split ids in range\n", r.Meta.Edges)
	fmt.Printf("  splits      disjoint, no duplicates, all labeled (train %d / val %d / test %d)\n", r.Meta.Train, r.Meta.Val, r.Meta.Test)
	fmt.Printf("  in-degree   min %d, mean %.2f, max %d, %d nodes with none\n", r.MinInDegree, r.MeanInDegree, r.MaxInDegree, r.ZeroInDegree)
	fmt.Printf("  out-degree  max %d\n", r.MaxOutDegree)
	fmt.Printf("  self-loops  %d\n", r.SelfLoops)
	if !math.IsNaN(r.EdgeHomophily) {
		fmt.Printf("  homophily   %.4f (share of labeled edges joining same-class nodes)\n", r.EdgeHomophily)
	}
	if r.Meta.SortedNeighbors {
		fmt.Println("  neighbours  sorted, no duplicates")
	}
	if r.SymmetryChecked {
		fmt.Println("  undirected  every edge stored in both directions")
	}
	if r.FeaturesChecked {
		fmt.Println("  features    all finite")
	} else {
		fmt.Println("  features    not scanned (use --features)")
	}
	return nil
}

func dataList(args []string) error {
	fs := flag.NewFlagSet("data list", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "data directory")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: outcore data list [--data-dir DIR]")
		fs.PrintDefaults()
	}
	if _, err := parseArgs(fs, args, 0, 0); err != nil {
		return helpOK(err)
	}
	dd := dataset.ResolveDataDir(*dataDir)
	es, err := dataset.ListEntries(dd)
	if err != nil {
		return err
	}
	if left := dataset.Leftovers(dd); len(left) > 0 {
		defer fmt.Fprintf(os.Stderr, "note: %d leftover temporary director(ies) from interrupted writes (safe to delete when no generator/importer runs):\n  %s\n",
			len(left), strings.Join(left, "\n  "))
	}
	if len(es) == 0 {
		fmt.Printf("no datasets in %s\n", dataset.DatasetsDir(dd))
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
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
			human(m.FeatureBytes()), src, m.Created.Format("2006-01-02 15:04"))
	}
	return tw.Flush()
}

const importUsage = `usage:
  outcore data import linqs DIR --name N [--split planetoid|random|none] [flags]
  outcore data import ogb DIR --name N [--undirected] [--split NAME|random|none] [flags]
  outcore data import npy --name N --features X.npy [--labels Y.npy]
        (--edges E.npy | --indptr P.npy --indices I.npy)
        [--train T.npy --val V.npy --test S.npy] [--undirected] [flags]`

func dataImport(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(os.Stderr, importUsage)
		if len(args) == 0 {
			return fmt.Errorf("%w: import needs a format: linqs, npy or ogb", ErrUsage)
		}
		return nil
	}
	format := args[0]
	fs := flag.NewFlagSet("data import "+format, flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "data directory")
	name := fs.String("name", "", "dataset name (required)")
	var opt dataset.ImportOptions
	fs.BoolVar(&opt.Force, "force", false, "replace an existing dataset of that name")
	fs.StringVar(&opt.Split, "split", "", "split: the source's own (default), random, none; ogb: a split/ subdirectory name")
	fs.Float64Var(&opt.TrainFrac, "train-frac", 0, "random split: train fraction of labeled nodes (default 0.6)")
	fs.Float64Var(&opt.ValFrac, "val-frac", 0, "random split: validation fraction (default 0.2)")
	fs.Float64Var(&opt.TestFrac, "test-frac", 0, "random split: test fraction (default 0.2)")
	fs.Uint64Var(&opt.Seed, "seed", 1, "random split seed")
	fs.BoolVar(&opt.KeepSelfLoops, "keep-self-loops", false, "keep self-loops (dropped and counted by default)")
	fs.Int64Var(&opt.SortBudget, "sort-budget", 0, "edges held in memory by the external sort (default 4Mi = 64 MiB)")
	var src dataset.NPYSources
	minPos, maxPos := 1, 1
	switch format {
	case "linqs":
	case "ogb":
		fs.BoolVar(&opt.Undirected, "undirected", false, "store both directions of every edge (e.g. ogbn-products, ogbn-arxiv as usually trained)")
	case "npy":
		minPos, maxPos = 0, 0
		fs.BoolVar(&opt.Undirected, "undirected", false, "store both directions of every edge")
		fs.StringVar(&src.Features, "features", "", "features .npy, shape (N, D), float32/float64 (required)")
		fs.StringVar(&src.Labels, "labels", "", "labels .npy, shape (N,), ints (-1 unlabeled) or floats (NaN unlabeled)")
		fs.StringVar(&src.Edges, "edges", "", "edge list .npy, shape (2, E) [sources; destinations] or (E, 2)")
		fs.StringVar(&src.Indptr, "indptr", "", "CSC indptr .npy, shape (N+1,)")
		fs.StringVar(&src.Indices, "indices", "", "CSC indices .npy, shape (E,)")
		fs.StringVar(&src.Train, "train", "", "train split .npy: node ids or a boolean mask")
		fs.StringVar(&src.Val, "val", "", "validation split .npy")
		fs.StringVar(&src.Test, "test", "", "test split .npy")
		fs.IntVar(&src.Classes, "classes", 0, "class count (default: max label + 1)")
	default:
		fmt.Fprintln(os.Stderr, importUsage)
		return fmt.Errorf("%w: unknown import format %q (want linqs, npy or ogb)", ErrUsage, format)
	}
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), importUsage)
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args[1:], minPos, maxPos)
	if err != nil {
		return helpOK(err)
	}
	if *name == "" {
		fs.Usage()
		return fmt.Errorf("%w: --name is required", ErrUsage)
	}
	opt.Progress = progressWriter()
	root := dataset.DatasetsDir(dataset.ResolveDataDir(*dataDir))
	began := time.Now()
	var d *dataset.Dataset
	switch format {
	case "linqs":
		d, err = dataset.ImportLINQS(ctx, root, *name, pos[0], opt)
	case "ogb":
		d, err = dataset.ImportOGB(ctx, root, *name, pos[0], opt)
	case "npy":
		d, err = dataset.ImportNPY(ctx, root, *name, src, opt)
	}
	if err != nil {
		if errors.Is(err, dataset.ErrConfig) || errors.Is(err, dataset.ErrBadName) {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		return err
	}
	m := d.Meta
	fmt.Printf("imported %s (%s) into %s in %.2f s\n", m.Name, format, d.Dir, time.Since(began).Seconds())
	fmt.Printf("  %d nodes, %d edges stored", m.Nodes, m.Edges)
	if m.Undirected {
		fmt.Print(" (undirected: both directions)")
	}
	fmt.Printf(", %d features, %d classes, split %d/%d/%d (%s)\n", m.FeatureDim, m.Classes, m.Train, m.Val, m.Test, m.Source.Split)
	s := m.Source
	fmt.Printf("  input edges dropped: %d naming unknown nodes, %d duplicates, %d self-loops\n", s.SkippedEdges, s.DuplicateEdges, s.SelfLoops)
	if m.EdgeHomophily != nil {
		fmt.Printf("  edge homophily %.4f\n", *m.EdgeHomophily)
	}
	return nil
}
