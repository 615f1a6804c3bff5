package cli

import (
	"context"
	"errors"
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
	if err := run("import", "linqs", "../../engine/dataset/testdata/linqs-mini", "--name", "mini", "--split", "random"); err != nil {
		t.Fatal(err)
	}
	if err := run("import", "ogb", "../../engine/dataset/testdata/ogb-tiny", "--name", "o", "--undirected"); err != nil {
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
