package report

// The claims table of docs/REPRODUCTION.md from the data (issue 36 item
// 7): each paper ratio of the study experiments given, the paper's number
// beside the ratio of our sides' medians, its evidence and whether it
// holds within ±30 % (ClaimVerdict), with the count of claims that hold.
// `outcore exp claims` writes it as markdown for pasting there.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"outcore/engine/dataset"
	"outcore/experiments/studies"
	"outcore/store"
)

// ClaimTolerance is how far from the paper's number a claim's ratio may
// lie and still hold: ±30 % (docs/REPRODUCTION.md, "Reproduced").
const ClaimTolerance = 0.30

// Verdicts of a claim (ClaimVerdict).
const (
	ClaimHolds       = "holds"
	ClaimFails       = "does not hold"
	ClaimNoEvidence  = "not enough evidence"
	ClaimNotMeasured = "not measured"
)

// LoadStudyTable compares an experiment made for a reproduction study
// with the paper (CompareStudy): its current runs read with their epochs
// (digests cached in cache, nil: none), at the limits the experiment ran
// at, limits matched as shares of its dataset's feature bytes (the
// dataset's meta in dataDir). ok is false for an experiment made for no
// study.
func LoadStudyTable(ctx context.Context, src Source, cache *DigestCache, dataDir string, e store.Experiment) (StudyTable, bool, error) {
	s, ok := studies.ByExperiment(e.Name)
	if !ok {
		return StudyTable{}, false, nil
	}
	// at the limits the experiment ran at (a small-scale one raised them)
	s = s.Rescaled(studies.LimitsOfGrid(e.Grid))
	cmp, err := LoadComparison(ctx, src, cache, e.ID)
	if err != nil {
		return StudyTable{}, false, err
	}
	var feat int64
	var dim int
	if m, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(dataDir), e.Dataset)); err == nil {
		feat, dim = m.FeatureBytes(), m.FeatureDim
	}
	if studies.SharesOfBase(e.Grid) {
		dim = 0 // every run's limit is a share of the dataset's own features
	}
	return CompareStudy(s, cmp.Runs(), feat, dim), true, nil
}

// ClaimVerdict says whether a measured ratio reproduces the paper's
// [low, high] (low == high: one number): it holds when it lies within
// ClaimTolerance of one of the paper's numbers or between them, that is
// in [low×0.7, high×1.3]. Without a ratio it is not measured; with one
// whose sides lack MinEvidence quiet warm runs each, not enough evidence
// (whatever the value).
func ClaimVerdict(ours float64, have, evidence bool, low, high float64) string {
	switch {
	case !have:
		return ClaimNotMeasured
	case !evidence:
		return ClaimNoEvidence
	case low <= 0 || high < low:
		return ClaimNotMeasured // the paper gives no number to compare
	case ours >= low*(1-ClaimTolerance) && ours <= high*(1+ClaimTolerance):
		return ClaimHolds
	}
	return ClaimFails
}

// Claim is one paper ratio of a study experiment beside ours.
type Claim struct {
	Study, Paper, Figure string
	Experiment           int64
	Dataset, Testbed     string
	Ratio                RatioRow
	Verdict              string
	// Within is whether the value lies within the tolerance whatever the
	// evidence (a verdict of not enough evidence says which way it leans).
	Within bool
}

// Claims lists the claims of the study tables, in the order given; each
// table comes with its experiment (for its id, dataset and testbed).
func Claims(tables []StudyTable, exps []store.Experiment) []Claim {
	var out []Claim
	for i, t := range tables {
		e := exps[i]
		tb := ""
		if t.Study.ID != "" {
			tb, _ = t.Study.Testbed()
		}
		if v := gridTestbed(e.Grid); v != "" {
			tb = v
		}
		for _, r := range t.Ratios {
			c := Claim{Study: t.Study.ID, Paper: t.Study.Paper.Name, Figure: t.Study.Figure, Experiment: e.ID,
				Dataset: e.Dataset, Testbed: tb, Ratio: r}
			c.Verdict = ClaimVerdict(r.OursMedian, r.HaveOurs, r.Evidence, r.Low, r.High)
			c.Within = ClaimVerdict(r.OursMedian, r.HaveOurs, true, r.Low, r.High) == ClaimHolds
			out = append(out, c)
		}
	}
	return out
}

// gridTestbed is the testbed a grid's top level names ("" when none).
func gridTestbed(grid []byte) string {
	var g struct {
		Testbed string `json:"testbed"`
	}
	if err := json.Unmarshal(grid, &g); err != nil {
		return ""
	}
	return g.Testbed
}

// ClaimCounts counts claims by verdict.
func ClaimCounts(cs []Claim) map[string]int {
	n := map[string]int{}
	for _, c := range cs {
		n[c.Verdict]++
	}
	return n
}

// WriteClaimsMarkdown writes the claims as a markdown table (paper |
// ours: median ratio, n and evidence of each side | verdict within
// ±30 %), and after it the count of claims that hold.
func WriteClaimsMarkdown(w io.Writer, column string, cs []Claim) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| paper: claim | here | paper | ours, %s | evidence (num; den) | within ±%.0f %%? |\n", column, 100*ClaimTolerance)
	b.WriteString("|---|---|---:|---:|---|---|\n")
	for _, c := range cs {
		r := c.Ratio
		ours := oursWords(r)
		verdict := c.Verdict
		switch verdict {
		case ClaimHolds:
			verdict = "**yes**"
		case ClaimFails:
			verdict = "**no**"
		case ClaimNoEvidence:
			lean := "outside"
			if c.Within {
				lean = "inside"
			}
			verdict = fmt.Sprintf("not enough evidence (%s ±%.0f %%)", lean, 100*ClaimTolerance)
		}
		here := fmt.Sprintf("%s, `%s`, %s (exp %d)", r.MemLimit, c.Dataset, c.Testbed, c.Experiment)
		fmt.Fprintf(&b, "| %s %s: %s | %s | %s | %s | %s; %s | %s |\n", mdCell(c.Paper), mdCell(c.Figure), mdCell(r.Label),
			mdCell(here), mdCell(r.Paper), ours, r.NumSide.Words(), r.DenSide.Words(), verdict)
	}
	n := ClaimCounts(cs)
	fmt.Fprintf(&b, "\n%d of %d claims hold within ±%.0f %% (%s); %d do not, %d lack the evidence (%d quiet warm runs a side), %d not measured.\n",
		n[ClaimHolds], len(cs), 100*ClaimTolerance, column, n[ClaimFails], n[ClaimNoEvidence], MinEvidence, n[ClaimNotMeasured])
	_, err := io.WriteString(w, b.String())
	return err
}

// ClaimCondition is where a claim was measured: its dataset and testbed
// ("medium, gids-vldb24").
func (c Claim) ClaimCondition() string {
	if c.Testbed == "" {
		return c.Dataset
	}
	return c.Dataset + ", " + c.Testbed
}

// claimKey is a claim as the paper states it, whatever it was measured
// on: its study, ratio and limit (a share of the features, the same on
// every dataset).
func (c Claim) claimKey() string {
	return c.Study + "\x00" + c.Ratio.Label + "\x00" + c.Ratio.MemLimit
}

// ClaimConditions are the conditions the claims were measured under, in
// the order first seen.
func ClaimConditions(cs []Claim) []string {
	var out []string
	for _, c := range cs {
		if k := c.ClaimCondition(); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// WriteClaimsSideBySide writes the claims measured under more than one
// condition (dataset and testbed) as one row per claim and one column
// per condition (issue 37 item 4: a claim's result on `medium` beside
// the one on a graph shaped like the paper's), each cell the ratio and
// its verdict, then each column's count of claims that hold. With one
// condition it writes nothing.
func WriteClaimsSideBySide(w io.Writer, cs []Claim) error {
	conds := ClaimConditions(cs)
	if len(conds) < 2 {
		return nil
	}
	var keys []string
	at := map[string]map[string]Claim{}
	first := map[string]Claim{}
	for _, c := range cs {
		k := c.claimKey()
		if at[k] == nil {
			at[k] = map[string]Claim{}
			keys = append(keys, k)
			first[k] = c
		}
		if _, seen := at[k][c.ClaimCondition()]; !seen { // the first experiment given wins
			at[k][c.ClaimCondition()] = c
		}
	}
	var b strings.Builder
	b.WriteString("| paper: claim | limit | paper |")
	for _, cond := range conds {
		fmt.Fprintf(&b, " ours, %s |", mdCell(cond))
	}
	b.WriteString("\n|---|---|---:|")
	b.WriteString(strings.Repeat("---:|", len(conds)))
	b.WriteString("\n")
	holds := make([]int, len(conds))
	measured := make([]int, len(conds))
	for _, k := range keys {
		f := first[k]
		fmt.Fprintf(&b, "| %s %s: %s | %s | %s |", mdCell(f.Paper), mdCell(f.Figure), mdCell(f.Ratio.Label), mdCell(f.Ratio.MemLimit), mdCell(f.Ratio.Paper))
		for i, cond := range conds {
			c, ok := at[k][cond]
			if !ok {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %s |", claimCell(c))
			if c.Verdict != ClaimNotMeasured {
				measured[i]++
			}
			if c.Verdict == ClaimHolds {
				holds[i]++
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("| **hold within ±30 %** | | |")
	for i := range conds {
		fmt.Fprintf(&b, " %d of %d measured |", holds[i], measured[i])
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// oursWords is our ratio in a table cell: its value ("–" without one),
// and whether a side ran out of memory.
func oursWords(r RatioRow) string {
	ours := "–"
	if r.HaveOurs {
		ours = fmt.Sprintf("%.2f×", r.OursMedian)
	}
	if r.NumOOM || r.DenOOM {
		ours += " (a side OOM)"
	}
	return ours
}

// claimCell is a claim's ratio and verdict in one table cell.
func claimCell(c Claim) string {
	v := oursWords(c.Ratio)
	switch c.Verdict {
	case ClaimHolds:
		return v + " **yes**"
	case ClaimFails:
		return v + " **no**"
	case ClaimNoEvidence:
		return v + " (not enough evidence)"
	}
	return v
}

// mdCell keeps a markdown table cell on one line and its pipes escaped.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// median is the median of xs (the mean of the middle two for an even
// count); xs is not changed.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
