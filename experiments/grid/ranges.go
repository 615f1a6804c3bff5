package grid

// The bounds of a run's general settings, held at creation by every grid
// (form, JSON API, grid file) and by `outcore train` on the command line:
// a value the engine would take but that cannot make a meaningful run
// ("weight_decay": 1e308, "lr": 1e300, "--mem-limit 1e-30", which
// truncated to no limit at all) is refused, naming the key and its range.
// Variant options ("options") have their bounds in their variant's option
// declarations (engine/train).

import (
	"fmt"
	"strings"

	"outcore/engine/vocab"
	"outcore/internal/units"
)

// Bounds of the floating-point settings.
const (
	MaxLR          = 10.0
	MaxWeightDecay = 1.0
	MaxEvalNodes   = 1 << 30
	MaxQueueDepth  = 4096
)

// intRange is the bound of one whole-number setting.
type intRange struct {
	key    string
	get    func(*vocab.Config) (int, bool) // value, and whether it is set
	lo, hi int
}

// floatRange is the bound of one number setting; loOpen/hiOpen exclude
// the ends.
type floatRange struct {
	key            string
	get            func(*vocab.Config) float64
	lo, hi         float64
	loOpen, hiOpen bool
}

func always(v int) (int, bool) { return v, true }

var intRanges = []intRange{
	{"epochs", func(c *vocab.Config) (int, bool) { return always(c.Epochs) }, 1, MaxEpochs},
	{"hidden", func(c *vocab.Config) (int, bool) { return always(c.Hidden) }, 1, MaxHidden},
	{"heads", func(c *vocab.Config) (int, bool) { return always(c.Heads) }, 1, MaxHeads},
	{"layers", func(c *vocab.Config) (int, bool) { return always(c.Layers) }, 0, MaxLayers},
	{"batch", func(c *vocab.Config) (int, bool) { return always(c.Batch) }, 0, MaxBatch},
	{"eval_batch", func(c *vocab.Config) (int, bool) { return always(c.EvalBatch) }, 0, MaxBatch},
	{"eval_every", func(c *vocab.Config) (int, bool) { return always(c.EvalEvery) }, 0, MaxEpochs},
	{"eval_max_nodes", func(c *vocab.Config) (int, bool) { return always(c.EvalMaxNodes) }, -1, MaxEvalNodes},
	{"train_max_nodes", func(c *vocab.Config) (int, bool) { return always(c.TrainMaxNodes) }, 0, MaxEvalNodes},
	{"queue_depth", func(c *vocab.Config) (int, bool) { return always(c.QueueDepth) }, 0, MaxQueueDepth},
	{"warmup_epochs", func(c *vocab.Config) (int, bool) {
		if c.WarmupEpochs == nil {
			return 0, false
		}
		return *c.WarmupEpochs, true
	}, 0, MaxEpochs - 1},
}

var floatRanges = []floatRange{
	{key: "lr", get: func(c *vocab.Config) float64 { return c.LR }, lo: 0, hi: MaxLR, loOpen: true},
	{key: "weight_decay", get: func(c *vocab.Config) float64 { return c.WeightDecay }, lo: 0, hi: MaxWeightDecay},
	{key: "dropout", get: func(c *vocab.Config) float64 { return c.Dropout }, lo: 0, hi: 1, hiOpen: true},
}

// RangeProblems checks the general settings of cfg that given reports as
// set (a grid's keys; every key on the command line) against their
// bounds, one problem per setting out of range, naming the key and the
// range.
func RangeProblems(cfg vocab.Config, given func(key string) bool) []Problem {
	var ps ProblemList
	for _, r := range intRanges {
		v, set := r.get(&cfg)
		if set && given(r.key) && (v < r.lo || v > r.hi) {
			if r.key == "epochs" && v == 0 && cfg.PaperTestbed() {
				continue // the mapping's epochs (DESIGN §13)
			}
			if r.key == "epochs" && v == 0 {
				ps.Add(r.key, "epochs: 0 asks for a paper testbed's epochs, but the run's testbed is %q; set epochs from %d to %d or a paper's testbed", testbedName(cfg.Testbed), r.lo, r.hi)
				continue
			}
			ps.Add(r.key, "%s: %d is not a whole number from %d to %d", r.key, v, r.lo, r.hi)
		}
	}
	for _, r := range floatRanges {
		v := r.get(&cfg)
		if !given(r.key) {
			continue
		}
		below := v < r.lo || r.loOpen && v == r.lo
		above := v > r.hi || r.hiOpen && v == r.hi
		if below || above || v != v {
			ps.Add(r.key, "%s: %g is not a number from %s to %s", r.key, v, bound(r.lo, r.loOpen), bound(r.hi, r.hiOpen))
		}
	}
	if given("mem_limit") && cfg.MemLimit != "" {
		if msg := limitSyntaxProblem(cfg.MemLimit); msg != "" {
			ps.Add("mem_limit", "mem_limit: %s", msg)
		}
	}
	return ps
}

func testbedName(s string) string {
	if s == "" {
		return "this-host"
	}
	return s
}

func bound(v float64, open bool) string {
	if open {
		return fmt.Sprintf("%g (excluded)", v)
	}
	return fmt.Sprintf("%g", v)
}

// MemLimitProblem checks a memory limit as a grid's is checked, once the
// dataset's feature bytes are known (for a percentage): a size (not
// "none") must come to at least MinMemLimit, so that "1e-30", which
// truncates to 0 bytes, is not taken for no limit. "" when it is fine.
func MemLimitProblem(s string, featureBytes int64) string {
	if msg := limitSyntaxProblem(s); msg != "" {
		return msg
	}
	t := strings.TrimSpace(s)
	if t == "" || strings.EqualFold(t, "none") {
		return ""
	}
	v, err := units.ParseMemLimit(t, featureBytes)
	if err != nil {
		return err.Error()
	}
	if v < MinMemLimit {
		return fmt.Sprintf("%q is %s, below %s; no run starts in that", s, units.Bytes(v), units.Bytes(MinMemLimit))
	}
	return ""
}
