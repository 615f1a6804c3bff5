package kit

// Sampling alone (GNNDrive §3 and Fig. 2, the "-only" runs): "only the
// sample stage is performed per training epoch", so that its time can be
// set against the same sampling with extraction and training competing
// for the memory (the "-all" runs). A variant with option stages=sample
// starts its samplers as usual and hands the pool to DrainSamples instead
// of its extractors and trainer.

import (
	"context"
	"fmt"

	"outcore/engine/train"
)

// StagesOption is the variant option choosing the stages an epoch runs.
const StagesOption = "stages"

// StagesHelp is the option's help text.
const StagesHelp = "all: sample, extract and train; sample: only the sample stage runs each epoch, nothing is extracted or trained (GNNDrive Fig. 2's '-only' runs: sampling time without the other stages' memory)"

// Stages binds the stages option: sampleOnly is true for "sample".
func (b *Binder) Stages(sampleOnly *bool) {
	b.declare(StagesOption, train.OptEnum, "all", StagesHelp, []string{"all", "sample"}, rule{}, func(s string) error {
		switch s {
		case "all", "sample":
			*sampleOnly = s == "sample"
			return nil
		}
		return fmt.Errorf("%q, want all or sample", s)
	})
}

// SampleOnlyDeviations is the deviation of a sample-only run, none for
// another: the start of a variant's deviations.
func SampleOnlyDeviations(sampleOnly bool) []string {
	if sampleOnly {
		return []string{SampleOnlyDeviation}
	}
	return nil
}

// SampleOnlyDeviation is the deviation a sample-only run records.
const SampleOnlyDeviation = "stages=sample: only the sample stage ran (GNNDrive Fig. 2 '-only'); nothing was extracted or trained, so the epoch's loss and accuracy are the untrained model's"

// DrainSamples takes every mini-batch the pool samples, returning each
// dispatch token, and discards it; it returns the pool's first error or
// an error when fewer than n batches came.
func DrainSamples(ctx context.Context, pool *SamplerPool, n int) error {
	got := 0
	for range pool.Out {
		pool.Release()
		got++
	}
	if err := pool.Err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("sampling stopped after %d of %d batches", got, n)
	}
	return nil
}
