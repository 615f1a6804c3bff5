package systest

import (
	"slices"
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/train"
)

// Configuration is one option set of a variant for SameModel: what it
// changes, and Check (nil: none) for its first epoch.
type Configuration struct {
	Name  string
	Opts  map[string]string
	Check func(t *testing.T, e metrics.EpochRecord)
}

// SameModel runs a variant that trains the reference's batches in order
// with its default options (config(t, nil)) and then with each of cases,
// and fails t unless every case's losses equal the default's exactly:
// whatever a configuration changes (caches, passes, pipelines), the same
// rows reach the same batches. Each epoch of every run, the default's
// too, must serve every input row from exactly one of tiers, looked up in
// that order (CheckTierChain), and pass every; onDefault checks each of
// the default run's epochs.
func SameModel(t *testing.T, config func(t testing.TB, opts map[string]string) train.Config, tiers []string, every, onDefault func(*testing.T, metrics.EpochRecord), cases []Configuration) {
	t.Helper()
	base := Run(t, config(t, nil))
	want := base.Losses()
	for _, e := range base.Epochs {
		CheckTierChain(t, e, tiers...)
		every(t, e)
		onDefault(t, e)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r := Run(t, config(t, c.Opts))
			if got := r.Losses(); !slices.Equal(got, want) {
				t.Fatalf("losses %v, default %v", got, want)
			}
			for _, e := range r.Epochs {
				CheckTierChain(t, e, tiers...)
				every(t, e)
			}
			if c.Check != nil {
				c.Check(t, r.Epochs[0])
			}
		})
	}
}
