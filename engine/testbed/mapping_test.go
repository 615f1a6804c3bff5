package testbed

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.txt")

// TestMapData runs the mapping cases of testdata/map.txt (in the style of
// pebble's datadriven files): each case is a command line, "----", and
// the expected output up to a blank line. `go test -run TestMapData
// -rewrite` writes the output the mapping gives, to be read and
// committed.
//
//	map testbed=NAME system=S nodes=N dim=D batch=B fanout=F [iops=X] [seq=Y]
func TestMapData(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*.txt")
	if len(paths) == 0 {
		t.Fatal("no testdata/*.txt")
	}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		lines := strings.Split(string(b), "\n")
		cases := 0
		for i := 0; i < len(lines); i++ {
			line := lines[i]
			if line == "" || strings.HasPrefix(line, "#") {
				out.WriteString(line + "\n")
				continue
			}
			if i+1 >= len(lines) || lines[i+1] != "----" {
				t.Fatalf("%s:%d: a command without ----", path, i+1)
			}
			j := i + 2
			for j < len(lines) && lines[j] != "" {
				j++
			}
			want := strings.Join(lines[i+2:j], "\n")
			got := strings.TrimRight(runMapCommand(t, path, i+1, line), "\n")
			cases++
			if !*rewrite && got != want {
				t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, i+1, line, got, want)
			}
			out.WriteString(line + "\n----\n" + got + "\n")
			i = j - 1
		}
		if cases == 0 {
			t.Errorf("%s: no cases", path)
		}
		if *rewrite {
			if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func runMapCommand(t *testing.T, path string, line int, cmd string) string {
	fields := strings.Fields(cmd)
	if fields[0] != "map" {
		t.Fatalf("%s:%d: unknown command %q", path, line, fields[0])
	}
	args := map[string]string{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("%s:%d: argument %q is not key=value", path, line, f)
		}
		args[k] = v
	}
	num := func(k string) float64 {
		if args[k] == "" {
			return 0
		}
		v, err := strconv.ParseFloat(args[k], 64)
		if err != nil {
			t.Fatalf("%s:%d: %s: %v", path, line, k, err)
		}
		return v
	}
	var fanout []int
	for _, f := range strings.Split(args["fanout"], ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s:%d: fanout: %v", path, line, err)
		}
		fanout = append(fanout, n)
	}
	tb, err := Load(args["testbed"])
	if err != nil {
		return "error: " + err.Error()
	}
	ds := DatasetShape{Name: "d", Nodes: int64(num("nodes")), FeatureDim: int(num("dim"))}
	bs := BatchShape{Batch: int(num("batch")), Fanout: fanout}
	st := Storage{RandReadIOPS: num("iops"), SeqBytesPerS: num("seq"), Source: "testdata"}
	s, err := Map(tb, ds, bs, st)
	if err != nil {
		return "error: " + err.Error()
	}
	again, _ := Map(tb, ds, bs, st)
	if !reflect.DeepEqual(s, again) {
		t.Errorf("%s:%d: Map is not pure: %+v then %+v", path, line, s, again)
	}
	return FormatSettings(s, args["system"])
}

// FormatSettings writes settings as the testdata expects them.
func FormatSettings(s Settings, system string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "emulated %v; features %d B; M_b %d rows, %d B\n", s.Emulated, s.FeatureBytes, s.BatchRows, s.BatchBytes)
	if s.Emulated {
		for _, m := range []struct {
			what string
			m    Memory
		}{{"host", s.Host}, {"device", s.Device}} {
			fmt.Fprintf(&b, "%s: share %.4f → %d B; batches %.2f → %d B\n", m.what, m.m.Share, m.m.ShareBytes, m.m.Batches, m.m.BatchBytes)
		}
		h, d, _ := s.For(system)
		fmt.Fprintf(&b, "%s: host %d B, device %d B\n", system, h, d)
		fmt.Fprintf(&b, "io depth %d; accel %s derived %v; dilation %.4g; epochs %d\n", s.IODepth, s.AccelProfile, s.AccelDerived, s.Dilation, s.Epochs)
	}
	for _, d := range s.Deviations(system) {
		b.WriteString("- " + d + "\n")
	}
	if !s.Emulated {
		b.WriteString("- " + s.EpochsRule + "\n")
	}
	return b.String()
}

// Map refuses inputs it cannot map, naming them.
func TestMapRefuses(t *testing.T) {
	tb, err := Load("gnndrive-icpp24")
	if err != nil {
		t.Fatal(err)
	}
	ok := DatasetShape{Nodes: 100, FeatureDim: 8}
	for _, c := range []struct {
		tb   *Profile
		ds   DatasetShape
		bs   BatchShape
		want string
	}{
		{nil, ok, BatchShape{10, []int{2}}, "no testbed"},
		{tb, DatasetShape{Name: "z", FeatureDim: 8}, BatchShape{10, []int{2}}, `dataset "z" has 0 nodes`},
		{tb, ok, BatchShape{0, []int{2}}, "batch 0"},
		{tb, ok, BatchShape{10, nil}, "fanout []"},
	} {
		if _, err := Map(c.tb, c.ds, c.bs, Storage{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c, err, c.want)
		}
	}
}
