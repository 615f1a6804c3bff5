package report

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"outcore/store"
)

func TestParseFilter(t *testing.T) {
	for _, c := range []struct {
		q     string
		terms []Term
		err   string
	}{
		{q: `system=ginex outcome=oom limit<128MiB`, terms: []Term{
			{Key: "system", Op: "=", Value: "ginex"}, {Key: "outcome", Op: "=", Value: "oom"},
			{Key: "limit", Op: "<", Value: "128MiB", Num: 128 << 20}}},
		{q: `  variant~gnn  "paper run" tag=fig9 dim>=128 epoch_s<2.5 state=cancelled`, terms: []Term{
			{Key: "system", Op: "~", Value: "gnn"}, {Text: "paper run"}, {Key: "tag", Op: "=", Value: "fig9"},
			{Key: "dim", Op: ">=", Value: "128", Num: 128}, {Key: "epoch_s", Op: "<", Value: "2.5", Num: 2.5},
			{Key: "state", Op: "=", Value: "cancelled"}}},
		{q: `name="a \"b\" c" limit=none`, terms: []Term{{Key: "name", Op: "=", Value: `a "b" c`}, {Key: "limit", Op: "=", Value: "none"}}},
		{q: ``, terms: nil},
		{q: `colour=red`, err: `unknown key "colour"`},
		{q: `limit<12XB`, err: `limit: "12XB" is not a size`},
		{q: `outcome=melted`, err: `outcome: "melted" is not one of queued, running, done`},
		{q: `dim~12`, err: "dim is a number"},
		{q: `system<ginex`, err: "system takes = or != or ~, not <"},
		{q: `name="open`, err: "unterminated quote"},
		{q: `name=`, err: "name= needs a value"},
		{q: `dim=1.5`, err: `dim: "1.5" is not a whole number`},
		{q: `val>nan`, err: `val: "nan" is not a number`},
	} {
		f, err := ParseFilter(c.q)
		if c.err != "" {
			if err == nil || !errors.Is(err, ErrFilter) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one with %q", c.q, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(f.Terms, c.terms) {
			t.Errorf("%q: %+v, %v; want %+v", c.q, f.Terms, err, c.terms)
		}
	}
}

func TestFilterConditionsAndExperiments(t *testing.T) {
	f, err := ParseFilter(`system=ginex limit<=256MiB tag=paper resnet`)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Cond{{Field: "system", Op: "=", Value: "ginex"}, {Field: "mem_limit", Op: "<=", Value: int64(256 << 20)}, {Field: "mem_limit", Op: ">", Value: int64(0)}}
	if got := f.RunConds(); !reflect.DeepEqual(got, want) {
		t.Errorf("run conds %+v", got)
	}
	e := store.Experiment{ID: 3, Name: "ResNet sweep", Tags: []string{"paper", "fig9"}}
	if !f.MatchExperiment(e, "finished") {
		t.Error("experiment with the tag and the text does not match")
	}
	e.Tags = []string{"draft"}
	if f.MatchExperiment(e, "finished") {
		t.Error("experiment without the tag matches")
	}
	g, _ := ParseFilter(`state!=running id>2`)
	if !g.MatchExperiment(e, "finished") || g.MatchExperiment(e, "running") {
		t.Error("state!=running")
	}
}

func TestSortExperiments(t *testing.T) {
	exps := []store.Experiment{{ID: 1, Name: "b"}, {ID: 2, Name: "a"}, {ID: 3, Name: "c"}}
	if err := SortExperiments(exps, "name"); err != nil || exps[0].Name != "a" || exps[2].Name != "c" {
		t.Errorf("by name: %v %v", exps, err)
	}
	if err := SortExperiments(exps, "-id"); err != nil || exps[0].ID != 3 {
		t.Errorf("by -id: %v %v", exps, err)
	}
	if err := SortExperiments(exps, "colour"); err == nil {
		t.Error("unknown sort key accepted")
	}
}

// FuzzParseFilter: any input parses or fails with ErrFilter, never
// panics, and a parsed query written back parses to the same terms.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`system=ginex outcome=oom limit<128MiB`, `"free text" tag~x`, `name="a \"q\""`, `a!b`, `x==y`, `dim<=5`,
		`limit=none`, `val>0.5e-1`, `"`, `\`, `=`, `name= x`, "tag=\u00a0", `system=ginex"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		p, err := ParseFilter(q)
		if err != nil {
			if !errors.Is(err, ErrFilter) {
				t.Fatalf("%q: error %v does not wrap ErrFilter", q, err)
			}
			return
		}
		back := p.String()
		p2, err := ParseFilter(back)
		if err != nil {
			t.Fatalf("%q written back as %q does not parse: %v", q, back, err)
		}
		if !reflect.DeepEqual(p.Terms, p2.Terms) {
			t.Fatalf("%q → %q: %+v, then %+v", q, back, p.Terms, p2.Terms)
		}
		_ = p.RunConds()
	})
}

func TestSortRuns(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	runs := []store.Run{{ID: 1, Seq: 0, MeanEpochS: f(3)}, {ID: 2, Seq: 1}, {ID: 3, Seq: 2, MeanEpochS: f(1)}, {ID: 4, Seq: 3, MeanEpochS: f(2)}}
	ids := func() string {
		var s []string
		for _, r := range runs {
			s = append(s, strconv.FormatInt(r.ID, 10))
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct{ key, want string }{{"epoch_s", "3,4,1,2"}, {"-epoch_s", "1,4,3,2"}, {"seq", "1,2,3,4"}, {"-seq", "4,3,2,1"}} {
		if err := SortRuns(runs, c.key); err != nil || ids() != c.want {
			t.Errorf("sort by %s: %s (%v), want %s", c.key, ids(), err, c.want)
		}
	}
	if err := SortRuns(runs, "colour"); err == nil {
		t.Error("unknown run sort key accepted")
	}
}
