package studies

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"outcore/experiments/grid"
)

// A study at small scale (the Reproduce page's "small-scale" form): the
// papers' memory limits are shares of a large dataset's features (25 %,
// 60 %), which on the `default` dataset a fresh install has fall below
// what the variants need to start (their floors do not shrink with the
// features: the runtime, the indptr, Ginex's 32 MiB reserve). At small
// scale each of the study's limits is raised to the least share at which
// every variant of the study starts, the model is the lighter one of the
// form's example (2 layers, fanout 10,5, batch 1024), and the study's
// table compares the paper's number at its limit with ours at the raised
// one, saying so. The experiment's grid keeps the limits it ran at, in
// the study's order, so its table maps them back (Rescaled).

// SmallScaleShares are the shares of the features a small-scale study may
// raise a limit to, smallest first.
var SmallScaleShares = []int{25, 30, 40, 50, 60, 75, 100, 125, 150, 200, 300, 400}

// SmallScaleBase is the run configuration of a small-scale study.
func SmallScaleBase() map[string]any {
	return map[string]any{"model": "sage", "layers": 2, "fanout": []int{10, 5}, "batch": 1024, "hidden": 128,
		"epochs": 1, "eval_max_nodes": 1000}
}

// SmallScale is s on a dataset whose features are featureBytes, for
// variants whose floors there are floor(entry) (train.MinMemoryFor): each
// limit raised to the least SmallScaleShares share at or above it that
// holds every variant's floor. ok is false when no share holds them.
func (s Study) SmallScale(featureBytes int64, floor func(entry string) int64) (Study, bool) {
	var need int64
	for _, sys := range s.Systems {
		need = max(need, floor(sys))
	}
	var raisedAll []string
	prev := 0 // the previous raised limit's share: limits stay distinct, in order
	for _, lim := range s.MemLimits {
		want := shareOf(lim)
		raised := ""
		for _, p := range SmallScaleShares {
			if p >= want && featureBytes*int64(p)/100 >= need {
				raised = fmt.Sprintf("%d%%", p)
				break
			}
		}
		if raised == "" && featureBytes > 0 {
			// A dataset whose features are far smaller than the floors
			// (tiny: 1 MiB): the least whole share above them, rounded up
			// to two significant digits ("5800%").
			p := max(int64(want), (100*need+featureBytes-1)/featureBytes)
			raised = fmt.Sprintf("%d%%", roundUp2(p))
		}
		if raised == "" {
			return s, false
		}
		if p := shareOf(raised); p <= prev {
			// two limits raised to one: the next share above the last
			next := int64(0)
			for _, q := range SmallScaleShares {
				if q > prev {
					next = int64(q)
					break
				}
			}
			if next == 0 {
				next = roundUp2(int64(prev) + max(1, int64(prev)/10))
			}
			raised = fmt.Sprintf("%d%%", next)
		}
		prev = shareOf(raised)
		raisedAll = append(raisedAll, raised)
	}
	out := s.Rescaled(raisedAll)
	out.Base, out.Scale = SmallScaleBase(), "small scale"
	return out, true
}

// Rescaled is s with its limits replaced, position by position, by
// limits (an experiment's grid made for s at another scale): the paper's
// points and ratios move with them, and the settings say so. s itself
// when the lists differ in length or are the same.
func (s Study) Rescaled(limits []string) Study {
	if len(limits) != len(s.MemLimits) {
		return s
	}
	to := map[string]string{}
	same := true
	var moved []string
	for i, l := range s.MemLimits {
		to[NormShare(l)] = limits[i]
		if NormShare(l) != NormShare(limits[i]) {
			same = false
			moved = append(moved, fmt.Sprintf("%s → %s", l, limits[i]))
		}
	}
	if same {
		return s
	}
	out := s
	out.MemLimits = append([]string(nil), limits...)
	out.Points = nil
	for _, p := range s.Points {
		p.MemLimit = to[NormShare(p.MemLimit)]
		out.Points = append(out.Points, p)
	}
	out.Ratios = nil
	for _, r := range s.Ratios {
		r.MemLimit = to[NormShare(r.MemLimit)]
		out.Ratios = append(out.Ratios, r)
	}
	note := fmt.Sprintf("small scale: the paper's limits raised to what every variant here starts in (%s of the features); the paper's numbers are at its own limits", strings.Join(moved, ", "))
	out.OurSetting = s.OurSetting + "; " + note
	out.Differ = append(append([]string(nil), s.Differ...), note)
	return out
}

// LimitsOfGrid reads the mem_limit axis of an experiment's grid.
func LimitsOfGrid(grid []byte) []string {
	var g struct {
		Axes struct {
			MemLimit []string `json:"mem_limit"`
		} `json:"axes"`
	}
	if json.Unmarshal(grid, &g) != nil {
		return nil
	}
	return g.Axes.MemLimit
}

// SharesOfBase says whether an experiment's grid resolves its share
// limits against the grid's dataset for every run ("mem_share_of":
// "base", grid.MemShareBase) rather than each run's own, so that a run's
// limit is matched to a study's share at the dataset's feature bytes
// whatever its feature dimension.
func SharesOfBase(gridJSON []byte) bool {
	var g struct {
		MemShareOf string `json:"mem_share_of"`
	}
	return json.Unmarshal(gridJSON, &g) == nil && g.MemShareOf == grid.MemShareBase
}

// NormShare writes a study limit ("60%", " 60 %") as a whole percent
// ("60%"), as report matches runs' limits to it; other words unchanged.
func NormShare(s string) string {
	t := strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64); err == nil && strings.HasSuffix(t, "%") {
		return fmt.Sprintf("%d%%", int64(math.Round(v)))
	}
	return t
}

// shareOf is a "60%" limit's whole percent (0 when it is not a share).
func shareOf(l string) int {
	var p int
	if _, err := fmt.Sscanf(NormShare(l), "%d%%", &p); err != nil {
		return 0
	}
	return p
}

// roundUp2 rounds n up to two significant digits (5734 → 5800).
func roundUp2(n int64) int64 {
	unit := int64(1)
	for n/unit >= 100 {
		unit *= 10
	}
	return (n + unit - 1) / unit * unit
}
