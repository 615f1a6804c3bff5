package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"outcore/gpu"
	"outcore/store"

	"outcore/engine/dataset"
	"outcore/experiments/grid"
)

// TestGridCountDoesNotWrap: 4 variants × repeat 2^62 used to wrap to 0
// runs, pass the cap and make Cells allocate without bound.
func TestGridCountDoesNotWrap(t *testing.T) {
	g := &grid.Grid{Axes: grid.Axes{System: []string{"a", "b", "c", "d"}, Repeat: 1 << 62}}
	if n := g.Count(); n != math.MaxInt {
		t.Fatalf("Count = %d, want math.MaxInt", n)
	}
	if c := g.Cells(); c != nil {
		t.Fatalf("Cells of an oversized grid: %d cells", len(c))
	}
	g.Axes.Repeat = math.MaxInt
	g.Axes.Fanout = [][]int{{1}, {2}}
	if n := g.Count(); n != math.MaxInt {
		t.Fatalf("Count = %d", n)
	}
	_, err := grid.ParseGrid([]byte(`{"dataset":"tiny","axes":{"system":["a","b","c","d"],"repeat":4611686018427387904}}`))
	if !errors.Is(err, grid.ErrInvalid) || !strings.Contains(err.Error(), "repeats: 4611686018427387904 is not a whole number from 1 to 100") ||
		!strings.Contains(err.Error(), "more runs than can be counted") {
		t.Fatalf("ParseGrid: %v", err)
	}
}

// internalName matches the internal field names messages must not use.
var internalName = regexp.MustCompile(`axes\.|\[\d+\]`)

// TestCreateListsEveryProblemInWords: the JSON API is held to the form's
// limits, and every problem is listed, in words.
func TestCreateListsEveryProblemInWords(t *testing.T) {
	h := newHarness(t, nil)
	gridText := `{"name":"` + strings.Repeat("n", 101) + `","dataset":"tiny","epochs":5000,"hidden":1000000000,"heads":65,
		"options":{"cache":"1"},
		"axes":{"system":["fake","fake"],"fanout":[[2000,5],[1,1,1,1,1,1,1],"10,5","10,5"],"batch_size":[64,64],
		        "feature_dim":[32,32],"mem_limit":["1GiB","1GiB","1e30"],"model":["gcn","gcn"],"repeat":101}}`
	_, err := h.m.Create(context.Background(), []byte(gridText))
	ps := grid.ProblemsOf(err)
	want := []string{
		"name: 101 characters, at most 100",
		"epochs: 5000 is not a whole number from 1 to 1000",
		"hidden: 1000000000 is not a whole number from 1 to 8192",
		"heads: 65 is not a whole number from 1 to 64",
		`variants: "fake" is listed twice`,
		`fanouts: "2000,5": each layer's fanout is a whole number from 1 to 1000`,
		`fanouts: "1,1,1,1,1,1,1" has 7 layers, at most 6`,
		`fanouts: "10,5" is listed twice`,
		"batch sizes: 64 is listed twice",
		"feature dimensions: 32 is listed twice",
		`memory limits: "1gib" is listed twice`,
		`memory limits: "1e30" is above the largest memory limit, 1 PiB`,
		`models: "gcn" is listed twice`,
		"repeats: 101 is not a whole number from 1 to 100",
		`options: fake has no option "cache" (its options are `,
	}
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Message
		if internalName.MatchString(p.Message) {
			t.Errorf("message uses an internal field name: %q", p.Message)
		}
	}
	all := strings.Join(msgs, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("missing problem %q in:\n%s", w, all)
		}
	}
	if !errors.Is(err, grid.ErrInvalid) || !strings.Contains(err.Error(), "epochs: 5000") || !strings.Contains(err.Error(), "hidden: 1000000000") {
		t.Errorf("error text: %v", err)
	}
}

// TestGridNumbersAtInt64Bounds: every numeric input of a grid at and past
// the int64 limits is refused with a message, never wrapped or panicking.
func TestGridNumbersAtInt64Bounds(t *testing.T) {
	h := newHarness(t, nil)
	const maxI, minI, over = "9223372036854775807", "-9223372036854775808", "9223372036854775808"
	for _, tc := range []struct{ grid, want string }{
		{`{"dataset":"tiny","system":"fake","axes":{"repeat":` + maxI + `}}`, "repeats: " + maxI + " is not"},
		{`{"dataset":"tiny","system":"fake","axes":{"repeat":` + over + `}}`, "repeats: want a whole number"},
		{`{"dataset":"tiny","system":"fake","axes":{"repeat":` + minI + `}}`, "repeats: " + minI},
		{`{"dataset":"tiny","system":"fake","axes":{"batch_size":[` + maxI + `]}}`, "batch sizes: " + maxI},
		{`{"dataset":"tiny","system":"fake","axes":{"batch_size":[` + over + `]}}`, "batch sizes: want"},
		{`{"dataset":"tiny","system":"fake","axes":{"feature_dim":[` + minI + `]}}`, "feature dimensions: " + minI},
		{`{"dataset":"tiny","system":"fake","axes":{"fanout":[[` + maxI + `]]}}`, "fanouts: \"" + maxI + "\""},
		{`{"dataset":"tiny","system":"fake","axes":{"fanout":["` + over + `"]}}`, "fanouts: \"" + over + "\" is not a fanout"},
		{`{"dataset":"tiny","system":"fake","axes":{"mem_limit":[` + maxI + `]}}`, "above the largest memory limit"},
		{`{"dataset":"tiny","system":"fake","axes":{"mem_limit":[` + over + `]}}`, "above the largest memory limit"},
		{`{"dataset":"tiny","system":"fake","mem_limit":"` + minI + `"}`, "negative"},
		{`{"dataset":"tiny","system":"fake","epochs":` + maxI + `}`, "epochs: " + maxI},
		{`{"dataset":"tiny","system":"fake","epochs":` + over + `}`, "epochs: " + over + " is not a value of the right type"},
		{`{"dataset":"tiny","system":"fake","hidden":` + minI + `}`, "hidden: " + minI},
		{`{"dataset":"tiny","system":"fake","seed":` + over + `}`, "seed: " + over},
		{`{"dataset":"tiny","system":"fake","eval_max_nodes":` + minI + `}`, "eval_max_nodes"},
		{`{"dataset":"tiny","system":"fake","queue_depth":` + maxI + `}`, "queue_depth"},
		{`{"dataset":"tiny","system":"fake","warmup_epochs":` + maxI + `}`, "warmup_epochs: " + maxI},
	} {
		_, err := h.m.Create(context.Background(), []byte(tc.grid))
		if !errors.Is(err, grid.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("grid %s:\n  err %v\n  want it to say %q", tc.grid, err, tc.want)
		}
	}
	// The largest values the limits allow are accepted.
	if _, err := h.m.Create(context.Background(), []byte(`{"dataset":"tiny","system":"fake","epochs":1000,"seed":`+maxI+`,
		"axes":{"repeat":100,"batch_size":[1048576],"fanout":[[1000,-1,1,1,1,1]]}}`)); err != nil {
		t.Fatalf("grid at the limits: %v", err)
	}
}

// TestNewGridRoundTrip: the form's grid reads back through ParseGrid into
// the same grid, and Check finds the same problems as Create.
func TestNewGridRoundTrip(t *testing.T) {
	h := newHarness(t, nil)
	g, err := grid.NewGrid("x", "tiny", map[string]any{"epochs": 2}, grid.Axes{System: []string{"fake"}, MemLimit: []string{"64MiB", "none"},
		BatchSize: []int{64}, Fanout: [][]int{{5, 5}, {-1, -1}}, Model: []string{"sage"}, Repeat: 2})
	if err != nil {
		t.Fatal(err)
	}
	if ps := h.m.Check(g, nil); len(ps) != 0 {
		t.Fatalf("problems %v", ps)
	}
	back, err := grid.ParseGrid(g.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if back.Count() != 8 || back.Name != "x" || string(back.Base["epochs"]) != "2" || grid.FormatFanout(back.Axes.Fanout[1]) != "-1,-1" {
		t.Fatalf("read back %+v", back)
	}
	e, err := h.m.Create(context.Background(), g.JSON())
	if err != nil || e.Counts.Total != 8 {
		t.Fatalf("create: %v %+v", err, e.Counts)
	}
	// A dataset about to be generated is checked as if it existed.
	cfg, _ := dataset.Preset("tiny")
	pend := dataset.Meta{Name: "soon", Nodes: cfg.Nodes, FeatureDim: cfg.FeatureDim, Source: dataset.Source{Kind: "generator", Generator: &cfg}}
	g2, _ := grid.NewGrid("", "soon", map[string]any{"epochs": 1}, grid.Axes{System: []string{"fake"}, MemLimit: []string{"2MiB"}, Repeat: 1})
	ps := h.m.Check(g2, map[string]dataset.Meta{"soon": pend})
	if len(ps) != 1 || ps[0].Field != grid.AxisMemLimit || !strings.Contains(ps[0].Message, "needs to start on soon") {
		t.Fatalf("pending dataset: %v", ps)
	}
	b, _ := json.Marshal(ps)
	if !strings.Contains(string(b), `"field":"mem_limit"`) {
		t.Fatalf("problem JSON %s", b)
	}
}

// TestCreateRefusesWhatCannotRunHere: a grid asking the trainer for a GPU
// on a host without one is refused at creation, naming the key and the
// alternatives (it was accepted and every run failed later); and a Slurm
// grid whose node data directory is the shared data directory itself
// (where every node would write over the server's datasets) is refused.
func TestCreateRefusesWhatCannotRunHere(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.GPU = gpu.NoGPU{}
		o.Executors = []string{store.ExecutorLocal, "slurm"}
	})
	_, err := h.m.Create(context.Background(), []byte(`{"dataset":"tiny","epochs":1,"device":"cuda","axes":{"system":["fake"]}}`))
	if ps := grid.ProblemsOf(err); len(ps) != 1 || ps[0].Field != "device" || !strings.Contains(ps[0].Message, `"cuda" asks for a GPU and this host has none`) {
		t.Errorf("device cuda without a GPU: %v", err)
	}
	if _, err := h.m.Create(context.Background(), []byte(`{"dataset":"tiny","epochs":1,"device":"auto","axes":{"system":["fake"]}}`)); err != nil {
		t.Errorf("device auto without a GPU: %v", err)
	}
	g := fmt.Sprintf(`{"dataset":"tiny","epochs":1,"executor":"slurm","slurm":{"node_data_dir":%q},"axes":{"system":["fake"]}}`, h.dataDir)
	_, err = h.m.Create(context.Background(), []byte(g))
	if ps := grid.ProblemsOf(err); len(ps) == 0 || !strings.Contains(err.Error(), "is the data directory itself") {
		t.Errorf("node data directory = the data directory: %v", err)
	}
}
