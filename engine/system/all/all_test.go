package all

import (
	"math"
	"slices"
	"strings"
	"testing"

	"outcore/engine/system/systest"
	"outcore/engine/train"
)

// TestVariantsTrainTheSameModel trains the same model on the same data with
// every registered variant. Under its InOrder options a variant feeds the
// trainer the same mini-batches in the same order with the same feature
// rows as the reference pipeline, so its losses equal the reference's
// exactly: any wrong row served by a cache would change them. With its
// default options a variant that reorders batches must land in the same
// accuracy band, and every variant must need the same bytes per epoch. A
// variant that samples its own mini-batches (OwnSampling) must train to
// other losses and still learn.
// pooledDefaults are the variants whose defaults, as their artifacts do,
// sample one epoch's mini-batches and train that pool every epoch
// (diskgnn's sample_pool=reuse); their InOrder options sample every epoch.
var pooledDefaults = map[string]bool{"diskgnn": true}

func TestVariantsTrainTheSameModel(t *testing.T) {
	ref := systest.Reference(t)
	refLoss := ref.Losses()
	best := ref.Summary.BestValAcc
	if best < 0.5 { // 4 classes: chance is 0.25
		t.Fatalf("reference reaches only %.3f validation accuracy: the test data teaches nothing", best)
	}
	// sameBytes: the reference's batches and bytes, lookups reported, and
	// the run's scratch files gone; pooled: every epoch trains the
	// reference's epoch 0 again (a reused sample pool)
	sameBytes := func(t *testing.T, r systest.Result, pooled bool) {
		systest.NoScratchLeft(t, r.Start.System)
		for i, e := range r.Epochs {
			want := ref.Epochs[i]
			if pooled {
				want = ref.Epochs[0]
			}
			if e.BytesNeeded != want.BytesNeeded || e.Batches != want.Batches {
				t.Fatalf("epoch %d: %d batches, %d bytes needed; reference %d, %d (pooled %v)", i, e.Batches, e.BytesNeeded, want.Batches, want.BytesNeeded, pooled)
			}
			var lookups int64
			for _, tc := range e.Tiers {
				lookups += tc.Lookups
			}
			if lookups == 0 {
				t.Fatalf("epoch %d reports no feature lookups: %+v", i, e.Tiers)
			}
		}
	}
	tested := 0
	for _, v := range train.Variants() {
		if v.Name == train.ReferenceName {
			continue
		}
		tested++
		if v.OwnSampling {
			// Its own mini-batches: the losses must differ from the
			// reference's (a variant that silently fed the reference's
			// batches would not be what it claims), and it must still
			// learn well above chance.
			t.Run(v.Name+"/own-sampling", func(t *testing.T) {
				r := systest.Run(t, systest.Config(t, v.Name, nil))
				got := r.Losses()
				for i := range got {
					if got[i] == refLoss[i] {
						t.Fatalf("epoch %d: train loss %v equals the reference's: not its own sample", i, got[i])
					}
				}
				if acc := r.Summary.BestValAcc; acc < 0.5 { // 4 classes: chance is 0.25
					t.Fatalf("best validation accuracy %.3f (reference %.3f)", acc, best)
				}
				if len(r.Start.Deviations) == 0 {
					t.Fatal("no deviations recorded in the start record")
				}
			})
			continue
		}
		if v.InOrder != nil {
			t.Run(v.Name+"/in-order", func(t *testing.T) {
				r := systest.Run(t, systest.Config(t, v.Name, v.InOrder))
				if got := r.Losses(); !slices.Equal(got, refLoss) {
					t.Fatalf("train losses %v, reference %v", got, refLoss)
				}
				sameBytes(t, r, false)
				if len(r.Start.Deviations) == 0 {
					t.Fatal("no deviations recorded in the start record")
				}
			})
			if len(v.InOrder) == 0 {
				continue // the defaults were just run
			}
		}
		t.Run(v.Name, func(t *testing.T) {
			r := systest.Run(t, systest.Config(t, v.Name, nil))
			if d := math.Abs(r.Summary.BestValAcc - best); d > 0.05 {
				t.Fatalf("best validation accuracy %.3f, reference %.3f", r.Summary.BestValAcc, best)
			}
			sameBytes(t, r, pooledDefaults[v.Name])
			if len(r.Start.Deviations) == 0 {
				t.Fatal("no deviations recorded in the start record")
			}
		})
	}
	if tested == 0 {
		t.Fatal("no variant besides the reference is registered")
	}
}

// TestVariantsDescribeThemselves checks every registered variant's
// description: a summary, a paper (but for the reference), options with
// help and a known type.
func TestVariantsDescribeThemselves(t *testing.T) {
	for _, v := range train.Variants() {
		if v.Summary == "" || v.Order <= 0 || (v.Paper == "" && v.Name != train.ReferenceName) {
			t.Errorf("%s: summary %q, paper %q, order %d", v.Name, v.Summary, v.Paper, v.Order)
		}
		for _, o := range v.Options {
			if o.Help == "" || o.Default == "" {
				t.Errorf("%s: option %s lacks help or default", v.Name, o.Key)
			}
		}
	}
}

// TestUnknownOptionNamesKnownKeys: an option key the variant does not
// declare is a configuration error listing the keys it has.
func TestUnknownOptionNamesKnownKeys(t *testing.T) {
	for _, v := range train.Variants() {
		cfg := systest.Config(t, v.Name, map[string]string{"nosuchkey": "1"})
		err := cfg.Validate()
		if err == nil {
			t.Fatalf("%s accepted option nosuchkey", v.Name)
		}
		for _, k := range v.OptionKeys() {
			if !strings.Contains(err.Error(), k) {
				t.Errorf("%s: error %q does not name option %s", v.Name, err, k)
			}
		}
	}
}
