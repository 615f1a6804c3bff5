package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"outcore/engine/dataset"
)

func TestDataCommands(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	run := func(args ...string) error {
		return Run(ctx, discard, append(append([]string{"data"}, args...), "--data-dir", dir))
	}
	if err := run("gen", "--preset", "tiny", "--name", "t", "--nodes", "3000", "--dim", "8", "--quiet"); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.OpenByName(dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	if d.Meta.Nodes != 3000 || d.Meta.FeatureDim != 8 || d.Meta.Classes != 7 {
		t.Fatalf("flags did not override the preset: %+v", d.Meta)
	}
	for _, args := range [][]string{{"info", "t"}, {"verify", "t", "--features"}, {"list"}} {
		if err := run(args...); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	if err := run("import", "linqs", "../../../engine/dataset/testdata/linqs-mini", "--name", "mini", "--split", "random"); err != nil {
		t.Fatal(err)
	}
	if err := run("import", "ogb", "../../../engine/dataset/testdata/ogb-tiny", "--name", "o", "--undirected"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want error
	}{
		{[]string{"gen", "--preset", "huge"}, ErrUsage},
		{[]string{"gen", "--name", "t"}, dataset.ErrExists},
		{[]string{"gen", "--name", "../x"}, ErrUsage},
		{[]string{"gen", "--homophily", "1.5", "--name", "h"}, ErrUsage},
		{[]string{"info"}, ErrUsage},
		{[]string{"info", "nope"}, dataset.ErrNotFound},
		{[]string{"verify", "nope"}, dataset.ErrNotFound},
		{[]string{"import", "csv", "x", "--name", "c"}, ErrUsage},
		{[]string{"import", "linqs", "x"}, ErrUsage},
		{[]string{"frobnicate"}, ErrUsage},
	} {
		if err := run(c.args...); !errors.Is(err, c.want) {
			t.Errorf("%v: err = %v, want %v", c.args, err, c.want)
		}
	}
}

// TestDataGenLikeAndDigest regenerates a dataset from its meta.json in
// another data directory (what a Slurm job does on its node) and checks
// the copy's digest against the original's.
func TestDataGenLikeAndDigest(t *testing.T) {
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	Data := func(ctx context.Context, args []string) error {
		return Run(ctx, discard, append([]string{"data"}, args...))
	}
	if err := Data(ctx, []string{"gen", "--preset", "tiny", "--name", "t", "--nodes", "2000", "--dim", "8", "--quiet", "--data-dir", a}); err != nil {
		t.Fatal(err)
	}
	srcDir := filepath.Join(dataset.DatasetsDir(a), "t")
	want, err := dataset.Digest(srcDir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := Data(ctx, []string{"gen", "--like", filepath.Join(srcDir, dataset.MetaFile), "--quiet", "--data-dir", b}); err != nil {
		t.Fatal(err)
	}
	m, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(b), "t"))
	if err != nil || m.Nodes != 2000 || m.FeatureDim != 8 {
		t.Fatalf("--like did not keep the generator config: %+v, %v", m, err)
	}
	if err := Data(ctx, []string{"digest", "t", "--check", want, "--data-dir", b}); err != nil {
		t.Fatalf("digest --check of the regenerated copy: %v", err)
	}
	other := strings.Repeat("0", 64)
	if err := Data(ctx, []string{"digest", "t", "--check", other, "--data-dir", b}); !errors.Is(err, dataset.ErrDigestMismatch) {
		t.Fatalf("digest --check with another digest: %v, want ErrDigestMismatch", err)
	}
	if err := Data(ctx, []string{"gen", "--like", filepath.Join(b, "nope.json"), "--data-dir", b}); !errors.Is(err, ErrUsage) {
		t.Fatalf("--like with a missing file: %v, want ErrUsage", err)
	}
}

// TestDataStats runs `data stats` on a generated and an imported dataset
// and checks its JSON against what meta.json and the command's flags say.
func TestDataStats(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	run := func(out io.Writer, args ...string) error {
		return Run(ctx, Streams{Out: out, Err: io.Discard}, append(append([]string{"data"}, args...), "--data-dir", dir))
	}
	if err := run(io.Discard, "gen", "--preset", "tiny", "--name", "t", "--quiet"); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, "import", "ogb", "../../../engine/dataset/testdata/ogb-tiny", "--name", "o", "--undirected"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"t", "o"} {
		var buf bytes.Buffer
		if err := run(&buf, "stats", name, "--json", "--batch", "5", "--fanout", "2,2", "--batches", "3"); err != nil {
			t.Fatalf("stats %s: %v", name, err)
		}
		var st dataset.Stats
		if err := json.Unmarshal(buf.Bytes(), &st); err != nil {
			t.Fatalf("stats %s --json: %v\n%s", name, err, buf.String())
		}
		m, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(dir), name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Nodes != m.Nodes || st.Edges != m.Edges || st.Undirected != m.Undirected {
			t.Errorf("%s: stats %d nodes %d edges (undirected %v), meta %d %d %v", name, st.Nodes, st.Edges, st.Undirected, m.Nodes, m.Edges, m.Undirected)
		}
		if b := st.Batch; b.BatchSize != 5 || b.Batches != 3 || len(b.Fanouts) != 2 || b.MeanShare <= 0 || b.MaxShare > 1 {
			t.Errorf("%s: batch = %+v", name, b)
		}
		if st.Undirected && st.InDegree != st.OutDegree {
			t.Errorf("%s: undirected but in-degrees %+v differ from out-degrees %+v", name, st.InDegree, st.OutDegree)
		}
		buf.Reset()
		if err := run(&buf, "stats", name); err != nil || !strings.Contains(buf.String(), "batch reach") {
			t.Errorf("stats %s: %v\n%s", name, err, buf.String())
		}
	}
	if err := run(io.Discard, "stats", "t", "--batch", "0"); !errors.Is(err, ErrUsage) {
		t.Errorf("--batch 0: %v, want ErrUsage", err)
	}
	if err := run(io.Discard, "stats", "nope"); !errors.Is(err, dataset.ErrNotFound) {
		t.Errorf("missing dataset: %v, want ErrNotFound", err)
	}
}
