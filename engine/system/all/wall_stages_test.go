package all

import (
	"math"
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/system/systest"
	"outcore/engine/train"
)

// TestStageBreakdownAddsUpForEveryVariant runs every registered variant
// and checks its wall-clock stage breakdown (DESIGN §5, "Stage
// vocabulary"), the same for all, pipelined ones included: each epoch's
// four wall-clock stages — the layers the stage breakdown stacks
// (report's TestStageBreakdownIsWallClock) — add up to within 5 % of its
// epoch time; train is the trainer's own time (train_s); the trainer's
// waits are attributed to sampling or loading where it did either.
func TestStageBreakdownAddsUpForEveryVariant(t *testing.T) {
	for _, v := range train.Variants() {
		t.Run(v.Name, func(t *testing.T) {
			for stage, as := range v.WallStages {
				if as != metrics.StageSample && as != metrics.StageExtract {
					t.Errorf("WallStages: %s counts as %q, want %s or %s", stage, as, metrics.StageSample, metrics.StageExtract)
				}
			}
			cfg := systest.Config(t, v.Name, nil)
			cfg.Epochs = 2
			r := systest.Run(t, cfg)
			for i, e := range r.Epochs {
				t.Logf("epoch %d: epoch_s %.4f wall sample %.4f load %.4f train %.4f stall %.4f; summed stages sample %.4f extract %.4f train %.4f stall %.4f %v",
					i, e.EpochS, e.WallSampleS, e.WallLoadS, e.WallTrainS, e.WallStallS, e.SampleS, e.ExtractS, e.TrainS, e.StallS, e.Stages)
				if e.MetricsVersion < metrics.WallStagesVersion {
					t.Fatalf("epoch %d: metrics_version %d has no wall-clock stages", i, e.MetricsVersion)
				}
				for _, w := range []float64{e.WallSampleS, e.WallLoadS, e.WallTrainS, e.WallStallS} {
					if w < 0 {
						t.Errorf("epoch %d: a negative wall stage %v", i, w)
					}
				}
				if math.Abs(e.WallTrainS-e.TrainS) > 0.05*e.TrainS+0.001 {
					t.Errorf("epoch %d: wall train %.4f s, the trainer's train_s %.4f s", i, e.WallTrainS, e.TrainS)
				}
				if e.WallSampleS+e.WallLoadS == 0 {
					t.Errorf("epoch %d: the trainer never waited on sampling or loading", i)
				}
				if sum := e.WallSampleS + e.WallLoadS + e.WallTrainS + e.WallStallS; math.Abs(sum-e.EpochS) > 0.05*e.EpochS {
					t.Errorf("epoch %d: wall-clock stages add up to %.4f s, epoch_s %.4f s", i, sum, e.EpochS)
				}
			}
		})
	}
}
