package dataset

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"outcore/internal/osutil"
)

// NodeIDsFile is an optional file some importers write: line v holds the
// source's identifier of node v (e.g. the LINQS paper id).
const NodeIDsFile = "node_ids.txt"

// ImportLINQS imports a LINQS-format dataset from srcDir (Sen et al. 2008;
// e.g. Cora): one <x>.content file with lines
// `<paper_id> <w_1> … <w_D> <class_label>` (whitespace-separated, features
// numeric) and one <x>.cites file with lines `<cited_id> <citing_id>`.
//
// Node v is the v-th line of .content. A citation "A B" (B cites A) makes
// an edge B→A; the graph is treated as undirected, so both directions are
// stored, with duplicates and self-loops dropped (meta.json says so).
// Citations naming papers absent from .content are skipped and counted.
//
// Classes: when srcDir/derived/planetoid_class_map.txt exists (lines
// `<index> TAB <label>`), label values follow it; otherwise labels are the
// sorted class names. Split: opt.Split "" or "planetoid" reads the Planetoid
// split from srcDir/derived/planetoid_{train,val,test}.txt (lines
// `<planetoid_index> TAB <paper_id>`); "" falls back to a random split when
// those files are absent; "random" and "none" do what they say.
func ImportLINQS(ctx context.Context, datasetsDir, name, srcDir string, opt ImportOptions) (*Dataset, error) {
	content, err := findOne(srcDir, "*.content", "*.content.gz")
	if err != nil {
		return nil, err
	}
	cites, err := findOne(srcDir, "*.cites", "*.cites.gz")
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(datasetsDir, name, opt.Force)
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	job := &importJob{w: w, began: time.Now(), progress: opt.Progress}
	job.meta.Undirected = true
	abs, _ := filepath.Abs(srcDir)
	job.meta.Source = Source{Kind: "linqs", Path: abs, Inputs: []string{filepath.Base(content), filepath.Base(cites)}}

	// Features and raw labels from .content.
	ids := map[string]int64{}
	var names []string
	var classOf []string
	dim := -1
	ff, err := w.Create(FeaturesFile)
	if err != nil {
		return nil, err
	}
	fw := bufio.NewWriterSize(newSeqWriter(ff), 1<<20)
	idf, err := w.Create(NodeIDsFile)
	if err != nil {
		return nil, err
	}
	iw := bufio.NewWriter(idf)
	var row []float32
	err = scanCSV(content, func(lineNo int, line string) error {
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		id, class, feats, ok, err := parseLINQSContent(line, dim, row[:0])
		if err != nil || !ok {
			return err
		}
		row = feats
		if dim < 0 {
			dim = len(row)
		}
		if err := checkFinite(opt.AllowNonFinite, content, row, int64(len(names)), dim); err != nil {
			return err
		}
		if prev, dup := ids[id]; dup {
			return fmt.Errorf("paper id %q repeats (first on data line %d)", id, prev+1)
		}
		ids[id] = int64(len(names))
		names = append(names, id)
		classOf = append(classOf, class)
		if _, err := fw.Write(osutil.Bytes(row)); err != nil {
			return fmt.Errorf("write %s: %w", FeaturesFile, err)
		}
		iw.WriteString(id)
		return iw.WriteByte('\n')
	})
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: %s: no nodes", ErrBadInput, content)
	}
	if err := fw.Flush(); err != nil {
		return nil, fmt.Errorf("write %s: %w", FeaturesFile, err)
	}
	if err := iw.Flush(); err != nil {
		return nil, fmt.Errorf("write %s: %w", NodeIDsFile, err)
	}
	n := int64(len(names))
	job.meta.FeatureDim = dim

	// Class names → label values.
	classMap := filepath.Join(srcDir, "derived", "planetoid_class_map.txt")
	var classNames []string
	if _, err := os.Stat(classMap); err == nil {
		if classNames, err = readClassMap(classMap); err != nil {
			return nil, err
		}
		job.meta.Source.Inputs = append(job.meta.Source.Inputs, "derived/planetoid_class_map.txt")
	} else {
		seen := map[string]bool{}
		for _, c := range classOf {
			if !seen[c] {
				seen[c] = true
				classNames = append(classNames, c)
			}
		}
		sort.Strings(classNames)
	}
	label := map[string]int32{}
	for i, c := range classNames {
		label[c] = int32(i)
	}
	job.labels = make([]int32, n)
	for v, c := range classOf {
		l, ok := label[c]
		if !ok {
			return nil, fmt.Errorf("%w: %s: paper %s has class %q, absent from %s", ErrBadInput, content, names[v], c, classMap)
		}
		job.labels[v] = l
	}
	job.meta.Classes = len(classNames)
	job.meta.ClassNames = classNames
	classOf = nil

	// Edges from .cites.
	job.sorter, err = newEdgeSorter(w.Dir(), n, opt.SortBudget, !opt.KeepSelfLoops)
	if err != nil {
		return nil, err
	}
	var lines int64
	err = scanCSV(cites, func(lineNo int, line string) error {
		citedID, citingID, ok, err := parseLINQSCite(line)
		if err != nil || !ok {
			return err
		}
		lines++
		cited, ok1 := ids[citedID]
		citing, ok2 := ids[citingID]
		if !ok1 || !ok2 {
			job.meta.Source.SkippedEdges++
			return nil
		}
		if err := job.sorter.Add(citing, cited); err != nil {
			return err
		}
		if cited != citing {
			return job.sorter.Add(cited, citing)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Split.
	switch opt.Split {
	case "", "planetoid":
		job.splits, err = readPlanetoidSplit(srcDir, ids)
		if err == nil {
			job.meta.Source.Split = "planetoid (derived/planetoid_{train,val,test}.txt)"
			job.meta.Source.Inputs = append(job.meta.Source.Inputs, "derived/planetoid_train.txt", "derived/planetoid_val.txt", "derived/planetoid_test.txt")
			break
		}
		if opt.Split == "planetoid" || !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		fallthrough
	case "random":
		tr, va, te, err := opt.splitFracs()
		if err != nil {
			return nil, err
		}
		job.splits = randomSplit(job.labels, tr, va, te, max(opt.Seed, 1))
		job.meta.Source.Split = fmt.Sprintf("random %.2f/%.2f/%.2f seed %d", tr, va, te, max(opt.Seed, 1))
	case "none":
		job.meta.Source.Split = "none"
	default:
		return nil, fmt.Errorf("%w: LINQS split %q (want planetoid, random or none)", ErrConfig, opt.Split)
	}
	job.meta.Source.Notes = append(job.meta.Source.Notes,
		fmt.Sprintf("node v = line v of %s; node_ids.txt maps back to paper ids", filepath.Base(content)),
		fmt.Sprintf("%s: %d citation lines; \"A B\" = B cites A; stored undirected: both directions, duplicates and self-loops dropped", filepath.Base(cites), lines),
		fmt.Sprintf("%d citation lines name a paper absent from %s and were skipped", job.meta.Source.SkippedEdges, filepath.Base(content)),
	)
	d, err := job.finish()
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", srcDir, err)
	}
	return d, nil
}

// parseLINQSContent parses one line of a .content file,
// `<paper_id> <w_1> … <w_D> <class_label>`, appending the features to row.
// dim is the feature count of the first line (-1 before it). ok is false
// for a blank line. Errors name the field at fault.
func parseLINQSContent(line string, dim int, row []float32) (id, class string, feats []float32, ok bool, err error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return "", "", row, false, nil
	}
	if len(f) < 3 {
		return "", "", row, false, fmt.Errorf("%d fields, want <paper_id> <features…> <class_label>", len(f))
	}
	if dim >= 0 && len(f)-2 != dim {
		return "", "", row, false, fmt.Errorf("%d feature values, but the first line has %d", len(f)-2, dim)
	}
	if len(f)-2 > 1<<20 {
		return "", "", row, false, fmt.Errorf("%d feature values, more than 2^20", len(f)-2)
	}
	for k, s := range f[1 : len(f)-1] {
		x, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return "", "", row, false, fmt.Errorf("feature %d = %q %s", k+1, s, numErr(err))
		}
		row = append(row, float32(x))
	}
	return f[0], f[len(f)-1], row, true, nil
}

// parseLINQSCite parses one line of a .cites file, `<cited_id> <citing_id>`;
// ok is false for a blank line.
func parseLINQSCite(line string) (cited, citing string, ok bool, err error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return "", "", false, nil
	}
	if len(f) != 2 {
		return "", "", false, fmt.Errorf("%d fields, want <cited_id> <citing_id>", len(f))
	}
	return f[0], f[1], true, nil
}

// findOne returns the single file in dir matching one of the patterns.
func findOne(dir string, patterns ...string) (string, error) {
	var m []string
	for _, p := range patterns {
		g, err := filepath.Glob(filepath.Join(dir, p))
		if err != nil {
			return "", err
		}
		m = append(m, g...)
	}
	pattern := strings.Join(patterns, " or ")
	switch len(m) {
	case 0:
		if _, err := os.Stat(dir); err != nil {
			return "", fmt.Errorf("%w: %v", ErrBadInput, err)
		}
		return "", fmt.Errorf("%w: no %s file in %s", ErrBadInput, pattern, dir)
	case 1:
		return m[0], nil
	}
	return "", fmt.Errorf("%w: several %s files in %s: %s", ErrBadInput, pattern, dir, strings.Join(m, ", "))
}

// scanLines calls fn for each line of a text file; fn's error is reported
// as ErrBadInput naming the file and line (1-based) unless it already wraps
// a sentinel of this package or a context error.
func scanLines(path string, fn func(lineNo int, line string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	defer f.Close()
	return scanReader(path, f, fn)
}

func scanReader(path string, r interface{ Read([]byte) (int, error) }, fn func(lineNo int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		if err := fn(line, sc.Text()); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			if errors.Is(err, ErrBadInput) || errors.Is(err, ErrCorrupt) {
				return fmt.Errorf("%s line %d: %w", path, line, err)
			}
			return fmt.Errorf("%w: %s line %d: %v", ErrBadInput, path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %s after line %d: %v", ErrBadInput, path, line, err)
	}
	return nil
}

func readClassMap(path string) ([]string, error) {
	var names []string
	err := scanLines(path, func(lineNo int, line string) error {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) == 1 && f[0] == "" {
			return nil
		}
		if len(f) != 2 {
			return fmt.Errorf("want <index> TAB <label>")
		}
		i, err := strconv.Atoi(f[0])
		if err != nil || i != len(names) {
			return fmt.Errorf("index %q, want %d", f[0], len(names))
		}
		names = append(names, f[1])
		return nil
	})
	return names, err
}

// readPlanetoidSplit reads derived/planetoid_{train,val,test}.txt. A
// missing file is returned as an error wrapping os.ErrNotExist.
func readPlanetoidSplit(srcDir string, ids map[string]int64) ([3][]int64, error) {
	var out [3][]int64
	for i, s := range []string{"train", "val", "test"} {
		p := filepath.Join(srcDir, "derived", "planetoid_"+s+".txt")
		if _, err := os.Stat(p); err != nil {
			return out, fmt.Errorf("planetoid split: %w", err)
		}
		err := scanLines(p, func(lineNo int, line string) error {
			f := strings.Fields(line)
			if len(f) == 0 {
				return nil
			}
			if len(f) != 2 {
				return fmt.Errorf("want <planetoid_index> TAB <paper_id>")
			}
			v, ok := ids[f[1]]
			if !ok {
				return fmt.Errorf("paper id %q is not in the .content file", f[1])
			}
			out[i] = append(out[i], v)
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
