package report

import (
	"strings"
	"testing"
)

// TestClaimVerdict: a claim holds within ±30 % of the paper's number or
// between its range's ends; without both sides' evidence it is not enough
// evidence, without a ratio not measured.
func TestClaimVerdict(t *testing.T) {
	for _, c := range []struct {
		ours           float64
		have, evidence bool
		low, high      float64
		want           string
	}{
		{1.54, true, true, 1.54, 1.54, ClaimHolds},
		{1.54 * 0.71, true, true, 1.54, 1.54, ClaimHolds},
		{1.54 * 0.69, true, true, 1.54, 1.54, ClaimFails},
		{1.54 * 1.29, true, true, 1.54, 1.54, ClaimHolds},
		{1.54 * 1.31, true, true, 1.54, 1.54, ClaimFails},
		{2.0, true, true, 1.86, 2.50, ClaimHolds},
		{1.86 * 0.75, true, true, 1.86, 2.50, ClaimHolds},
		{2.50 * 1.35, true, true, 1.86, 2.50, ClaimFails},
		{1.0, true, false, 1.0, 1.0, ClaimNoEvidence},
		{0, false, true, 1.0, 1.0, ClaimNotMeasured},
		{1.0, true, true, 0, 0, ClaimNotMeasured},
	} {
		if got := ClaimVerdict(c.ours, c.have, c.evidence, c.low, c.high); got != c.want {
			t.Errorf("ClaimVerdict(%.3f, have %v, evidence %v, [%.2f, %.2f]) = %q; want %q", c.ours, c.have, c.evidence, c.low, c.high, got, c.want)
		}
	}
}

// TestMedian: the middle value, or the mean of the middle two; the input
// is left as it was.
func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2}
	if m := median(xs); m != 2 || xs[0] != 3 {
		t.Errorf("median(3,1,2) = %v (input now %v); want 2, input unchanged", m, xs)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median(4,1,3,2) = %v; want 2.5", m)
	}
	if m := median(nil); m != 0 {
		t.Errorf("median() = %v; want 0", m)
	}
}

// TestWriteClaimsSideBySide: claims of the same study measured on two
// datasets are one row each with a column per dataset and testbed, a
// claim missing on one side shows "–", and each column counts what holds
// of what it measured; one condition alone writes nothing.
func TestWriteClaimsSideBySide(t *testing.T) {
	ratio := func(label string, ours float64, have bool) RatioRow {
		r := RatioRow{OursMedian: ours, HaveOurs: have, Evidence: true}
		r.Label, r.MemLimit, r.Paper, r.Low, r.High = label, "25%", "2.00×", 2, 2
		return r
	}
	claim := func(ds, label string, ours float64, have bool) Claim {
		c := Claim{Study: "s1", Paper: "GIDS", Figure: "Fig. 11", Dataset: ds, Testbed: "gids-vldb24", Ratio: ratio(label, ours, have)}
		c.Verdict = ClaimVerdict(ours, have, true, 2, 2)
		return c
	}
	cs := []Claim{
		claim("medium", "window 4 / 0", 2.1, true),
		claim("medium", "window 8 / 0", 1.0, true),
		claim("papers-reach", "window 4 / 0", 1.2, true),
	}
	var b strings.Builder
	if err := WriteClaimsSideBySide(&b, cs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| ours, medium, gids-vldb24 | ours, papers-reach, gids-vldb24 |",
		"| GIDS Fig. 11: window 4 / 0 | 25% | 2.00× | 2.10× **yes** | 1.20× **no** |",
		"| GIDS Fig. 11: window 8 / 0 | 25% | 2.00× | 1.00× **no** | – |",
		"| **hold within ±30 %** | | | 1 of 2 measured | 0 of 1 measured |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("side by side lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := WriteClaimsSideBySide(&b, cs[:2]); err != nil || b.Len() != 0 {
		t.Errorf("one condition wrote %q (%v)", b.String(), err)
	}
}
