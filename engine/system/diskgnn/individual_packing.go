package diskgnn

// DiskGNN §5.2 and Fig. 14's baseline, "naive individual packing" (Fig.
// 6a): each graph sample's features are gathered on their own, with small
// random reads of the feature table, and written to its chunk. A feature
// shared by many samples is read once per sample, and every row read costs
// whole blocks: the read amplification and the repeated reads that batched
// packing (packing.go) avoids by sweeping the table once in partitions.
// Option packing=individual selects it, to measure Fig. 14's speedup; the
// memory tiers, which the artifact fills from batched packing's partitions,
// are then filled by a sweep of their own (FillSweep).

import (
	"context"
	"fmt"
	"time"
)

// individualPack packs every target by reading its rows through readRows
// (random row reads of the feature table, buf rows at a time: buf holds
// at least one row) and writing them to its chunk.
func individualPack(ctx context.Context, nodes, rowBytes int64, buf []byte, targets []packTarget, pio packIO,
	readRows func(ctx context.Context, ids []int64, dst []byte) error) (packStats, error) {
	var st packStats
	per := int64(len(buf)) / rowBytes
	if rowBytes <= 0 || per < 1 {
		return st, fmt.Errorf("diskgnn: individual packing of %d-byte rows in a %d-byte buffer", rowBytes, len(buf))
	}
	var ids []int64
	var sinceSync int64
	for t := range targets {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		tg := targets[t]
		for a := 0; a < len(tg.IDs); a += int(per) {
			b := min(a+int(per), len(tg.IDs))
			ids = ids[:0]
			for _, v := range tg.IDs[a:b] {
				if v < 0 || int64(v) >= nodes {
					return st, fmt.Errorf("diskgnn: packing target %d: id %d outside [0,%d)", t, v, nodes)
				}
				ids = append(ids, int64(v))
			}
			stage := buf[:int64(b-a)*rowBytes]
			t0 := time.Now()
			if err := readRows(ctx, ids, stage); err != nil {
				return st, fmt.Errorf("diskgnn: individual packing: read rows of chunk %d: %w", t, err)
			}
			st.ReadTime += time.Since(t0)
			st.BytesRead += int64(len(stage))
			if err := pio.writeRows(tg, t, a, b, rowBytes, stage, &st, &sinceSync); err != nil {
				return st, err
			}
		}
	}
	err := pio.finish(&st)
	return st, err
}
