package alipg

// Ali+PG's feature cache (Ginex §5.1: "a PaGraph-style [27] cache is used
// for the feature cache"; §2.3: PaGraph "caches feature vectors of nodes
// with a descending order of out-neighbor count" and is "static"). The
// rows of the fcRows nodes of highest out-degree (ties to the lower id,
// engine/cache's TopByScore) are read once before training into memory
// off the Go heap, with a direct-addressed slot per node
// (cache.StaticCache), and never change; the gather copies a hit from
// there and faults a miss from the features mapping.

import (
	"fmt"
	"slices"

	"outcore/engine/cache"
	"outcore/engine/system/kit"
	"outcore/internal/osutil"
)

// featureCache is the static cache: slot per node and the rows.
type featureCache struct {
	c    *cache.StaticCache
	rows []byte // row slot s at rows[s*rowBytes:]
	row  int64
}

// buildFeatureCache caches the rows of the n nodes of highest out-degree,
// read from the mapping with threads goroutines into rows (n × rowBytes
// bytes, off the heap). It returns nil for n == 0.
func buildFeatureCache(outDeg []int64, n int64, feats *osutil.Mapping, rowBytes int64, rows []byte, threads int) (*featureCache, kit.MappedGather, error) {
	if n <= 0 {
		return nil, kit.MappedGather{}, nil
	}
	top := cache.TopByScore(outDeg, int(n))
	slices.Sort(top) // read in file order
	sc, err := cache.NewStaticCache(int64(len(outDeg)), top)
	if err != nil {
		return nil, kit.MappedGather{}, fmt.Errorf("ali+pg: feature cache: %w", err)
	}
	g, err := kit.GatherMapped(feats, rowBytes, sc.Nodes(), rows, threads, nil)
	if err != nil {
		return nil, g, fmt.Errorf("ali+pg: fill the feature cache: %w", err)
	}
	return &featureCache{c: sc, rows: rows[:int64(len(top))*rowBytes], row: rowBytes}, g, nil
}

// split sorts the positions of ids into hits (copied into dst's rows from
// the cache here) and misses (returned, with their ids, for the mapping).
func (f *featureCache) split(ids []int64, dst []byte, missAt, missIDs []int64) ([]int64, []int64) {
	missAt, missIDs = missAt[:0], missIDs[:0]
	for i, v := range ids {
		if f != nil {
			if s := f.c.Slot(v); s >= 0 {
				copy(dst[int64(i)*f.row:int64(i+1)*f.row], f.rows[int64(s)*f.row:])
				continue
			}
		}
		missAt = append(missAt, int64(i))
		missIDs = append(missIDs, v)
	}
	return missAt, missIDs
}

// scatterMisses moves the miss rows, gathered into dst's first len(missAt)
// rows, to their places: last first, so no row is overwritten before it
// moves (missAt ascends, so missAt[k] ≥ k).
func scatterMisses(dst []byte, missAt []int64, row int64) {
	for k := len(missAt) - 1; k >= 0; k-- {
		if at := missAt[k]; at != int64(k) {
			copy(dst[at*row:(at+1)*row], dst[int64(k)*row:(int64(k)+1)*row])
		}
	}
}
