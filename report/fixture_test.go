package report

import (
	"outcore/engine/metrics"
)

// fixtureRuns is a 3 variants × 3 memory limits × 2 repeats grid with
// pyg+ out of memory at the smallest limit and one failed gnndrive run.
func fixtureRuns() []RunData {
	var runs []RunData
	id := int64(0)
	for vi, v := range []string{"pyg+", "ginex", "gnndrive"} {
		for li, lim := range []int64{256 << 20, 512 << 20, 1 << 30} {
			for rep := 0; rep < 2; rep++ {
				id++
				r := RunData{ID: id, System: v, MemLimit: lim, Dim: 128, Batch: 1024, Model: "sage", Fanout: "10,5", Repeat: rep, Status: RunDone}
				if v == "pyg+" && li == 0 {
					r.Status = RunOOM
				}
				if v == "gnndrive" && li == 1 && rep == 1 {
					r.Status = RunFailed
				}
				if r.Status == RunDone {
					var eps []metrics.EpochRecord
					for e := 0; e < 3; e++ {
						t := float64(3-vi)*(1+float64(2-li)*0.5) + float64(rep)*0.1 + float64(e)*0.01
						// Rows from the device are the device tier's;
						// each costs (4-li-vi) rows' worth of bytes
						// (the read amplification), rows of 512 B.
						devRows := int64(700 - 100*li - 50*vi)
						amp := float64(4 - li - vi)
						feat := int64(float64(devRows*512) * amp)
						topo := int64(64<<10) * int64(vi+1)
						eps = append(eps, metrics.EpochRecord{
							MetricsVersion:   metrics.EpochMetricsVersion,
							FeatureBytesRead: feat, TopologyBytesRead: topo, RowsFromDevice: devRows,
							SampleBusyS: t * 0.1, SampleWaitS: t * 0.3, ExtractBusyS: t * 0.2, ExtractWaitS: t * 0.6,
							Type: "epoch", Epoch: e, Warmup: e == 0, EpochS: t,
							SampleS: t * 0.2, ExtractS: t * 0.5, TrainS: t * 0.3, StallS: t * 0.1,
							Stages:  map[string]float64{"inspect_s": 0.05 * float64(vi)},
							Batches: 10,
							Tiers: map[string]metrics.TierCount{
								"cpu":    {Lookups: 1000, Hits: int64(300 + 100*li + 50*vi)},
								"device": {Lookups: int64(700 - 100*li - 50*vi), Hits: int64(700 - 100*li - 50*vi)},
							},
							BytesNeeded: 1000 * 512, BytesRead: feat + topo + 4096,
							ReadAmplification: amp,
							ValAcc:            0.5 + 0.1*float64(e) + 0.01*float64(vi), TestAcc: 0.48 + 0.1*float64(e),
							TrainLoss: 1.0 / float64(e+1), WallS: float64(e+1) * t,
						})
					}
					r.Digest = DigestEpochs(eps)
				}
				runs = append(runs, r)
			}
		}
	}
	return runs
}
