package slurm

import (
	"encoding/json"
	"strings"
	"testing"

	"outcore/experiments/grid"
)

// TestGridOptionsThroughGrid: a grid's "slurm" block reaches this
// executor's check through the grid language, which refuses the grid with
// a problem naming the field at fault, and keeps an accepted block for
// the executor to read again.
func TestGridOptionsThroughGrid(t *testing.T) {
	for _, c := range []struct{ block, field, want string }{
		{`{"cpus":2147483648}`, "slurm.cpus", "slurm.cpus: 2147483648 is not a whole number from 1 to 4096"},
		{`{"partition":"a b"}`, "slurm.partition", `slurm.partition: partition "a b"`},
		{`{"nodes":2}`, "slurm.nodes", "slurm.nodes: unknown setting"},
		{`{"node_data_dir":"scratch"}`, "slurm.node_data_dir", `"scratch" is not an absolute path`},
		{`{"args":"--export=ALL"}`, "slurm.args", "--export is not allowed"},
		{`{"time":"2h"}`, "slurm.time", `time limit "2h"`},
		{`{"mem_allowance":"1KiB"}`, "slurm.mem_allowance", `slurm.mem_allowance: "1KiB": want a size from`},
		{`[1]`, "slurm", "slurm: want an object"},
	} {
		_, err := grid.ParseGrid([]byte(`{"dataset":"tiny","system":"pyg+","executor":"slurm","slurm":` + c.block + `}`))
		ps := grid.ProblemsOf(err)
		if len(ps) != 1 || ps[0].Field != c.field || !strings.Contains(ps[0].Message, c.want) {
			t.Errorf("%s: problems %+v, want one of field %q saying %q", c.block, ps, c.field, c.want)
		}
	}
	g, err := grid.ParseGrid([]byte(`{"dataset":"tiny","system":"pyg+","executor":"slurm","slurm":{"partition":"gpu","cpus":4,"args":"--qos=low"}}`))
	if err != nil {
		t.Fatal(err)
	}
	sg, err := ParseGridOptions(g.ExecutorOptions[Name])
	if err != nil || sg == nil || sg.Partition != "gpu" || sg.CPUs != 4 || sg.Args != "--qos=low" {
		t.Fatalf("block %s read back as %+v, %v", g.ExecutorOptions[Name], sg, err)
	}
	o, err := Options{Partition: "cpu", CPUs: 1, Args: []string{"--nice=5"}}.Merged(sg, t.TempDir())
	if err != nil || o.Partition != "gpu" || o.CPUs != 4 || strings.Join(o.Args, " ") != "--nice=5 --qos=low" {
		t.Fatalf("merged %+v, %v", o, err)
	}
}

// FuzzGridOptions: any block is refused with problems naming a field of
// "slurm", or gives options of which what reaches a job holds: only
// allowed sbatch options, a node data directory without "..", settings
// within their ranges.
func FuzzGridOptions(f *testing.F) {
	for _, s := range []string{
		`{"args":"--export=ALL,BASH_ENV=$(id) --qos=low","node_data_dir":"/etc/../root","cpus":2147483648}`,
		`{"args":"--comment='a b' --nodelist=n[1-2]","node_data_dir":"/scratch/x","time":"1-00"}`,
		`{"partition":"a,b","mem_allowance":"512MiB"}`, `null`, `{}`, `{"x":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sg, err := ParseGridOptions(json.RawMessage(b))
		if err != nil {
			ps := grid.ProblemsOf(err)
			if len(ps) == 0 {
				t.Fatalf("error without problems: %v", err)
			}
			for _, p := range ps {
				if p.Field != Name && !strings.HasPrefix(p.Field, Name+".") || p.Message == "" {
					t.Fatalf("problem %+v", p)
				}
			}
			return
		}
		if sg == nil {
			return
		}
		args, err := SplitArgs(sg.Args)
		if err != nil {
			t.Fatalf("accepted slurm.args %q: %v", sg.Args, err)
		}
		for _, a := range args {
			if err := CheckSbatchArg(a); err != nil {
				t.Fatalf("accepted slurm.args %q: %v", sg.Args, err)
			}
		}
		if sg.NodeDataDir != "" && NodeDataDirSyntax(sg.NodeDataDir) != nil {
			t.Fatalf("accepted slurm.node_data_dir %q", sg.NodeDataDir)
		}
		if sg.CPUs < 0 || sg.CPUs > MaxCPUs {
			t.Fatalf("accepted slurm.cpus %d", sg.CPUs)
		}
	})
}
